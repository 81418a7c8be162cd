#!/usr/bin/env python3
"""clef against wrk, in one run, against clef mock on 127.0.0.1 (issue 17's yardstick).

  python3 bench/wrk_bench.py [--build build] [--quick] [--rounds N]   (wrk: apt-get install -y wrk)

1. 0 ms model time, 16 in flight: wrk posting the card's body (one thread, 16 connections) for
   a few seconds; libcurl alone posting the same body (libcurl_floor: the floor under any libcurl
   client); `clef batch -j 16` over 40,000 tickets, plain, with --cache (every lookup a miss) and
   with -v (stderr discarded), its threads counted; the library alone (decide_all_bench: decide_all
   with 16 in flight, on clef's loop thread and on a driven loop it turns itself, and 16 chains of
   submit, no file I/O). Throughput and client CPU per
   request, as ratios to wrk's, and the CPU the mock itself used per request under wrk, which
   bounds what any client can reach on the same machine.
2. 2,000 in flight against a server that takes 1 s: `clef batch -j 2000`, plain, with --cache
   and with --record; threads of the clef
   process sampled from /proc/PID/task during the run, its peak RSS, every id exactly once, and
   the rate against the ideal 2,000/s.
3. 20 ms model time, `-j 64`: the rate against the ideal 3,200/s.

Each round of section 1 measures the floor before its clients and again after them, and its
ratios are to the mean of the two (the machine drifts over a round's half minute). With --rounds N
the floor and the clients of section 1 are measured N times and each client's median ratio to the
floor of its own round is printed (with the lowest and highest): one round decides little on a
shared machine.

Client CPU is user + system time of the client process (os.wait4); libcurl_floor and
decide_all_bench report their own for their measured phase alone (phase_clock.hpp: from the first
request to the last answer, not building 40,000 requests before it). The server runs in its own
process and is not counted. The machine is noisy: read the ratios, measured in the same run.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

QUESTION = ("team: Which team should handle this ticket? | billing=Payments and refunds | "
            "technical=Bugs and integrations | other=None of the above")
CRITERIA = {"billing": "Payments and refunds", "technical": "Bugs and integrations",
            "other": "None of the above"}


def start_mock(build, latency_ms, max_connections=1024):
    mock = subprocess.Popen([os.path.join(build, "cli", "clef-mock"), "--latency", str(latency_ms),
                             "--max-connections", str(max_connections)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, text=True)
    url = mock.stdout.readline().strip()
    if not url.startswith("http://127.0.0.1:"):
        sys.exit("clef mock did not start: " + url)
    return mock, url


def stop(process):
    process.terminate()
    process.wait()


def write_tickets(path, n):
    with open(path, "w") as tickets:
        for i in range(n):
            state = {"ticket": f"I was charged twice for order {i}. Please refund the extra payment."}
            tickets.write(json.dumps({"id": f"T{i}", "state": state}) + "\n")


def write_wrk_script(path):
    state = {"ticket": "I was charged twice for order 1. Please refund the extra payment."}
    body = {"model": "clef-flash", "state": state,
            "questions": {"team": {"type": "choice",
                                   "instructions": "Which team should handle this ticket?",
                                   "criteria": CRITERIA}}}
    with open(path, "w") as script:
        script.write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n')
        script.write("wrk.body = " + json.dumps(json.dumps(body, separators=(",", ":"))) + "\n")


def run(command, watch=None):
    """Runs command; returns (wall s, CPU s, peak RSS MiB, stdout). `watch(pid)` runs meanwhile."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    watcher = None
    if watch:
        watcher = threading.Thread(target=watch, args=(child.pid,), daemon=True)
        watcher.start()
    out = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"{command[0]} exited with {code}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0, out


def clef_batch(build, url, tickets, out, jobs, extra=()):
    if os.path.exists(out):
        os.remove(out)
    return [os.path.join(build, "cli", "clef"), "batch", tickets, "-o", out, "--host", url,
            "--choice", QUESTION, "-j", str(jobs), *extra]


def thread_counter():
    """A watch for run(): the peak of /proc/PID/task, sampled every 20 ms, in peak[0]."""
    peak = [0]

    def watch(pid):
        while True:
            try:
                peak[0] = max(peak[0], len(os.listdir(f"/proc/{pid}/task")))
            except OSError:
                return
            time.sleep(0.02)
    return peak, watch


def ids_exactly_once(out, n):
    seen = {}
    with open(out) as lines:
        for line in lines:
            record = json.loads(line)
            if "answers" not in record:
                sys.exit("a failed item: " + line[:200])
            seen[record["id"]] = seen.get(record["id"], 0) + 1
    return len(seen) == n and all(count == 1 for count in seen.values())


def phase(out, n):
    """(wall s, CPU s) of a bench program's measured phase, from its "N ok WALL CPU" line."""
    fields = out.split()
    if len(fields) != 4 or fields[:2] != [str(n), "ok"]:
        sys.exit("not every request succeeded: " + out)
    return float(fields[2]), float(fields[3])


def process_cpu_seconds(pid):
    """User + system CPU of a running process, from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def section_zero_latency(args, work):
    n = 8000 if args.quick else 40000
    seconds = 2 if args.quick else 5
    tickets = os.path.join(work, "zero.jsonl")
    write_tickets(tickets, n)
    script = os.path.join(work, "post.lua")
    write_wrk_script(script)
    print(f"## 0 ms model time, 16 in flight ({n} decisions; wrk for {seconds} s)")
    mock, url = start_mock(args.build, 0)
    try:
        mock_before = process_cpu_seconds(mock.pid)
        wall, cpu, _, out = run(["wrk", "-t", "1", "-c", "16", "-d", f"{seconds}s", "-s", script,
                                 url + "/v1/systemone"])
        done = int(re.search(r"(\d+) requests in", out).group(1))
        mock_cpu = (process_cpu_seconds(mock.pid) - mock_before) / done
        if "Non-2xx" in out or "Socket errors" in out:
            sys.exit("wrk saw errors:\n" + out)
        rows = [("wrk -t 1 -c 16 (the card's body)", done / wall, cpu / done)]
        threads = {}
        rows += clients(args, url, tickets, n, work, threads)
        # More rounds, each client against the floor measured in the same round: the machine's
        # minute moves every client, and the ratios within a round share it.
        ratios = [round_ratios(rows[1:])]
        for _ in range(args.rounds - 1):
            ratios.append(round_ratios(clients(args, url, tickets, n, work, {})))
    finally:
        stop(mock)
    wrk_rate, wrk_cpu = rows[0][1], rows[0][2]
    floor_rate, floor_cpu = bracketed_floor(rows[1:])
    print(f"{'client':40} {'requests/s':>11} {'CPU µs/request':>15} {'rate vs wrk':>12} "
          f"{'CPU vs wrk':>11} {'rate vs floor':>14} {'CPU vs floor':>13} {'threads':>8}")
    for name, rate, per in rows:
        print(f"{name:40} {rate:11.0f} {per * 1e6:15.1f} {rate / wrk_rate:11.2f}x "
              f"{per / wrk_cpu:10.2f}x {rate / floor_rate:13.2f}x {per / floor_cpu:12.2f}x "
              f"{threads.get(name, ''):>8}")
    # The server shares the machine: what it burns per request bounds any client's rate.
    cores = os.cpu_count()
    budget = cores / (0.9 * wrk_rate) - mock_cpu
    print(f"clef mock used {mock_cpu * 1e6:.1f} µs of CPU per request under wrk: on {cores} cores, "
          f"0.9x wrk's rate leaves a client at most {budget * 1e6:.1f} µs per request "
          f"(the floor used {floor_cpu * 1e6:.1f}, the mean of its runs before and after the "
          f"clients)")
    if args.rounds > 1:
        print(f"over {args.rounds} rounds, each against its own floor (the mean of its runs "
              f"before and after its clients): median (lowest–highest)")
        print(f"{'client':40} {'rate vs floor':>24} {'CPU vs floor':>24}")
        for name in ratios[0]:
            rate = [r[name][0] for r in ratios]
            per = [r[name][1] for r in ratios]
            print(f"{name:40} {statistics.median(rate):8.2f}x ({min(rate):.2f}–{max(rate):.2f}x) "
                  f"{statistics.median(per):8.2f}x ({min(per):.2f}–{max(per):.2f}x)")


def floor_row(name, bench, url, n):
    """(name, requests/s, CPU s per request) of libcurl alone posting the card's body."""
    wall, cpu = phase(run([os.path.join(bench, "libcurl_floor"), url + "/v1/systemone",
                           str(n), "16"])[3], n)
    return (name, n / wall, cpu / n)


def clients(args, url, tickets, n, work, threads):
    """One round: the floor, then clef batch (plain, -v, --cache) and the library, as rows of
    (name, requests/s, CPU s per request); each batch's peak thread count goes in `threads`."""
    bench = os.path.join(args.build, "bench")
    rows = [floor_row("libcurl multi alone (the floor)", bench, url, n)]
    out_file = os.path.join(work, "zero.out.jsonl")
    # The pipeline's stages cost the same loop: every cache lookup a miss (a fresh directory
    # each round), -v printing to a discarded stderr (run() sends it to /dev/null).
    cache = tempfile.mkdtemp(dir=work, prefix="cache-zero-")
    os.rmdir(cache)
    for name, extra in (("clef batch -j 16", ()),
                        ("clef batch -j 16 -v 2>/dev/null", ("-v",)),
                        ("clef batch -j 16 --cache (all misses)", ("--cache", cache))):
        peak, watch = thread_counter()
        wall, cpu, _, _ = run(clef_batch(args.build, url, tickets, out_file, 16, extra), watch)
        assert ids_exactly_once(out_file, n)
        rows.append((name, n / wall, cpu / n))
        threads[name] = peak[0]
    # Gone before the runs that follow: its 23 MB written back to disk meanwhile (30 s later)
    # would take the machine's CPU from them, or from the next round's.
    shutil.rmtree(cache, ignore_errors=True)
    for mode, name in (("decide_all", "library: decide_all, 16 in flight"),
                       ("driven", "library: decide_all, drive_loop"),
                       ("submit", "library: submit, 16 chains")):
        wall, cpu = phase(run([os.path.join(bench, "decide_all_bench"), url, str(n), "16",
                               mode])[3], n)
        rows.append((name, n / wall, cpu / n))
    # The floor again after the clients: the round's ratios are to the mean of the two, so a
    # machine that drifts over the round's half minute moves the floor as it moved the clients
    # (and the two floors' own ratio to their mean shows how far it drifted).
    rows.append(floor_row(FLOOR_AFTER, bench, url, n))
    return rows


FLOOR_AFTER = "libcurl multi alone, after the clients"


def bracketed_floor(rows):
    """(rate, CPU per request) of a round's floor: the mean of its runs before and after."""
    before = rows[0]
    after = next(row for row in rows if row[0] == FLOOR_AFTER)
    return (before[1] + after[1]) / 2, (before[2] + after[2]) / 2


def round_ratios(rows):
    """{client: (rate vs floor, CPU vs floor)} of one round's rows, the floor first and again
    last (bracketed_floor)."""
    floor_rate, floor_cpu = bracketed_floor(rows)
    return {name: (rate / floor_rate, per / floor_cpu) for name, rate, per in rows}


def section_two_thousand(args, work):
    in_flight = 500 if args.quick else 2000
    n = in_flight * (3 if args.quick else 10)
    tickets = os.path.join(work, "slow.jsonl")
    write_tickets(tickets, n)
    print(f"\n## {in_flight} in flight, the server takes 1 s ({n} decisions, "
          f"clef mock --latency 1000 --max-connections {in_flight + 100})")
    mock, url = start_mock(args.build, 1000, in_flight + 100)
    ideal = in_flight / 1.0
    try:
        out_file = os.path.join(work, "slow.out.jsonl")
        for label, extra in (("", ()), (" --cache", ("--cache", os.path.join(work, "cache-slow"))),
                             (" --record", ("--record", os.path.join(work, "slow.cassette")))):
            peak, watch = thread_counter()
            wall, _, rss, _ = run(clef_batch(args.build, url, tickets, out_file, in_flight, extra),
                                  watch)
            once = ids_exactly_once(out_file, n)
            print(f"clef batch -j {in_flight}{label}: {n / wall:.0f} decisions/s = "
                  f"{n / wall / ideal:.1%} of the ideal {ideal:.0f}/s; peak {peak[0]} threads; "
                  f"peak RSS {rss:.1f} MiB; every id exactly once: {'yes' if once else 'NO'}")
    finally:
        stop(mock)


def section_twenty_ms(args, work):
    n = 3200 if args.quick else 16000
    tickets = os.path.join(work, "twenty.jsonl")
    write_tickets(tickets, n)
    print(f"\n## 20 ms model time, -j 64 ({n} decisions)")
    mock, url = start_mock(args.build, 20)
    try:
        out_file = os.path.join(work, "twenty.out.jsonl")
        wall, _, _, _ = run(clef_batch(args.build, url, tickets, out_file, 64))
        assert ids_exactly_once(out_file, n)
    finally:
        stop(mock)
    ideal = 64 / 0.020
    print(f"clef batch -j 64: {n / wall:.0f} decisions/s = {n / wall / ideal:.1%} of the ideal "
          f"{ideal:.0f}/s (64 / 20 ms)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--quick", action="store_true", help="smaller runs (a smoke test)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="measure the floor and the clients this many times (0 ms section) "
                             "and print each client's median ratio to its round's floor")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        section_zero_latency(args, work)
        section_two_thousand(args, work)
        section_twenty_ms(args, work)


if __name__ == "__main__":
    main()
