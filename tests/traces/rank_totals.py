#!/usr/bin/env python3
"""An independent check of `fusebox trace RANK0 RANK1 ... --json`: the per-rank, per-step figures
and the straggler computed by this script from the kineto files with Python's standard library,
none of fusebox's code, as profiler/ranks.h defines them. Usage:
rank_totals.py FUSEBOX TRACE... [--print]

Per rank (distributedInfo.rank) and per ProfilerStep#N every rank has: the step's host range
duration; the kernels, copies and memsets whose launch call (by correlation id) started inside
it (or that started inside it, with no launch call); computation and communication kernel time;
exposed communication (the union of its communication kernels less their intersection with the
union of its computation kernels); idle = step - union of the step's GPU work (at least 0). The
straggler is the rank with the least communication time; each other rank waits its
communication time beyond the straggler's, per step. Sums must agree to 0.1%, the straggler
exactly. Exit 0 when they do, 1 with the differences when not."""
import json
import subprocess
import sys

from trace_totals import intersection_ns, is_comm, load_kineto, merged, ns, union_ns

GPU_CATS = {"kernel": "kernel", "Kernel": "kernel", "gpu_memcpy": "memcpy", "Memcpy": "memcpy",
            "gpu_memset": "memset", "Memset": "memset"}


def read(path):
    doc, events = load_kineto(path)
    calls, work, steps = {}, [], {}
    for e in events:
        if e.get("ph") != "X" or e.get("dur", -1) < 0:
            continue
        args = e.get("args", {})
        cat, name = e.get("cat"), e.get("name", "")
        start, end = ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
        if cat in ("cuda_runtime", "Runtime", "cuda_driver") and "correlation" in args:
            calls.setdefault(args["correlation"], start)
        elif cat in GPU_CATS:
            work.append((GPU_CATS[cat], start, end, name, args.get("correlation", 0)))
        elif cat == "user_annotation" and name.startswith("ProfilerStep#"):
            steps.setdefault(int(name[len("ProfilerStep#"):]), (start, end))
    return doc["distributedInfo"]["rank"], calls, work, steps


def step_figures(calls, work, s, e):
    compute = comm = 0
    comm_iv, compute_iv, all_iv = [], [], []
    for kind, ws, we, name, corr in work:
        t = calls.get(corr, ws) if corr else ws
        if not s <= t < e:
            continue
        all_iv.append((ws, we))
        if kind != "kernel":
            continue
        if is_comm(name):
            comm += we - ws
            comm_iv.append((ws, we))
        else:
            compute += we - ws
            compute_iv.append((ws, we))
    u = merged(comm_iv)
    exposed = sum(b - a for a, b in u) - intersection_ns(u, merged(compute_iv))
    return {"step_ns": e - s, "compute_ns": compute, "comm_ns": comm, "comm_exposed_ns": exposed,
            "idle_ns": max(0, (e - s) - union_ns(all_iv))}


def rank_figures(paths):
    """Per rank its figures summed over the common steps (and per step), the straggler, the
    common steps and each rank's file."""
    ranks, files = {}, {}
    for p in paths:
        rank, calls, work, steps = read(p)
        ranks[rank] = (calls, work, steps)
        files[rank] = p
    common = sorted(set.intersection(*(set(r[2]) for r in ranks.values())))
    ours = {}
    for rank, (calls, work, steps) in sorted(ranks.items()):
        per = [step_figures(calls, work, *steps[n]) for n in common]
        ours[rank] = {"per_step": per}
        for key in per[0]:
            ours[rank][key] = sum(x[key] for x in per)
    straggler = min(ours, key=lambda r: (ours[r]["comm_ns"], r))
    for rank, f in ours.items():
        f["wait_ns"] = 0 if rank == straggler else sum(
            max(0, a["comm_ns"] - b["comm_ns"])
            for a, b in zip(f["per_step"], ours[straggler]["per_step"]))
    return ours, straggler, common, files


def main():
    fusebox = sys.argv[1]
    paths = [a for a in sys.argv[2:] if not a.startswith("--")]
    ours, straggler, common, _ = rank_figures(paths)
    report = json.loads(subprocess.run([fusebox, "trace", *paths, "--json"], check=True,
                                       capture_output=True, text=True).stdout)["ranks"]
    theirs = {r["rank"]: r for r in report["ranks"]}
    if "--print" in sys.argv:
        print(json.dumps({"python": {r: {k: v for k, v in f.items() if k != "per_step"}
                                     for r, f in ours.items()},
                          "fusebox": theirs, "straggler": straggler}, indent=2))
    bad = []
    if report["straggler"] != straggler:
        bad.append(f"straggler: fusebox {report['straggler']}, python {straggler}")
    if report["steps"] != common:
        bad.append(f"steps: fusebox {report['steps']}, python {common}")
    checked = 0
    for rank, f in ours.items():
        if rank not in theirs:
            bad.append(f"rank {rank}: missing from fusebox's ranks")
            continue
        for key, want in f.items():
            if key == "per_step":
                continue
            checked += 1
            got = theirs[rank][key]
            if abs(got - want) > 1e-3 * max(abs(want), 1):
                bad.append(f"rank {rank} {key}: fusebox {got}, python {want}")
    for line in bad:
        print(f"rank_totals: {line}", file=sys.stderr)
    print(f"rank_totals: {len(ours)} ranks, {len(common)} common steps, {checked} figures, "
          f"straggler rank {straggler}: {len(bad)} disagreements")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
