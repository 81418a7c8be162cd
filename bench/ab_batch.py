#!/usr/bin/env python3
"""Two clef builds compared on the same work, alternating: ab_batch.py A/clef B/clef [ROUNDS] [N]
[--cache-b].

On a shared 2-core machine one build measured now and the other later differ by ±20 % from the
machine alone; rounds that alternate A, B, A, B against one clef mock share its moods, and the
medians compare. Each round runs `clef batch` over N tickets (default 40,000) at -j 16 against
`clef mock --latency 0`, from a file to a file (one thread), and reports decisions per second and
CPU (user + system) per decision. A is a build tree's BUILD/cli/clef (its clef-mock serves both);
B any clef binary, such as a copy of an earlier build's. With --cache-b, B runs with --cache in a
fresh directory each round (every lookup a miss): give the same binary twice to measure what the
cache costs a batch.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from wrk_bench import QUESTION, start_mock, stop, write_tickets


def one_run(clef, url, tickets, out, n, extra=()):
    if os.path.exists(out):
        os.remove(out)
    command = [clef, "batch", tickets, "-o", out, "--host", url, "--choice", QUESTION, "-j", "16",
               *extra]
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{clef} exited with {os.waitstatus_to_exitcode(status)}")
    return n / wall, (usage.ru_utime + usage.ru_stime) / n * 1e6


def main():
    arguments = [a for a in sys.argv[1:] if a != "--cache-b"]
    cache_b = len(arguments) != len(sys.argv) - 1
    if len(arguments) < 2:
        sys.exit(__doc__)
    builds = arguments[0:2]
    labels = [builds[0], builds[1] + (" --cache" if cache_b else "")]
    if labels[0] == labels[1]:
        labels[1] += " (B)"
    rounds = int(arguments[2]) if len(arguments) > 2 else 6
    n = int(arguments[3]) if len(arguments) > 3 else 40000
    mock, url = start_mock(os.path.dirname(os.path.dirname(os.path.abspath(builds[0]))), 0)
    try:
        with tempfile.TemporaryDirectory() as work:
            tickets = os.path.join(work, "tickets.jsonl")
            write_tickets(tickets, n)
            results = {label: [] for label in labels}
            for r in range(rounds):
                for which, (build, label) in enumerate(zip(builds, labels)):
                    extra = ()
                    if which == 1 and cache_b:
                        extra = ("--cache", os.path.join(work, f"cache-{r}"))
                    rate, cpu = one_run(build, url, tickets, os.path.join(work, "out.jsonl"), n,
                                        extra)
                    if extra:  # gone before the next run: its writeback would take their CPU
                        shutil.rmtree(extra[1], ignore_errors=True)
                    results[label].append((rate, cpu))
                    print(f"round {r} {label}: {rate:8.0f}/s {cpu:6.1f} µs/decision", flush=True)
            for label, runs in results.items():
                print(f"{label}: median {statistics.median(x[0] for x in runs):8.0f}/s "
                      f"{statistics.median(x[1] for x in runs):6.1f} µs/decision")
    finally:
        stop(mock)


if __name__ == "__main__":
    main()
