#!/usr/bin/env python3
"""An independent check of `fusebox trace --json`: the same totals computed by this script,
straight from the file with Python's standard library (json, gzip, sqlite3), none of fusebox's
code. Usage: trace_totals.py FUSEBOX TRACE [--print]

Totals, per file: kernel count and total kernel time, memcpy count, time and bytes, memset
count and time, and GPU idle: per device, its window (first GPU work's start to the last one's
end) minus the union of its kernels, copies and memsets, summed over devices (syncs are the
host waiting, not GPU work). They must
agree with fusebox's to 0.1% (integer counts exactly). Exit 0 when they do, 1 with the
differences when not."""
import gzip
import json
import sqlite3
import subprocess
import sys

KINETO_CATS = {
    "kernel": "kernel", "Kernel": "kernel",
    "gpu_memcpy": "memcpy", "Memcpy": "memcpy",
    "gpu_memset": "memset", "Memset": "memset",
    "cuda_sync": "sync",
}


def ns(us):
    """Microseconds as written (an integer, or a fraction) to integer nanoseconds."""
    return us * 1000 if isinstance(us, int) else round(us * 1000)


def kineto_items(path):
    """(kind, device, start_ns, end_ns, bytes) for each GPU-side event of a kineto trace."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    doc = json.loads(raw)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    out = []
    for e in events:
        kind = KINETO_CATS.get(e.get("cat"))
        if kind is None or e.get("ph") != "X" or e.get("dur", -1) < 0:
            continue
        args = e.get("args", {})
        start, end = ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
        out.append((kind, args.get("device", e.get("pid")), start, end, int(args.get("bytes", 0))))
    return out


def nsys_items(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    out = []
    for table, kind, has_bytes in (("CUPTI_ACTIVITY_KIND_KERNEL", "kernel", False),
                                   ("CUPTI_ACTIVITY_KIND_MEMCPY", "memcpy", True),
                                   ("CUPTI_ACTIVITY_KIND_MEMSET", "memset", True),
                                   ("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "sync", False)):
        if table not in tables:
            continue
        cols = "start, end, deviceId" + (", bytes" if has_bytes else "")
        for row in db.execute(f"SELECT {cols} FROM {table} WHERE end >= start"):
            out.append((kind, row[2], row[0], row[1], row[3] if has_bytes else 0))
    return out


def union_ns(intervals):
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def totals(items):
    t = {"kernel_count": 0, "kernel_ns": 0, "memcpy_count": 0, "memcpy_ns": 0, "memcpy_bytes": 0,
         "memset_count": 0, "memset_ns": 0}
    by_device = {}
    for kind, device, s, e, nbytes in items:
        if kind == "sync":  # the host held: not GPU work, neither busy nor part of the window
            continue
        by_device.setdefault(device, []).append((s, e))
        t[kind + "_count"] += 1
        t[kind + "_ns"] += e - s
        if kind == "memcpy":
            t["memcpy_bytes"] += nbytes
    t["idle_ns"] = sum(max(e for _, e in iv) - min(s for s, _ in iv) - union_ns(iv)
                       for iv in by_device.values())
    return t


def main():
    fusebox, path = sys.argv[1], sys.argv[2]
    with open(path, "rb") as f:
        is_sqlite = f.read(16) == b"SQLite format 3\x00"
    ours = totals(nsys_items(path) if is_sqlite else kineto_items(path))
    report = json.loads(subprocess.run([fusebox, "trace", path, "--json"], check=True,
                                       capture_output=True, text=True).stdout)
    theirs = {k: report[k] for k in ours if k in report}
    theirs["idle_ns"] = sum(d["idle_ns"] for d in report["devices"])
    if "--print" in sys.argv:
        print(json.dumps({"python": ours, "fusebox": theirs}, indent=2))
    bad = []
    for key, want in ours.items():
        got = theirs.get(key)
        if got is None:
            bad.append(f"{key}: missing from fusebox's totals")
        elif key.endswith("_count") or key == "memcpy_bytes":
            if got != want:
                bad.append(f"{key}: fusebox {got}, python {want}")
        elif abs(got - want) > 1e-3 * max(abs(want), 1):
            bad.append(f"{key}: fusebox {got}, python {want} (more than 0.1% apart)")
    for line in bad:
        print(f"{path}: {line}", file=sys.stderr)
    print(f"{path}: {len(ours)} totals, {len(ours) - len(bad)} agree to 0.1%")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
