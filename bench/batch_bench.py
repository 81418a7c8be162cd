#!/usr/bin/env python3
"""clef batch benchmark: throughput, client CPU per decision and peak memory, against the test
suite's fake System One server on 127.0.0.1, with a curl loop and a Python requests pool measured
in the same run. Usage: python3 bench/batch_bench.py [--build build] [--quick]

Client CPU is user+system time of the client's process tree (getrusage of children); the server
runs in its own process and is not counted.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

QUESTION = ("team: Which team should handle this ticket? | billing=Payments and refunds | "
            "technical=Bugs and integrations | other=None of the above")
CRITERIA = {"billing": "Payments and refunds", "technical": "Bugs and integrations",
            "other": "None of the above"}


def start_server(build, latency_ms):
    server = subprocess.Popen([os.path.join(build, "cli", "clef-mock"),
                               "--latency", str(latency_ms)],
                              stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    line = server.stdout.readline().strip()
    if not line.startswith("http://127.0.0.1:"):
        sys.exit("fake server did not start: " + line)
    return server, line.strip()


def write_tickets(directory, n):
    tickets = os.path.join(directory, f"tickets_{n}.jsonl")
    bodies = os.path.join(directory, f"bodies_{n}.txt")
    with open(tickets, "w") as t, open(bodies, "w") as b:
        for i in range(n):
            state = {"ticket": f"I was charged twice for order {i}. Please refund the extra payment."}
            t.write(json.dumps({"id": f"T{i}", "state": state}) + "\n")
            body = {"model": "clef-flash", "state": state,
                    "questions": {"team": {"type": "choice",
                                           "instructions": "Which team should handle this ticket?",
                                           "criteria": CRITERIA}}}
            b.write(json.dumps(body, separators=(",", ":")) + "\n")
    return tickets, bodies


def measure(command, **kwargs):
    """Runs command; returns (wall seconds, CPU seconds of its process tree, its own peak RSS MiB).

    os.wait4 gives the rusage of this child alone (with the descendants it waited for), so one
    run's peak memory is not confused with another's."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, **kwargs)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        sys.exit(f"{command[0]} exited with {child.returncode}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0


def clef_batch(build, host, tickets, out, concurrency=16):
    if os.path.exists(out):
        os.remove(out)
    return measure([os.path.join(build, "cli", "clef"), "batch", tickets, "-o", out, "--host", host,
                    "--choice", QUESTION, "-j", str(concurrency)], stderr=subprocess.DEVNULL)


def count_lines(path):
    with open(path) as f:
        return sum(1 for _ in f)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--quick", action="store_true", help="smaller runs (a CI smoke test)")
    args = parser.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    n = 400 if args.quick else 2000
    big = 10000 if args.quick else 100000
    with tempfile.TemporaryDirectory() as work:
        tickets, bodies = write_tickets(work, n)
        out = os.path.join(work, "out.jsonl")

        print(f"## 20 ms simulated model time, {n} tickets, --concurrency 16")
        server, host = start_server(args.build, 20)
        try:
            wall, cpu, _ = clef_batch(args.build, host, tickets, out)
            assert count_lines(out) == n
            ideal = 16 / 0.020
            print(f"clef batch: {n / wall:.0f} decisions/s = {n / wall / ideal:.1%} of the ideal "
                  f"{ideal:.0f}/s (16 / 20 ms)")
        finally:
            server.terminate()
            server.wait()

        print(f"\n## 0 ms model time (the client is the bottleneck), {n} tickets, 16 in flight")
        server, host = start_server(args.build, 0)
        try:
            rows = []
            wall, cpu, _ = clef_batch(args.build, host, tickets, out)
            rows.append(("clef batch -j 16", wall, cpu))
            curl = (f"xargs -P 16 -d '\\n' -I{{}} curl -sS -o /dev/null {host}/v1/systemone "
                    f"-H 'Content-Type: application/json' -d {{}} < {bodies}")
            wall, cpu, _ = measure(["bash", "-c", curl])
            rows.append(("xargs -P 16 curl (the card's command)", wall, cpu))
            wall, cpu, _ = measure([sys.executable, os.path.join(here, "python_requests_pool.py"),
                                    host + "/v1/systemone", bodies, "16"])
            rows.append(("Python requests.Session pool of 16", wall, cpu))
            clef_cpu = rows[0][2] / n
            clef_rate = n / rows[0][1]
            print(f"{'client':40} {'decisions/s':>12} {'CPU µs/decision':>16} {'CPU vs clef':>12} {'rate vs clef':>13}")
            for name, wall, cpu in rows:
                per = cpu / n
                print(f"{name:40} {n / wall:12.0f} {per * 1e6:16.0f} {per / clef_cpu:11.1f}x {n / wall / clef_rate:12.2f}x")

            print(f"\n## peak memory of clef batch, {n} vs {big} tickets (0 ms)")
            big_tickets, _ = write_tickets(work, big)
            _, _, rss_small = clef_batch(args.build, host, tickets, out)
            _, _, rss_big = clef_batch(args.build, host, big_tickets, out)
            assert count_lines(out) == big
            print(f"{n} tickets: {rss_small:.1f} MiB peak RSS; {big} tickets: {rss_big:.1f} MiB "
                  f"({rss_big / rss_small:.2f}x)")
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
