#!/usr/bin/env python3
"""The figures `fusebox kernels --json` reports for each kernel of the shipped Nsight Compute exports,
recomputed here from the CSV with Python's csv module and none of fusebox's code: duration, the
Speed Of Light throughputs and the unit nearest its peak, theoretical and achieved occupancy and
the limiting block limit (none at 100% theoretical occupancy), L1/L2 hit rates, DRAM throughput,
the scheduler statistics, ncu's rules, and the FP32 roofline at DRAM from the roofline chart's
metrics (profiler/kernel_findings.h's definitions, restated here). Usage: ncu_figures.py FUSEBOX NCU_DIR. Exit 1 on any difference."""
import csv
import glob
import json
import math
import os
import subprocess
import sys

SCALE = {"Ghz": 1e9, "Mhz": 1e6, "ns": 1, "nsecond": 1, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6, "s": 1e9, "second": 1e9,
         "byte/s": 1, "Kbyte/s": 1e3, "Mbyte/s": 1e6, "Gbyte/s": 1e9, "Tbyte/s": 1e12}


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def expected(folder):
    metrics, rules = {}, []
    name = None
    for path in sorted(glob.glob(os.path.join(folder, "*.csv"))):
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                name = row["Kernel Name"]
                if row.get("Rule Name"):
                    key = (row["Section Name"], row["Rule Name"], row["Rule Description"])
                    if key not in [(r["section"], r["name"], r["description"]) for r in rules]:
                        rules.append({"section": row["Section Name"], "name": row["Rule Name"], "type": row["Rule Type"],
                                      "description": row["Rule Description"],
                                      "speedup_type": row["Estimated Speedup Type"],
                                      "speedup_pct": number(row["Estimated Speedup"] or "x")})
                elif row["Metric Name"]:
                    metrics.setdefault((row["Section Name"], row["Metric Name"]),
                                       (row["Metric Unit"], number(row["Metric Value"])))

    def get(section, metric):
        return metrics.get((section, metric), (None, None))[1]

    def scaled(section, metric, divide=1):
        unit, value = metrics.get((section, metric), (None, None))
        return None if value is None else value * SCALE.get(unit, 1) / divide

    sol, occ, mem, sch = ("GPU Speed Of Light Throughput", "Occupancy", "Memory Workload Analysis",
                          "Scheduler Statistics")
    e = {"name": name, "duration_ns": scaled(sol, "Duration"),
         "sm_throughput_pct": get(sol, "Compute (SM) Throughput"), "memory_throughput_pct": get(sol, "Memory Throughput"),
         "l1_throughput_pct": get(sol, "L1/TEX Cache Throughput"), "l2_throughput_pct": get(sol, "L2 Cache Throughput"),
         "dram_throughput_pct": get(sol, "DRAM Throughput"),
         "theoretical_occupancy_pct": get(occ, "Theoretical Occupancy"),
         "achieved_occupancy_pct": get(occ, "Achieved Occupancy"),
         "l1_hit_pct": get(mem, "L1/TEX Hit Rate"), "l2_hit_pct": get(mem, "L2 Hit Rate"),
         "dram_gbytes_per_s": scaled(mem, "Memory Throughput", 1e9),
         "eligible_warps": get(sch, "Eligible Warps Per Scheduler"), "issued_warps": get(sch, "Issued Warp Per Scheduler"),
         "no_eligible_pct": get(sch, "No Eligible"), "rules": rules}
    units = [(u, v) for u, v in (("SM", e["sm_throughput_pct"]), ("L1/TEX", e["l1_throughput_pct"]),
                                 ("L2", e["l2_throughput_pct"]), ("DRAM", e["dram_throughput_pct"])) if v is not None]
    e["limiter"] = max(units, key=lambda uv: uv[1])[0] if units else ""  # max keeps the first of equals
    limits = [(get(occ, m), w) for m, w in (("Block Limit Registers", "registers"),
                                           ("Block Limit Shared Mem", "shared memory"), ("Block Limit Warps", "warps"),
                                           ("Block Limit SM", "SM"), ("Block Limit Barriers", "barriers"))]
    limits = [(v, w) for v, w in limits if v is not None]
    best = min(limits, key=lambda vw: vw[0]) if limits else (None, "")  # min keeps the first of equals
    e["occupancy_limit_blocks"], e["occupancy_limiter"] = best
    if e["theoretical_occupancy_pct"] is not None and e["theoretical_occupancy_pct"] >= 100:
        e["occupancy_limiter"] = ""
    e["roofline"] = roofline(scaled, metrics)
    return e


def roofline(scaled, metrics):
    chart = "GPU Speed Of Light Roofline Chart"

    def c(name):
        return scaled(chart, name)
    hz, ops = c("SM Frequency"), c("Theoretical Predicated-On FFMA Operations")
    ffma, fadd = c("Predicated-On FFMA Operations Per Cycle"), c("Predicated-On FADD Thread Instructions Executed Per Cycle")
    fmul = c("Predicated-On FMUL Thread Instructions Executed Per Cycle")
    if None in (hz, ops, ffma, fadd, fmul):
        return None
    achieved, peak = (ffma + fadd + fmul) * hz, ops * hz
    bw, bw_peak = c("DRAM Bandwidth"), c("Theoretical DRAM Bytes Accessible") * c("DRAM Frequency")
    r = {"achieved_flops": achieved, "peak_flops": peak, "dram_bytes_per_s": bw, "dram_peak_bytes_per_s": bw_peak}
    if achieved <= 0 or not bw:
        return r
    intensity = achieved / bw
    roof = min(peak, intensity * bw_peak)
    r.update({"intensity": intensity, "roof_flops": roof, "pct_of_roof": 100 * achieved / roof,
              "bound": "memory" if intensity < peak / bw_peak else "compute"})
    return r


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-12)
    return a == b


def main():
    fusebox, root = sys.argv[1], sys.argv[2]
    folders = sorted(d for d in glob.glob(os.path.join(root, "*")) if os.path.isdir(d) and glob.glob(d + "/*.csv"))
    if not folders:
        sys.exit("no kernel folders under " + root)
    got = json.loads(subprocess.run([fusebox, "kernels", root, "--json"], check=True, capture_output=True,
                                    text=True).stdout)["kernels"]
    if len(got) != len(folders):
        print("FAIL: %d kernels reported, %d folders" % (len(got), len(folders)))
        return 1
    bad = 0
    for folder, k in zip(folders, got):
        want = expected(folder)
        for key, value in want.items():
            if key == "rules":
                if len(k["rules"]) != len(value) or not all(
                        all(same(r[f], w[f]) for f in w) for r, w in zip(k["rules"], value)):
                    print("FAIL %s: rules differ" % os.path.basename(folder))
                    bad += 1
            elif key == "roofline":
                if value is None:
                    if k["roofline"]["pct_of_roof"] is not None:
                        print("FAIL %s: a roofline without the chart's metrics" % os.path.basename(folder))
                        bad += 1
                    continue
                if k["roofline"]["pct_of_roof"] is not None and k["roofline"]["pct_of_roof"] > 100:
                    print("FAIL %s: above its roof" % os.path.basename(folder))
                    bad += 1
                for f, v in value.items():
                    if not same(k["roofline"].get(f), v):
                        print("FAIL %s: roofline %s is %r, the CSV gives %r" % (os.path.basename(folder), f,
                                                                            k["roofline"].get(f), v))
                        bad += 1
            elif not same(k.get(key), value):
                print("FAIL %s: %s is %r, the CSV says %r" % (os.path.basename(folder), key, k.get(key), value))
                bad += 1
    print("ncu figures: %d kernels, %d figures compared, %d differ" % (len(folders), len(folders) * 21, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
