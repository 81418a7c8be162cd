#!/usr/bin/env python3
"""clef merge's memory: shards of N items made by clef batch --shard against clef-mock, then
padded so each result line weighs what a big answer would; clef merge's peak RSS against the
shards' bytes, for a few N and line sizes. Memory should follow the number of ids (the index),
not the bytes of the lines.

Usage: python3 bench/merge_memory.py [--build build] [--quick]"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from mock_process import start_mock, stop


def make_shards(build, url, directory, items, padding, shards=4):
    tickets = os.path.join(directory, f"tickets_{items}.jsonl")
    with open(tickets, "w") as f:
        for i in range(items):
            f.write(json.dumps({"id": f"T{i}", "state": f"ticket {i}"}) + "\n")
    outputs = []
    for k in range(shards):
        out = os.path.join(directory, f"routed_{items}_{padding}.{k}.jsonl")
        subprocess.run([os.path.join(build, "cli", "clef"), "batch", tickets, "-o", out,
                        "--overwrite", "--host", url, "--yes-no", "urgent: Is it urgent?",
                        "-j", "16", "--shard", f"{k}/{shards}"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if padding:
            with open(out) as f:
                lines = [json.loads(line) for line in f]
            with open(out, "w") as f:
                for line in lines:
                    line["padding"] = "x" * padding
                    f.write(json.dumps(line) + "\n")
        outputs.append(out)
    return outputs


def peak_kb(pid, exe):
    """VmHWM of `pid` once it runs `exe` (0 before). wait4's ru_maxrss would count the copy of
    this Python process the fork made before exec: after padding the shards here, that copy is
    bigger than merge."""
    try:
        if os.readlink(f"/proc/{pid}/exe") != exe:
            return 0
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def merge(build, shards, out):
    exe = os.path.realpath(os.path.join(build, "cli", "clef"))
    started = time.perf_counter()
    child = subprocess.Popen([exe, "merge", *shards, "-o", out, "--overwrite"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    while child.poll() is None:
        peak = max(peak, peak_kb(child.pid, exe))
        time.sleep(0.002)
    if child.returncode != 0:
        sys.exit("clef merge failed")
    return time.perf_counter() - started, peak / 1024.0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    cases = [(20000, 0), (20000, 2000), (100000, 0), (100000, 300)]
    if args.quick:
        cases = [(5000, 0), (5000, 2000)]
    server, url = start_mock(args.build)
    try:
        with tempfile.TemporaryDirectory() as directory:
            print(f"{'items':>8} {'shard MB':>9} {'peak RSS MB':>12} {'RSS/shards':>11} {'s':>6}")
            for items, padding in cases:
                shards = make_shards(args.build, url, directory, items, padding)
                size = sum(os.path.getsize(s) for s in shards) / 1e6
                seconds, rss = merge(args.build, shards, os.path.join(directory, "merged.jsonl"))
                print(f"{items:>8} {size:>9.1f} {rss:>12.1f} {rss / size:>11.2f} {seconds:>6.2f}")
    finally:
        stop(server)


if __name__ == "__main__":
    main()
