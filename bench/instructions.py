#!/usr/bin/env python3
"""Instructions per decision, counted by valgrind (callgrind): the yardstick that does not move
with the machine's minute.

  python3 bench/instructions.py [--build build]        (valgrind: apt-get install -y valgrind)

wrk_bench.py's CPU times move ±20 % from one run to the next on a shared 2-core machine, more
than most changes to clef are worth; an instruction count moves by about 1 %. Each program runs
under callgrind twice against one `clef mock` at 0 ms, 16 in flight, with N and 2N decisions; the
difference over N is what one more decision costs, start-up and set-up left out:

- libcurl_floor: libcurl alone posting the card's body (the floor under any libcurl client);
- decide_all_bench submit: the library, 16 chains of Client::submit — its loop thread alone
  (the main thread only builds the requests, the application's work);
- clef batch -j 16: plain, with --cache (a fresh directory: every lookup a miss) and with -v
  (stderr discarded); every thread.

Only user-space instructions are counted: the system calls (the same sends and receives for all)
are not, nor is time. Under valgrind OpenSSL finds no SHA extensions, so --cache's SHA-256s count
about five times what they cost on a machine that has them. Read it with wrk_bench.py, not
instead of it: that one measures what the issue's targets say, this one whether a change did
what it meant to.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wrk_bench import QUESTION, start_mock, stop, write_tickets  # noqa: E402


def total_instructions(path):
    """The Ir total of one callgrind output file."""
    out = subprocess.run(["callgrind_annotate", "--auto=no", "--threshold=100", path],
                         capture_output=True, text=True, check=True).stdout
    match = re.search(r"^\s*([\d,]+) \([^)]*\)\s+PROGRAM TOTALS", out, re.M)
    if not match:
        sys.exit("no total in " + path)
    return int(match.group(1).replace(",", ""))


def counted(command, out, thread=None):
    """Runs command under callgrind; its instructions (of thread THREAD alone, when given)."""
    subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
                    *(["--separate-threads=yes"] if thread else []), *command],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return total_instructions(f"{out}-{thread:02d}" if thread else out)


def per_decision(make_command, work, name, n, thread=None):
    small = counted(make_command(n), os.path.join(work, f"{name}.{n}"), thread)
    large = counted(make_command(2 * n), os.path.join(work, f"{name}.{2 * n}"), thread)
    return (large - small) / n


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("-n", type=int, default=4000, help="decisions in the smaller run")
    args = parser.parse_args()
    n = args.n
    bench = os.path.join(args.build, "bench")
    clef = os.path.join(args.build, "cli", "clef")
    with tempfile.TemporaryDirectory() as work:
        for count in (n, 2 * n):
            write_tickets(os.path.join(work, f"tickets.{count}.jsonl"), count)
        mock, url = start_mock(args.build, 0)
        try:
            def batch(extra):
                def command(count):
                    out = os.path.join(work, "out.jsonl")
                    for stale in glob.glob(out + "*"):
                        os.remove(stale)
                    cache = os.path.join(work, f"cache-directory.{count}")
                    flags = [a.replace("CACHE", cache) for a in extra]
                    return [clef, "batch", os.path.join(work, f"tickets.{count}.jsonl"), "-o", out,
                            "--host", url, "--choice", QUESTION, "-j", "16", *flags]
                return command

            rows = [
                ("libcurl multi alone (the floor)", per_decision(
                    lambda c: [os.path.join(bench, "libcurl_floor"), url + "/v1/systemone",
                               str(c), "16"], work, "floor", n)),
                ("library: submit, 16 chains (loop thread)", per_decision(
                    lambda c: [os.path.join(bench, "decide_all_bench"), url, str(c), "16",
                               "submit"], work, "submit", n, thread=2)),
                ("clef batch -j 16", per_decision(batch([]), work, "batch", n)),
                ("clef batch -j 16 -v 2>/dev/null", per_decision(batch(["-v"]), work, "v", n)),
                ("clef batch -j 16 --cache (all misses)",
                 per_decision(batch(["--cache", "CACHE"]), work, "cache", n)),
            ]
        finally:
            stop(mock)
    floor = rows[0][1]
    plain = rows[2][1]
    print(f"## user-space instructions per decision (callgrind; {n} and {2 * n} decisions, "
          f"clef mock at 0 ms, 16 in flight)")
    print(f"{'client':42} {'instructions':>13} {'vs floor':>9} {'vs clef batch':>14}")
    for name, value in rows:
        print(f"{name:42} {value:13,.0f} {value / floor:8.2f}x {value / plain:13.2f}x")
    json.dump({name: value for name, value in rows}, sys.stderr)
    print(file=sys.stderr)


if __name__ == "__main__":
    main()
