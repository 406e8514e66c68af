#!/usr/bin/env python3
"""The figures the trace scenarios (scenarios/*.json with "trace") check, computed independently
of fusebox with Python's standard library straight from each trace file, and compared with the
figures the scenarios state. Usage: scenario_figures.py SCENARIO_DIR [--print]

Per trace: kernel, copy and sync counts and times (trace_totals.py's reading), idle = window minus
the union of GPU work per device, pageable copies (nsys srcKind/dstKind 0, kineto names
"Pageable"), synchronous memcpy calls (runtime calls named *Memcpy* without Async), idle gaps (the
holes in the union, longest first) with the runtime calls overlapping them, kernels shorter than
their launch call (joined by correlation id), and for the CUDA graph candidate the sequence's
back-to-back repetitions (each call starting at most 20 us after the previous one ended, counted
greedily). A scenario whose trace is a folder of one job's ranks: rank_totals.py's figures
side by side and the straggler's file's own. A scenario with "kernels" (an Nsight Compute export):
each kernel check's launch (the one whose name holds the check's `kernel`) read by ncu_figures.py
from the CSV, its figure, Speed Of Light limiter and FP32 roof point. A scenario's trace_total,
finding time_lost_ms, gap host and kernel_figure / kernel_limiter checks must agree within the
scenario's own tolerance. A kineto trace's serving phases and counter tracks (trace_totals.py's
kineto_phases and kineto_counters) give the phase_total checks' figures and top kernels and the
counter checks'. Exit 0 when they all do, 1 otherwise."""
import collections
import json
import pathlib
import sqlite3
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import ncu_figures  # noqa: E402
import rank_totals as rt  # noqa: E402
import trace_totals as tt  # noqa: E402


def gaps_of(items):
    by_device = collections.defaultdict(list)
    for kind, device, s, e, *_ in items:
        if kind != "sync":
            by_device[device].append((s, e))
    gaps = []
    for iv in by_device.values():
        iv.sort()
        cur = iv[0][1]
        for s, e in iv[1:]:
            if s > cur:
                gaps.append((s - cur, cur, s))
            cur = max(cur, e)
    return sorted(gaps, reverse=True), by_device


def common(items_and_calls):
    items, calls = items_and_calls
    t = tt.totals(items, calls)
    gaps, by_device = gaps_of(items)
    window = sum(max(e for _, e in iv) - min(s for s, _ in iv) for iv in by_device.values())
    f = {"kernel_count": t["kernel_count"], "kernel_ms": t["kernel_ns"] / 1e6,
         "memcpy_count": t["memcpy_count"], "memcpy_ms": t["memcpy_ns"] / 1e6,
         "memcpy_mb": t["memcpy_bytes"] / 1e6, "idle_ms": t["idle_ns"] / 1e6,
         "idle_percent": 100 * t["idle_ns"] / window if window else 0}
    syncs = [(s, e) for kind, _, s, e, *_ in items if kind == "sync"]
    f["sync_count"] = len(syncs)
    f["sync_ms"] = sum(e - s for s, e in syncs) / 1e6
    findings = {"gpu_idle": f["idle_ms"], "gpu_gaps": sum(g[0] for g in gaps if g[0] > 1e6) / 1e6}
    return f, findings, gaps


def host_names(gap, calls):
    """Runtime call names overlapping a gap: calls = [(start, end, name)]."""
    return {name for s, e, name in calls if min(e, gap[2]) > max(s, gap[1])}


def kineto(path):
    _, events = tt.load_kineto(path)
    f, findings, gaps = common(tt.kineto_items(path))
    copies = [e for e in events if e.get("cat") in ("gpu_memcpy", "Memcpy") and e.get("ph") == "X"]
    pageable = [e for e in copies if "Pageable" in e.get("name", "")]
    f["pageable_copy_count"] = len(pageable)
    f["pageable_copy_ms"] = sum(tt.ns(e["dur"]) for e in pageable) / 1e6
    findings["pageable_copy"] = f["pageable_copy_ms"]
    calls = [(tt.ns(e["ts"]), tt.ns(e["ts"]) + tt.ns(e["dur"]), e["name"]) for e in events
             if e.get("cat") == "cuda_runtime" and e.get("ph") == "X"]
    # Graph replays: kernels whose launch call (by correlation) is a *GraphLaunch; the others
    # with a launch call run outside the graphs.
    call_name = {e["args"]["correlation"]: e["name"] for e in events
                 if e.get("cat") in ("cuda_runtime", "cuda_driver") and e.get("ph") == "X"
                 and "correlation" in e.get("args", {})}
    kernels = [e for e in events if e.get("cat") in ("kernel", "Kernel") and e.get("ph") == "X"]
    replay, outside, replays = [], [], set()
    for k in kernels:
        corr = k.get("args", {}).get("correlation", 0)
        if corr in call_name:
            if "GraphLaunch" in call_name[corr]:
                replay.append(k)
                replays.add(corr)
            else:
                outside.append(k)
    f["replay_count"] = len(replays)
    f["replay_kernel_count"] = len(replay)
    f["replay_kernel_ms"] = sum(tt.ns(k["dur"]) for k in replay) / 1e6
    f["outside_kernel_count"] = len(outside) if replays else 0
    f["outside_kernel_ms"] = sum(tt.ns(k["dur"]) for k in outside) / 1e6 if replays else 0
    # gpu_bound's time: the fewest kernel names (at most five) holding half the kernel time.
    by_name = collections.Counter()
    for k in kernels:
        by_name[k["name"]] += tt.ns(k["dur"])
    held, total = 0, sum(by_name.values())
    for i, (_, t) in enumerate(by_name.most_common()):
        if i == 5 or 2 * held >= total:
            break
        held += t
    findings["gpu_bound"] = held / 1e6
    return f, findings, [host_names(g, calls) for g in gaps[:10]]


def nsys(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    names = dict(db.execute("SELECT id, value FROM StringIds"))
    f, findings, gaps = common(tt.nsys_items(path))
    copies = list(db.execute("SELECT start, end, srcKind, dstKind FROM CUPTI_ACTIVITY_KIND_MEMCPY"))
    pageable = [c for c in copies if c[2] == 0 or c[3] == 0]  # ENUM_CUDA_MEM_KIND 0 = pageable
    f["pageable_copy_count"] = len(pageable)
    f["pageable_copy_ms"] = sum(e - s for s, e, *_ in pageable) / 1e6
    findings["pageable_copy"] = f["pageable_copy_ms"]
    findings["api_sync"] = f["sync_ms"]
    runtime = list(db.execute("SELECT start, end, nameId, correlationId, globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME"))
    findings["memcpy_sync"] = sum(e - s for s, e, n, *_ in runtime
                                  if "Memcpy" in names[n] and "Async" not in names[n]) / 1e6
    call_ns = {c: e - s for s, e, _, c, _ in runtime}
    kernels = list(db.execute("SELECT start, end, correlationId, demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL"))
    f["launch_bound"] = sum(1 for s, e, c, _ in kernels if c in call_ns and e - s < call_ns[c])
    # The update_halo sequence (lambda instances 13..16), launched back to back.
    kernel_name = {c: names[n] for _, _, c, n in kernels}
    launches = collections.defaultdict(list)
    for s, e, n, c, tid in runtime:
        if c in kernel_name and "Launch" in names[n]:
            launches[tid].append((s, e, kernel_name[c]))
    best = (0, 0, 0)
    for calls in launches.values():
        calls.sort()
        seq = [n for n in (f"(instance {k})]" for k in range(13, 17))]
        i, reps, launch_ns = 0, 0, 0
        while i + 4 <= len(calls):
            w = calls[i:i + 4]
            if all("update_halo" in w[k][2] and seq[k] in w[k][2] for k in range(4)) and \
                    all(w[k + 1][0] - w[k][1] <= 20000 for k in range(3)):
                reps, launch_ns, i = reps + 1, launch_ns + sum(e - s for s, e, _ in w), i + 4
            else:
                i += 1
        best = max(best, (reps, 4, launch_ns))
    f["graph_repetitions"], f["graph_length"], f["graph_launch_ms"] = best[0], best[1], best[2] / 1e6
    calls = [(s, e, names[n]) for s, e, n, *_ in runtime]
    return f, findings, [host_names(g, calls) for g in gaps[:10]]


def ranks(folder):
    """A folder of one job's rank traces: the ranks side by side (rank_totals.py's reading, sums
    over the common steps) and the straggler's own figures."""
    paths = sorted(str(p) for p in folder.iterdir() if p.name.endswith((".json", ".json.gz")))
    ours, straggler, common_steps, files = rt.rank_figures(paths)
    f, findings, gap_hosts = kineto(files[straggler])
    f.update({"rank_count": len(ours), "common_steps": len(common_steps), "straggler_rank": straggler,
              "straggler_compute_ms": ours[straggler]["compute_ns"] / 1e6,
              "straggler_comm_ms": ours[straggler]["comm_ns"] / 1e6,
              "max_comm_ms": max(r["comm_ns"] for r in ours.values()) / 1e6,
              "others_wait_ms": sum(r["wait_ns"] for r in ours.values()) / 1e6})
    return f, findings, gap_hosts


def kernel_launches(folder):
    """Every profiled launch of an ncu export folder (one kernel per sub-folder), as ncu_figures
    reads it, with the figure keys the kernel_figure check names."""
    out = []
    for d in sorted(p for p in pathlib.Path(folder).iterdir() if p.is_dir() and list(p.glob("*.csv"))):
        e = ncu_figures.expected(str(d))
        r = e["roofline"] or {}
        e["duration_us"] = None if e["duration_ns"] is None else e["duration_ns"] / 1e3
        e["roof_pct"], e["intensity"] = r.get("pct_of_roof"), r.get("intensity")
        out.append(e)
    return out


def kernel_check(c, launches):
    """(python's figure, the scenario's) for a kernel check, or an error string."""
    named = [e for e in launches if c["kernel"] in e["name"]]
    if len({e["name"] for e in named}) != 1:
        return f"{len({e['name'] for e in named})} profiled kernels have '{c['kernel']}' in their name"
    e = named[0]
    if c["check"] == "kernel_limiter":
        return (e["limiter"], c["unit"])
    return (e[c["key"]], c["equals"])


def main():
    folder = pathlib.Path(sys.argv[1])
    cache, phase_cache, bad, checked = {}, {}, [], 0
    for path in sorted(folder.glob("*.json")):
        sc = json.loads(path.read_text())
        if not isinstance(sc, dict) or "trace" not in sc:
            continue
        trace = (path.parent / sc["trace"]).resolve()
        if trace not in cache and trace.is_dir():
            cache[trace] = ranks(trace)
            if "--print" in sys.argv:
                print(trace.name, json.dumps(cache[trace][:2], indent=1))
        if trace not in cache:
            with open(trace, "rb") as fh:
                is_sqlite = fh.read(16) == b"SQLite format 3\x00"
            cache[trace] = nsys(str(trace)) if is_sqlite else kineto(str(trace))
            if "--print" in sys.argv:
                print(trace.name, json.dumps(cache[trace][:2], indent=1))
        figures, findings, gap_hosts = cache[trace]
        if trace not in phase_cache:
            # A kineto file's serving phases and counter tracks, the host unshifted: the phase
            # checks run over fusebox's CPU recordings, whose host and work share one clock.
            kineto_file = not trace.is_dir() and trace.read_bytes()[:16] != b"SQLite format 3\x00"
            phase_cache[trace] = (tt.kineto_phases(str(trace), 0), tt.kineto_counters(str(trace), 0)) \
                if kineto_file else ({}, {})
        phases, counters = phase_cache[trace]
        launches = kernel_launches(path.parent / sc["kernels"]) if "kernels" in sc else []
        for i, step in enumerate(sc["steps"]):
            for k, c in enumerate(step.get("checks", [])):
                where = f"{path.name}: /steps/{i}/checks/{k}"
                tol = c.get("tolerance", 1e-4)
                if c["check"] in ("kernel_figure", "kernel_limiter"):
                    checked += 1
                    got = kernel_check(c, launches)
                    if isinstance(got, str):
                        bad.append(f"{where}: {got}")
                    elif c["check"] == "kernel_limiter" and got[0] != got[1]:
                        bad.append(f"{where}: kernel_limiter: python {got[0]}, the scenario says {got[1]}")
                    elif c["check"] == "kernel_figure" and (got[0] is None or abs(got[0] - got[1]) > tol * abs(got[1]) + 1e-9):
                        bad.append(f"{where}: kernel_figure {c['key']}: python {got[0]}, the scenario says {got[1]}")
                    continue
                if c["check"] == "phase_total":
                    p = phases.get(c["phase"])
                    if p is None:
                        bad.append(f"{where}: python finds no {c['phase']} phase")
                        continue
                    if "top_kernel" in c and c["top_kernel"] not in p["top_kernel_name"]:
                        checked += 1
                        bad.append(f"{where}: python's top kernel is {p['top_kernel_name']}, not *{c['top_kernel']}*")
                        continue
                    key = c["key"][:-3] + "_ns" if c["key"].endswith("_ms") else c["key"]
                    if key not in p:
                        continue  # host_ms, tokens_per_s: not computed here
                    got, want = p[key] / 1e6 if key.endswith("_ns") else p[key], c["equals"]
                elif c["check"] == "counter":
                    if c["counter"] not in counters:
                        bad.append(f"{where}: python finds no counter track '{c['counter']}'")
                        continue
                    got, want = counters[c["counter"]][c["key"]], c["equals"]
                elif c["check"] == "trace_total" and c["key"] in figures:
                    got, want = figures[c["key"]], c["equals"]
                elif c["check"] == "finding" and "time_lost_ms" in c and c["kind"] in findings:
                    got, want = findings[c["kind"]], c["time_lost_ms"]
                elif c["check"] == "gap" and "host" in c:
                    checked += 1
                    if not any(c["host"] in n for n in gap_hosts[c["gap"]]):
                        bad.append(f"{where}: gap {c['gap']}: no runtime call named *{c['host']}* overlaps it")
                    continue
                else:
                    continue
                checked += 1
                if abs(got - want) > tol * abs(want) + 1e-9:
                    bad.append(f"{where}: {c['check']} {c.get('key', c.get('kind'))}: python {got:.6g}, the scenario says {want}")
    for line in bad:
        print(line, file=sys.stderr)
    print(f"{checked} scenario figures computed from the traces here, {checked - len(bad)} agree")
    return 1 if bad or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
