"""clef-mock as a child process, for the benchmark scripts: started on a free port of 127.0.0.1,
its URL read from the first line it prints."""
import os
import subprocess
import sys


def start_mock(build, *flags):
    """(the clef-mock process, its base URL); exits the script when it does not start."""
    server = subprocess.Popen([os.path.join(build, "cli", "clef-mock"), "--port", "0", *flags],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              stdin=subprocess.DEVNULL, text=True)
    url = server.stdout.readline().strip()
    if not url.startswith("http://127.0.0.1:"):
        sys.exit("clef-mock did not start: " + url)
    return server, url


def stop(server):
    server.terminate()
    server.wait()
