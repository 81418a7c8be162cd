#!/usr/bin/env python3
"""clef mock's rule budget: the time one request takes when its rules are the worst RE2 can be
given (patterns like a[a-c]{29}b, whose DFA would need 2^29 states, so RE2 simulates their
program over every byte of the state), at the mock's bound and past it, against the same request
with no rules, measured in the same run.

Usage: python3 bench/mock_rules_bench.py [--build build]

Prints, per rule set: how many rules, the work they would cost (program size x state bytes),
the mock's answer (200, or its 400 past the bound) and the seconds per request, as a ratio to
the request without rules."""
import argparse
import json
import os
import random
import tempfile
import time
import urllib.error
import urllib.request

from mock_process import start_mock, stop

STATE_BYTES = 256 * 1024


def start(build, rules_path):
    flags = ["--profile", "laya"] + (["--rules", rules_path] if rules_path else [])
    return start_mock(build, *flags)


def ask(url, state):
    body = json.dumps({"model": "clef-flash", "state": state,
                       "questions": {"u": {"type": "noul", "instructions": "U?"}}}).encode()
    request = urllib.request.Request(url + "/v1/systemone", data=body,
                                     headers={"Content-Type": "application/json"})
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=600) as answer:
            status = answer.status
            answer.read()
    except urllib.error.HTTPError as error:
        status = error.code
    return status, time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    args = parser.parse_args()
    random.seed(1)
    state = "".join(random.choice("abc") for _ in range(STATE_BYTES))
    with tempfile.TemporaryDirectory() as scratch:
        server, url = start(args.build, None)
        try:
            ask(url, state)  # warm up
            baseline = min(ask(url, state)[1] for _ in range(5))
        finally:
            stop(server)
        print(f"no rules: {baseline * 1000:.1f} ms per request ({STATE_BYTES} bytes of state)")
        print(f"{'rules':>6} {'status':>6} {'seconds':>8} {'x no rules':>11}")
        for count in (10, 55, 1000):
            rules = [{"question": "u", "match": "a[a-c]{%d}b%d" % (20 + i % 10, i),
                      "answer": "yes"} for i in range(count)]
            path = os.path.join(scratch, f"rules_{count}.json")
            with open(path, "w") as f:
                json.dump({"rules": rules}, f)
            server, url = start(args.build, path)
            try:
                status, seconds = ask(url, state)
            finally:
                stop(server)
            print(f"{count:>6} {status:>6} {seconds:>8.3f} {seconds / baseline:>11.1f}")


if __name__ == "__main__":
    main()
