#!/usr/bin/env python3
"""What reading a large trace costs: `fusebox trace` on a 200,000-event kineto trace with a real
job's shape (make_big_trace.py), its peak resident memory beyond what it takes on a 1,000-event
trace of the same shape, per event. The importer streams the JSON (each event built alone and
dropped) and inflates gzip as it parses, so what stays is the recording; a document of every
event costs about 1.4 KB each and fails this. Prints the figures; exit 1 when the cost per event
is above the bound. Usage: large_trace_test.py FUSEBOX WORKDIR"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import make_big_trace  # noqa: E402

BOUND = 300  # bytes per event; measured 235 here at 200k events (huge pages round a small trace up), 94 at 10M


def peak_rss(cmd):
    """The child's peak resident set in bytes, and its wall time (one child per call)."""
    t = time.monotonic()
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.execv(cmd[0], cmd)
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(cmd)} failed: {status}")
    return usage.ru_maxrss * 1024, time.monotonic() - t


def make(path, n):
    sys.argv = ["make_big_trace.py", path, str(n)]
    make_big_trace.main()


def main():
    fusebox, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    small, big = os.path.join(work, "small.json.gz"), os.path.join(work, "big.json.gz")
    make(small, 1000)
    make(big, 200000)
    base, _ = peak_rss([fusebox, "trace", small])
    rss, wall = peak_rss([fusebox, "trace", big])
    per_event = (rss - base) / 200000
    print(f"large trace: 200,000 events in {wall:.2f} s, peak {rss / 1e6:.1f} MB "
          f"({base / 1e6:.1f} MB on 1,000 events): {per_event:.0f} bytes an event (bound {BOUND})")
    return 0 if per_event <= BOUND else 1


if __name__ == "__main__":
    sys.exit(main())
