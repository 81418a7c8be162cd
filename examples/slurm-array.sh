#!/usr/bin/env bash
# clef batch split over a Slurm job array: four tasks, each deciding its shard of the same input.
# Slurm sets SLURM_ARRAY_TASK_ID, _MIN, _MAX, _STEP and _COUNT; `--shard auto --shards 4` reads
# them: the whole array 0-3 is shards 0 to 3, and an array of fewer tasks (a rerun) takes each
# task id as its shard's number. Make out/ first (Slurm opens each task's log there before the
# script runs: without it the task fails before clef starts), submit, then merge once every task
# has ended:
#   mkdir -p out && sbatch examples/slurm-array.sh
#   clef merge out/routed.*.jsonl -o routed.jsonl     # exit 10 names the shards to run again:
#   sbatch --array=2 examples/slurm-array.sh          # e.g. only shard 2, as merge says
#SBATCH --job-name=clef-route
#SBATCH --array=0-3
#SBATCH --cpus-per-task=2
#SBATCH --time=02:00:00
#SBATCH --output=out/clef-%a.log
set -euo pipefail
# Each task asks its own model server (one Ollama per GPU node here): OLLAMA_HOST from the node.
# --resume: a task run again keeps what it already wrote.
clef batch tickets.jsonl -q questions.json -m clef-flash \
  --shard auto --shards 4 --resume -o "out/routed.$SLURM_ARRAY_TASK_ID.jsonl"
