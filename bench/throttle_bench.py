#!/usr/bin/env python3
"""clef batch against servers that push back, in one run:

1. sparse 503s: 2,000 tickets, a server that takes 20 ms, -j 16, once with no faults and once
   with 1 request in 50 answered 503 with Retry-After: 0 (bad luck, not load). A lone 503
   should cost its item a retry, not the host its throughput: the ratio of the two rates.
2. a server at its capacity: clef mock --capacity 2 --latency 50 (40 answers a second at most),
   400 tickets at -j 8: the rate against 40/s, and the share of requests refused.
3. a token bucket: clef mock --rate-limit 20, 700 tickets at -j 16: the rate against what the
   bucket allows in that time, and the share refused.

Requests the server saw are counted from its --log; each refused request is sent again, so
refused = requests - tickets.

Usage: python3 bench/throttle_bench.py [--build build] [--quick]"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from mock_process import start_mock, stop


def tickets(directory, n):
    path = os.path.join(directory, f"tickets_{n}.jsonl")
    with open(path, "w") as f:
        for i in range(n):
            f.write(json.dumps({"id": f"T{i}", "state": f"ticket {i}: charged twice"}) + "\n")
    return path


def run(build, directory, n, jobs, *mock_flags):
    """(seconds, decisions/s, requests the server saw, lines written) of one clef batch."""
    log = os.path.join(directory, "mock.log.jsonl")
    if os.path.exists(log):
        os.remove(log)
    server, url = start_mock(build, "--log", log, *mock_flags)
    out = os.path.join(directory, "out.jsonl")
    if os.path.exists(out):
        os.remove(out)
    try:
        started = time.perf_counter()
        done = subprocess.run([os.path.join(build, "cli", "clef"), "batch", tickets(directory, n),
                               "-o", out, "--host", url, "--yes-no", "urgent: Is it urgent?",
                               "-j", str(jobs)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        seconds = time.perf_counter() - started
    finally:
        stop(server)
    if done.returncode != 0:
        sys.exit(f"clef batch exited {done.returncode}: {done.stderr[-500:]}")
    with open(log) as f:
        requests = sum(1 for _ in f)
    with open(out) as f:
        lines = sum(1 for _ in f)
    return seconds, n / seconds, requests, lines


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--quick", action="store_true", help="smaller runs (a CI smoke test)")
    args = parser.parse_args()
    scale = 0.25 if args.quick else 1.0
    with tempfile.TemporaryDirectory() as directory:
        n = int(2000 * scale)
        _, clean, _, _ = run(args.build, directory, n, 16, "--latency", "20")
        _, faulty, requests, lines = run(args.build, directory, n, 16, "--latency", "20",
                                         "--fail-rate", "503:0.02", "--retry-after", "0")
        ideal = 16 / 0.020
        print(f"sparse 503s, {n} tickets, 20 ms, -j 16: no faults {clean:.1f}/s "
              f"({clean / ideal:.2f} of the ideal {ideal:.0f}/s); 1 in 50 answered 503 "
              f"Retry-After: 0 {faulty:.1f}/s = {faulty / clean:.2f} x the run without faults "
              f"({requests - n} refused, {lines} lines)")

        n = int(400 * scale)
        seconds, rate, requests, lines = run(args.build, directory, n, 8, "--capacity", "2",
                                             "--latency", "50")
        print(f"capacity 2 x 50 ms (40/s), {n} tickets, -j 8: {rate:.1f}/s = "
              f"{rate / 40:.1%} of 40/s; {requests - n} of {requests} requests refused "
              f"({(requests - n) / requests:.1%})")

        n = int(700 * scale)
        seconds, rate, requests, lines = run(args.build, directory, n, 16, "--rate-limit", "20")
        allowed = 20 * seconds + 20  # the bucket's rate over the run, plus its first second's burst
        print(f"token bucket 20/s, {n} tickets, -j 16: {rate:.1f}/s in {seconds:.1f} s = "
              f"{n / allowed:.1%} of what the bucket allows; {requests - n} of {requests} requests "
              f"refused ({(requests - n) / requests:.1%})")


if __name__ == "__main__":
    main()
