#!/usr/bin/env python3
"""Peak memory of `clef batch --dedupe` against the same run without it, on N unique states,
against the test suite's fake System One server on 127.0.0.1. The difference over N is what
dedupe keeps per unique state. Usage: python3 bench/dedupe_memory.py [--build build] [-n 100000]

Peak RSS is the child's own ru_maxrss (os.wait4), so the two runs are measured alike.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def start_server(build):
    server = subprocess.Popen([os.path.join(build, "cli", "clef-mock")],
                              stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    line = server.stdout.readline().strip()
    if not line.startswith("http://127.0.0.1:"):
        sys.exit("fake server did not start: " + line)
    return server, line.strip()


def peak_rss_kib(command):
    child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("clef batch failed: " + child.stderr.read().decode())
    return usage.ru_maxrss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("-n", type=int, default=100_000)
    args = parser.parse_args()
    clef = os.path.join(args.build, "cli", "clef")
    server, url = start_server(args.build)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            tickets = os.path.join(tmp, "unique.jsonl")
            with open(tickets, "w") as t:
                for i in range(args.n):
                    state = {"ticket": f"Ticket {i}: I was charged twice. Please refund."}
                    t.write(json.dumps({"id": f"T{i}", "state": state}) + "\n")
            base = [clef, "batch", tickets, "--host", url, "-j", "16", "--overwrite",
                    "--yes-no", "refund: Does the customer ask for a refund?"]
            plain = peak_rss_kib(base + ["-o", os.path.join(tmp, "plain.jsonl")])
            dedupe = peak_rss_kib(base + ["-o", os.path.join(tmp, "dedupe.jsonl"), "--dedupe"])
    finally:
        server.terminate()
        server.wait()
    per_state = (dedupe - plain) * 1024 / args.n
    print(f"unique states: {args.n}")
    print(f"peak RSS without --dedupe: {plain / 1024:.1f} MiB")
    print(f"peak RSS with --dedupe:    {dedupe / 1024:.1f} MiB ({dedupe / plain:.2f}x)")
    print(f"dedupe cost: {per_state:.0f} bytes per unique state")


if __name__ == "__main__":
    main()
