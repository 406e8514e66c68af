#!/usr/bin/env python3
"""An independent check of `fusebox trace --json`: the same totals computed by this script,
straight from the file with Python's standard library (json, gzip, sqlite3), none of fusebox's
code. Usage: trace_totals.py FUSEBOX TRACE [--print]

Totals, per file: kernel count and total kernel time, memcpy count, time and bytes, memset
count and time, and GPU idle: per device, its window (first GPU work's start to the last one's
end) minus the union of its kernels, copies and memsets, summed over devices (syncs are the
host waiting, not GPU work). Communication, as profiler/communication.h defines it (the kernel's
function name holds nccl, rccl, multimem_, all_reduce...): its kernel count and time, and per
device the union of the communication kernels, its intersection with the union of the others
(HTA's overlap) and the rest (exposed), summed over devices. Graph replays: kernels whose launch
call (by correlation id) is a *GraphLaunch call, and how many such calls ran kernels. They must
agree with fusebox's to 0.1% (integer counts exactly). Exit 0 when they do, 1 with the
differences when not."""
import gzip
import json
import re
import sqlite3
import subprocess
import sys

KINETO_CATS = {
    "kernel": "kernel", "Kernel": "kernel",
    "gpu_memcpy": "memcpy", "Memcpy": "memcpy",
    "gpu_memset": "memset", "Memset": "memset",
    "cuda_sync": "sync",
}


COMM_PARTS = ("nccl", "rccl", "multimem_", "all_reduce", "allreduce", "all_gather", "allgather",
              "reduce_scatter", "reducescatter", "all_to_all", "alltoall", "cross_device_reduce")


def function_name(kernel):
    """The text before the first '(' (not "(anonymous namespace)") or '<', after the last space."""
    end = len(kernel)
    for i, c in enumerate(kernel):
        if c == "<" or (c == "(" and not kernel.startswith("(anonymous namespace)", i)):
            end = i
            break
    return kernel[:end].split(" ")[-1]


def is_comm(kernel):
    f = function_name(kernel).lower()
    return any(p in f for p in COMM_PARTS)


def ns(us):
    """Microseconds as written (an integer, or a fraction) to integer nanoseconds."""
    return us * 1000 if isinstance(us, int) else round(us * 1000)


def load_kineto(path):
    """The kineto document (plain or gzip'd JSON) and its events."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    doc = json.loads(raw)
    return doc, doc["traceEvents"] if isinstance(doc, dict) else doc


def kineto_items(path):
    """(kind, device, start_ns, end_ns, bytes, name, correlation) for each GPU-side event of a
    kineto trace, and the runtime calls' names by correlation id."""
    _, events = load_kineto(path)
    out, calls, call_bytes = [], {}, {}
    for e in events:
        if e.get("ph") != "X":
            continue
        args = e.get("args", {})
        if e.get("cat") in ("cuda_runtime", "Runtime", "cuda_driver") and "correlation" in args:
            calls.setdefault(args["correlation"], e.get("name", ""))
            # A copy or memset call's size (kineto's ROCm logger writes it there, as a string).
            if "Memcpy" in e.get("name", "") or "Memset" in e.get("name", ""):
                for key in ("bytes", "size"):
                    v = args.get(key)
                    if isinstance(v, str) and v.isascii() and v.isdigit() and len(v) <= 19:
                        v = int(v)
                    if isinstance(v, int) and not isinstance(v, bool) and v >= 0 and args["correlation"]:
                        call_bytes.setdefault(args["correlation"], v)
                        break
        kind = KINETO_CATS.get(e.get("cat"))
        if kind is None or e.get("dur", -1) < 0:
            continue
        start, end = ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
        out.append([kind, args.get("device", e.get("pid")), start, end, int(args.get("bytes", 0)),
                    e.get("name", ""), args.get("correlation", 0)])
    # A copy or memset the file gives no size takes its call's (profiler/import_kineto.cpp).
    for item in out:
        if item[0] in ("memcpy", "memset") and item[4] == 0 and item[6] in call_bytes:
            item[4] = call_bytes[item[6]]
    return [tuple(item) for item in out], calls


def nsys_items(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    strings = dict(db.execute("SELECT id, value FROM StringIds")) if "StringIds" in tables else {}
    out, calls = [], {}
    for table, kind, has_bytes in (("CUPTI_ACTIVITY_KIND_KERNEL", "kernel", False),
                                   ("CUPTI_ACTIVITY_KIND_MEMCPY", "memcpy", True),
                                   ("CUPTI_ACTIVITY_KIND_MEMSET", "memset", True),
                                   ("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "sync", False)):
        if table not in tables:
            continue
        cols = "start, end, deviceId, correlationId, " + (
            "bytes" if has_bytes else "demangledName" if kind == "kernel" else "0")
        for row in db.execute(f"SELECT {cols} FROM {table} WHERE end >= start"):
            name = strings.get(row[4], "") if kind == "kernel" else ""
            out.append((kind, row[2], row[0], row[1], row[4] if has_bytes else 0, name, row[3]))
    if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables:
        for corr, name_id in db.execute(
                "SELECT correlationId, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME"):
            calls.setdefault(corr, strings.get(name_id, ""))
    return out, calls


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


def merged(intervals):
    out = []
    for s, e in sorted(intervals):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def intersection_ns(a, b):
    total = 0
    for s1, e1 in a:
        for s2, e2 in b:  # quadratic, plainly: these are test files
            if s2 >= e1:
                break
            total += max(0, min(e1, e2) - max(s1, s2))
    return total


def totals(items, calls):
    t = {"kernel_count": 0, "kernel_ns": 0, "memcpy_count": 0, "memcpy_ns": 0, "memcpy_bytes": 0,
         "memset_count": 0, "memset_ns": 0, "comm_kernel_count": 0, "comm_kernel_ns": 0,
         "graph_kernels": 0}
    by_device, comm, compute, replays = {}, {}, {}, set()
    for kind, device, s, e, nbytes, name, corr in items:
        if kind == "sync":  # the host held: not GPU work, neither busy nor part of the window
            continue
        by_device.setdefault(device, []).append((s, e))
        t[kind + "_count"] += 1
        t[kind + "_ns"] += e - s
        if kind == "memcpy":
            t["memcpy_bytes"] += nbytes
        if kind != "kernel":
            continue
        if is_comm(name):
            t["comm_kernel_count"] += 1
            t["comm_kernel_ns"] += e - s
            comm.setdefault(device, []).append((s, e))
        else:
            compute.setdefault(device, []).append((s, e))
        if corr and "GraphLaunch" in calls.get(corr, ""):
            t["graph_kernels"] += 1
            replays.add(corr)
    t["graph_replays"] = len(replays)
    t["idle_ns"] = sum(max(e for _, e in iv) - min(s for s, _ in iv) - union_ns(iv)
                       for iv in by_device.values())
    t["comm_busy_ns"] = t["comm_overlap_ns"] = t["comm_exposed_ns"] = 0
    for device, iv in comm.items():
        u, v = merged(iv), merged(compute.get(device, []))
        busy = sum(e - s for s, e in u)
        overlap = intersection_ns(u, v)
        t["comm_busy_ns"] += busy
        t["comm_overlap_ns"] += overlap
        t["comm_exposed_ns"] += busy - overlap
    return t


def kineto_phases(path, shift):
    """Per phase (profiler/phases.h): steps, kernels launched inside the steps' ranges (count,
    time, KV-cache writes), tokens, and the steps' time to their GPU work's end, with the host
    shifted by fusebox's reported clock offset. Rules 1, 2 (the engines' annotations) and 3
    (ranges named prefill*/decode*, tokens from "toks=<T>"). With no GPU work at all (fusebox's
    own CPU recordings), a step's work is the cpu_op spans starting inside its range, and its
    KV-cache writes those whose args say "KV Cache Write" (fusebox generate marks them)."""
    _, events = load_kineto(path)
    calls, gpu, ops, rules = {}, [], [], ([], [], [])
    for e in events:
        if e.get("ph") != "X" or e.get("dur", -1) < 0:
            continue
        args, cat, name = e.get("args", {}), e.get("cat"), e.get("name", "")
        start, end = ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
        if cat in ("cuda_runtime", "Runtime", "cuda_driver") and "correlation" in args:
            calls.setdefault(args["correlation"], start + shift)
        elif KINETO_CATS.get(cat) in ("kernel", "memcpy", "memset"):
            gpu.append((KINETO_CATS[cat], start, end, name, args.get("correlation", 0)))
        elif cat == "cpu_op":
            ops.append((start + shift, end + shift, name, args.get("KV Cache Write") is True))
        elif cat in ("user_annotation", "gpu_user_annotation", "python_function"):
            m = re.match(r"execute_(\d+)_context_(\d+)\(.*?\)_generation_(\d+)", name)
            if m and (int(m[2]) or int(m[3])):
                p, d = int(m[2]), int(m[3])
                phase = "mixed" if p and d else "prefill" if p else "decode"
                rules[0].append((start + shift, end + shift, phase, int(m[1])))
            m = re.match(r"step\[(EXTEND|PREFILL|DECODE|MIXED|IDLE)[ \]].*?(toks=(\d+))?", name)
            if m:
                phase = {"EXTEND": "prefill", "PREFILL": "prefill", "DECODE": "decode",
                         "MIXED": "mixed", "IDLE": "idle"}[m[1]]
                t = re.search(r"toks=(\d+)", name)
                rules[1].append((start + shift, end + shift, phase, int(t[1]) if t else -1))
            m = re.match(r"(prefill|decode)", name.lower())
            if m:
                t = re.search(r"toks=(\d+)", name.lower())
                rules[2].append((start + shift, end + shift, m[1], int(t[1]) if t else -1))
    steps = next((r for r in rules if r), [])
    steps.sort(key=lambda x: (x[0], -x[1]))
    outer = []
    for st in steps:
        if not outer or st[0] >= outer[-1][1]:
            outer.append(st)
    phases, names = {}, {}
    for s0, e0, phase, tokens in outer:
        by = names.setdefault(phase, {})
        p = phases.setdefault(phase, {"steps": 0, "kernel_count": 0, "kernel_ns": 0,
                                      "kv_write_ns": 0, "tokens": 0, "step_ns": 0})
        p["steps"] += 1
        p["tokens"] = p["tokens"] + tokens if p["tokens"] >= 0 and tokens >= 0 else -1
        last = e0
        for kind, ws, we, name, corr in gpu:
            t = calls.get(corr, ws) if corr else ws
            if not s0 <= t < e0:
                continue
            last = max(last, we)
            if kind != "kernel":
                continue
            p["kernel_count"] += 1
            p["kernel_ns"] += we - ws
            by[name] = [by.get(name, [0, 0])[0] + we - ws, by.get(name, [0, 0])[1] + 1]
            f = function_name(name).lower()
            if any(k in f for k in ("reshape_and_cache", "store_kvcache", "set_kv_buffer",
                                    "kv_cache", "copy_blocks")):
                p["kv_write_ns"] += we - ws
        if not gpu:
            for os_, oe, name, kv in ops:
                if s0 <= os_ < e0:
                    p["kernel_count"] += 1
                    p["kernel_ns"] += oe - os_
                    if kv:
                        p["kv_write_ns"] += oe - os_
                    by[name] = [by.get(name, [0, 0])[0] + oe - os_, by.get(name, [0, 0])[1] + 1]
        p["step_ns"] += last - s0
    # The phase's op table: how many names, and the one holding the most time (its name, time
    # and count of launches).
    for phase, by in names.items():
        top = max(by, key=lambda n: by[n][0], default=None)
        phases[phase]["kernel_names_count"] = len(by)
        phases[phase]["top_kernel_ns"] = by[top][0] if top else 0
        phases[phase]["top_kernel_count"] = by[top][1] if top else 0
        phases[phase]["top_kernel_name"] = top or ""
    return phases


def device_label(device_type, device_id):
    """c10::DeviceType as PyTorch prints a device: cpu, cuda:0, hip:0."""
    index = f":{device_id}" if device_id >= 0 else ""
    return {0: "cpu", 1: "cuda" + index, 6: "hip" + index}.get(device_type, f"device type {device_type}{index}")


def kineto_counters(path, shift):
    """Per counter track: samples, first, last, low, peak and the peak's time (its first
    occurrence, the host shifted by `shift`). Tracks: PyTorch's "[memory]" instant events
    (profile_memory=True) give "memory allocated (<device>)" from "Total Allocated" and, but for
    the CPU, "memory reserved (<device>)" from "Total Reserved"; a counter event ("ph": "C") gives
    one track per numeric arg: its name for "bytes" or "value", else "<name> <key>". A track is a
    name in one process; a name more than one process has is "<name>, pid <pid>" each."""
    _, events = load_kineto(path)
    samples = {}
    for e in events:
        ph, args = e.get("ph"), e.get("args")
        if not isinstance(args, dict) or not isinstance(e.get("ts"), (int, float)):
            continue
        if not isinstance(e.get("pid"), int) or not isinstance(e.get("tid"), int):
            continue
        t = ns(e["ts"]) + shift
        if ph in ("i", "I") and e.get("name") == "[memory]":
            dtype, allocated = args.get("Device Type"), args.get("Total Allocated")
            if not isinstance(dtype, int) or not isinstance(allocated, (int, float)):
                continue
            dev = device_label(dtype, args.get("Device Id", -1))
            samples.setdefault((f"memory allocated ({dev})", e["pid"]), []).append((t, allocated))
            if dtype != 0 and isinstance(args.get("Total Reserved"), (int, float)):
                samples.setdefault((f"memory reserved ({dev})", e["pid"]), []).append((t, args["Total Reserved"]))
        elif ph == "C":
            for key, v in args.items():
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    track = e["name"] if key in ("bytes", "value") else f"{e['name']} {key}"
                    samples.setdefault((track, e["pid"]), []).append((t, v))
    pids = {}
    for name, pid in samples:
        pids[name] = pids.get(name, 0) + 1
    out = {}
    for (name, pid), vs in samples.items():
        track = f"{name}, pid {pid}" if pids[name] > 1 else name
        vs.sort(key=lambda x: x[0])  # stable: equal times keep file order
        values = [v for _, v in vs]
        peak = max(values)
        out[track] = {"samples": len(vs), "first": values[0], "last": values[-1], "low": min(values),
                      "peak": peak, "peak_ns": next(t for t, v in vs if v == peak)}
    return out


def main():
    fusebox, path = sys.argv[1], sys.argv[2]
    with open(path, "rb") as f:
        is_sqlite = f.read(16) == b"SQLite format 3\x00"
    ours = totals(*(nsys_items(path) if is_sqlite else kineto_items(path)))
    report = json.loads(subprocess.run([fusebox, "trace", path, "--json"], check=True,
                                       capture_output=True, text=True).stdout)
    theirs = {k: report[k] for k in ours if k in report}
    theirs["idle_ns"] = sum(d["idle_ns"] for d in report["devices"])
    comm = report["communication"]
    theirs.update({"comm_kernel_count": comm["kernel_count"], "comm_kernel_ns": comm["kernel_ns"],
                   "comm_busy_ns": comm["busy_ns"], "comm_overlap_ns": comm["overlap_ns"],
                   "comm_exposed_ns": comm["exposed_ns"],
                   "graph_kernels": report["graphs"]["kernels"],
                   "graph_replays": report["graphs"]["replays"]})
    if not is_sqlite:
        # Phases: the host shifted by the clock offset fusebox reports (checked by its own test).
        ph = kineto_phases(path, report["clock_skew"]["host_shift_ns"])
        got = {p["name"]: p for p in report["phases"]["phases"]}
        if set(ph) != set(got):
            print(f"{path}: phases: fusebox {sorted(got)}, python {sorted(ph)}", file=sys.stderr)
            return 1
        for name, p in ph.items():
            kernels = got[name]["kernels"]
            got[name]["kernel_names_count"] = len(kernels)
            got[name]["top_kernel_ns"] = kernels[0]["total_ns"] if kernels else 0
            got[name]["top_kernel_count"] = kernels[0]["count"] if kernels else 0
            got[name]["top_kernel_name"] = kernels[0]["name"] if kernels else ""
            for key, want in p.items():
                ours[f"{name}_{key}"] = want
                theirs[f"{name}_{key}"] = got[name][key]
        counters = kineto_counters(path, report["clock_skew"]["host_shift_ns"])
        got = {c["name"]: c for c in report["counters"]}
        if set(counters) != set(got):
            print(f"{path}: counters: fusebox {sorted(got)}, python {sorted(counters)}", file=sys.stderr)
            return 1
        for name, c in counters.items():
            for key, want in c.items():
                ours[f"counter[{name}]_{key}"] = want
                theirs[f"counter[{name}]_{key}"] = got[name][key]
    if "--print" in sys.argv:
        print(json.dumps({"python": ours, "fusebox": theirs}, indent=2))
    bad = []
    for key, want in ours.items():
        got = theirs.get(key)
        if got is None:
            bad.append(f"{key}: missing from fusebox's totals")
        elif isinstance(want, str) or key.endswith(("_count", "_steps", "_tokens", "_samples", "_peak_ns")) or key in (
                "memcpy_bytes", "graph_kernels", "graph_replays"):
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
