#!/usr/bin/env python3
"""The Python reference client: a pool of N threads, each with its own requests.Session
(keep-alive), posting one body per line. Usage: python_requests_pool.py URL BODIES N"""
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import requests

url, bodies_path, workers = sys.argv[1], sys.argv[2], int(sys.argv[3])
local = threading.local()


def post(body):
    session = getattr(local, "session", None)
    if session is None:
        session = local.session = requests.Session()
    response = session.post(url, data=body, headers={"Content-Type": "application/json"})
    response.raise_for_status()
    return response.json()["answers"]["team"]["choice"]


with open(bodies_path) as f:
    bodies = [line.rstrip("\n") for line in f]
with ThreadPoolExecutor(max_workers=workers) as pool:
    results = list(pool.map(post, bodies))
assert len(results) == len(bodies)
