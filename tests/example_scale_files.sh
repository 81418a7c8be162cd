#!/usr/bin/env bash
# The README's scale files as a user would run them, here with no cluster: examples/slurm-array.sh
# (its bash syntax, its #SBATCH lines, then each of the four array tasks run as Slurm would,
# with SLURM_ARRAY_* set and clef on PATH, against clef mock as the node's Ollama) and
# examples/k8s-indexed-job.yaml (parsed; the Job's shard count, the pods' command run locally
# with JOB_COMPLETION_INDEX 0..3 and /data a temporary directory, against clef mock as
# Workers AI). Each ends with clef merge: every ticket answered exactly once.
#
#   example_scale_files.sh BUILD_DIR EXAMPLES_DIR
set -euo pipefail
build="$(cd "$1" && pwd)"
examples="$(cd "$2" && pwd)"
work="$(mktemp -d)"
mocks=()
trap 'for m in "${mocks[@]}"; do kill "$m" 2>/dev/null || true; done; rm -rf "$work"' EXIT
source "$(dirname "$0")/start_mock.sh"
mkdir -p "$work/bin"
ln -s "$build/cli/clef" "$work/bin/clef"
export PATH="$work/bin:$PATH"
tickets="$(wc -l < "$examples/tickets.jsonl")"

# --- Slurm ---------------------------------------------------------------------------------
bash -n "$examples/slurm-array.sh"
array="$(sed -n 's/^#SBATCH --array=\([0-9]*-[0-9]*\)$/\1/p' "$examples/slurm-array.sh")"
[ "$array" = "0-3" ] || { echo "slurm: no #SBATCH --array=0-3 line"; exit 1; }
grep -q '^#SBATCH --output=out/' "$examples/slurm-array.sh" ||
  { echo "slurm: the task log is not under out/"; exit 1; }
mkdir -p "$work/slurm"
start_mock "$work" "$build/cli/clef-mock"
mocks+=("$mock")
(
  cd "$work/slurm"
  cp "$examples/tickets.jsonl" tickets.jsonl
  cp "$examples/ticket-questions.json" questions.json
  mkdir -p out  # as the file's header says: before sbatch
  for task in 0 1 2 3; do
    SLURM_ARRAY_TASK_ID=$task SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=3 \
      SLURM_ARRAY_TASK_STEP=1 SLURM_ARRAY_TASK_COUNT=4 OLLAMA_HOST="$url" \
      bash "$examples/slurm-array.sh" > "out/clef-$task.log" 2>&1 ||
      { cat "out/clef-$task.log"; echo "slurm: task $task failed"; exit 1; }
  done
  clef merge out/routed.*.jsonl -o routed.jsonl
  lines="$(wc -l < routed.jsonl)"
  ids="$(sed 's/^{"id":\("[^"]*"\|[0-9]*\).*/\1/' routed.jsonl | sort -u | wc -l)"
  [ "$lines" -eq "$tickets" ] && [ "$ids" -eq "$tickets" ] ||
    { echo "slurm: $lines lines, $ids ids for $tickets tickets"; exit 1; }
  echo "slurm: 4 tasks, $tickets tickets merged, every one once"
)

# --- Kubernetes ----------------------------------------------------------------------------
# The pods' command: the folded block after `args:` (`- >-`), joined as YAML joins it.
command="$(awk '/^ *- >-$/{f=1; next} f && /^ *[a-z]+:/{exit} f{printf "%s ", $0}' \
  "$examples/k8s-indexed-job.yaml" | tr -s ' ' | sed 's/^ //; s/ $//')"
completions="$(sed -n 's/^  completions: \([0-9]*\).*/\1/p' "$examples/k8s-indexed-job.yaml")"
# Parsed as Kubernetes would where PyYAML is installed (.ci/run installs python3-yaml): an
# Indexed batch/v1 Job whose --shards is its completions, credentials from secrets, and the
# same command as read above.
if python3 -c 'import yaml' 2> /dev/null; then
  python3 - "$examples/k8s-indexed-job.yaml" "$command" <<'PY'
import sys, yaml
job = yaml.safe_load(open(sys.argv[1]))
assert job["kind"] == "Job" and job["apiVersion"] == "batch/v1", "not a batch/v1 Job"
spec = job["spec"]
assert spec["completionMode"] == "Indexed", "not an Indexed Job"
container = spec["template"]["spec"]["containers"][0]
assert container["command"] == ["sh", "-c"], "the command is not sh -c"
args = " ".join(container["args"][0].split())
assert args == sys.argv[2], "the command read is not YAML's: " + args
shards = args.split("--shards ")[1].split()[0]
assert int(shards) == spec["completions"], "--shards is not the Job's completions"
secrets = {e["name"] for e in container["env"] if "secretKeyRef" in e.get("valueFrom", {})}
assert {"CLOUDFLARE_API_TOKEN", "CLOUDFLARE_ACCOUNT_ID"} <= secrets, "credentials not from secrets"
PY
  echo "k8s: the Job's YAML parsed and checked"
else
  echo "k8s: the Job's YAML not parsed (python3-yaml is not installed)"
fi
[ "$completions" -eq 4 ] || { echo "k8s: $completions completions"; exit 1; }
start_mock "$work" "$build/cli/clef-mock" --profile workers-ai --token k8s-token
mocks+=("$mock")
data="$work/data"
mkdir -p "$data"
cp "$examples/tickets.jsonl" "$data/tickets.jsonl"
cp "$examples/ticket-questions.json" "$data/questions.json"
# The pod's command, with the volume at $data and the mock as Workers AI's API.
local_command="${command//\/data/$data} --host $url"
for index in 0 1 2 3; do
  JOB_COMPLETION_INDEX=$index CLOUDFLARE_ACCOUNT_ID=acc9 CLOUDFLARE_API_TOKEN=k8s-token \
    sh -c "$local_command" > "$work/pod-$index.log" 2>&1 ||
    { cat "$work/pod-$index.log"; echo "k8s: pod $index failed"; exit 1; }
done
clef merge "$data"/out/routed.*.jsonl -o "$data/routed.jsonl"
lines="$(wc -l < "$data/routed.jsonl")"
[ "$lines" -eq "$tickets" ] || { echo "k8s: $lines lines for $tickets tickets"; exit 1; }
echo "k8s: 4 pods, $tickets tickets merged, every one once"

# --- The image the Job names ----------------------------------------------------------------
# examples/Dockerfile builds with the README's own package lines (no container runtime here).
dockerfile="$examples/Dockerfile"
readme="$examples/../README.md"
while IFS= read -r line; do
  grep -qxF "RUN $line" "$dockerfile" || { echo "Dockerfile: not the README's line: $line"; exit 1; }
done < <(awk '/^### Debian packages/{f=1} /^### From source/{f=0}
              f && (/^apt-get update/ || /^dpkg-buildpackage/){print}' "$readme")
grep -q '^ && apt-get install -y --no-install-recommends ca-certificates /tmp/packages/clef_\*\.deb' \
  "$dockerfile" || { echo "Dockerfile: does not install the clef package"; exit 1; }
echo "image: examples/Dockerfile builds with the README's package lines"
