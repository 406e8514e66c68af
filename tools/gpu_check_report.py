#!/usr/bin/env python3
"""The report of tools/gpu-check.sh, written from the logs its steps left in one folder.

  gpu_check_report.py --logs DIR --out REPORT.md
  gpu_check_report.py --check-trace TRACE.json    (prints a sentence; exit 1 when a kernel has no op)
  gpu_check_report.py --check-kernels RAW.csv KERNELS.json
      (prints a sentence; exit 1 unless `fusebox kernels --json` read every launch of ncu's raw page,
       in order, each with the raw page's gpu__time_duration.sum)

What it reads from DIR (each optional but status.tsv):
  status.tsv            one line per step: number, name, result (pass | FAIL | skipped), detail
  selftest.json         `fusebox selftest --backend cuda --json`
  ctest.log             `ctest -L device` with FUSEBOX_REQUIRE_CUDA=1
  sanitizer-<tool>.log  `compute-sanitizer --tool <tool> fusebox selftest --backend cuda`
  profile-stack/trace.json  `fusebox profile stack --backend cuda`'s Chrome trace
Tested with canned logs in tests/cuda/gpu_check (CTest: gpu_check_report).
"""
import argparse
import csv
import json
import os
import re
import sys


def md_cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(md_cell(c) for c in r) + " |" for r in rows]
    return out


def check_trace(path):
    """(ok, sentence): every kernel event of a Chrome trace carries a Node Index."""
    try:
        with open(path) as f:
            trace = json.load(f)
    except (OSError, ValueError) as e:
        return False, "no trace to check (%s)" % e
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    kernels = [e for e in events if e.get("cat") == "kernel" and e.get("ph") == "X"]
    untied = [e for e in kernels if "Node Index" not in e.get("args", {})]
    if not kernels:
        return False, "the trace has no kernel: CUPTI recorded nothing (see the backend's description)"
    if untied:
        names = sorted({e.get("name", "?") for e in untied})
        shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
        return False, "%d of %d kernels are tied to no op: %s" % (len(untied), len(kernels), shown)
    return True, "all %d kernels are tied to an op" % len(kernels)


NS_PER_UNIT = {"nsecond": 1.0, "ns": 1.0, "usecond": 1e3, "us": 1e3, "msecond": 1e6, "ms": 1e6,
               "second": 1e9, "s": 1e9}


def raw_launches(path):
    """(names, durations_ns) from ncu's --page raw CSV: a header row of metric names, a row of
    units, then one row per kernel launch; ==PROF== lines and text before the header skipped."""
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(line for line in f if not line.startswith("=="))]
    start = next(i for i, r in enumerate(rows) if "Kernel Name" in r)
    header, units, launches = rows[start], rows[start + 1], rows[start + 2:]
    name_col = header.index("Kernel Name")
    dur_col = header.index("gpu__time_duration.sum")
    scale = NS_PER_UNIT[units[dur_col].strip()]
    names, durs = [], []
    for r in launches:
        if len(r) != len(header):
            continue
        names.append(r[name_col])
        durs.append(float(r[dur_col].replace(",", "")) * scale)
    return names, durs


def check_kernels(raw_csv, kernels_json):
    """(ok, sentence): fusebox kernels read the launches the raw page holds, with its durations."""
    try:
        names, durs = raw_launches(raw_csv)
        with open(kernels_json) as f:
            got = json.load(f)["kernels"]
    except (OSError, ValueError, KeyError, StopIteration) as e:
        return False, "cannot compare the raw page with fusebox kernels (%s: %s)" % (type(e).__name__, e)
    if not names:
        return False, "ncu recorded no kernel launch"
    if len(got) != len(names):
        return False, "ncu's raw page has %d launches, fusebox kernels read %d" % (len(names), len(got))
    bad = [i for i, (k, d) in enumerate(zip(got, durs))
           if k.get("duration_ns") is None or abs(k["duration_ns"] - d) > 1e-6 * max(1.0, d)]
    if bad:
        i = bad[0]
        return False, "%d of %d durations differ from the raw page, first launch %d (%s): %s ns vs %.0f ns" % (
            len(bad), len(names), i, names[i], got[i].get("duration_ns"), durs[i])
    limiters = {}
    for k in got:
        name = k.get("limiter") or "not in the report"
        limiters[name] = limiters.get(name, 0) + 1
    shown = ", ".join("%s %d" % kv for kv in sorted(limiters.items(), key=lambda kv: -kv[1]))
    return True, "fusebox kernels read all %d launches with the raw page's durations (limiters: %s)" % (
        len(names), shown)


def fmt_err(v):
    return "-" if v is None else "%.2e" % v


def write_report(logs):
    lines = ["# fusebox GPU check", ""]
    steps = []
    with open(os.path.join(logs, "status.tsv")) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 4:
                steps.append(parts)
    failed = [s for s in steps if s[2] == "FAIL"]
    selftest = None
    path = os.path.join(logs, "selftest.json")
    if os.path.exists(path) and os.path.getsize(path) > 0:
        with open(path) as f:
            selftest = json.load(f)
    if selftest:
        lines += ["Device: " + selftest.get("description", "?"), ""]
    if failed:
        lines += ["**Result: FAILED** at step %s (%s): %s" % (failed[0][0], failed[0][1], failed[0][3]), ""]
    else:
        lines += ["**Result: every step passed.**", ""]
    lines += ["## Steps", ""] + table(["step", "what", "result", "detail"], steps) + [""]
    if not selftest:
        lines += ["The later steps did not run: the CUDA backend could not run here.", ""]
        return "\n".join(lines)

    rows = selftest.get("rows", [])
    models = [r for r in rows if r["kind"] == "model" and "latency_us" in r]
    if models:
        lat = []
        for r in models:
            gpu, cpu = r["latency_us"], r["cpu_latency_us"]
            ratio = "%.2fx" % (cpu / gpu) if gpu > 0 else "-"
            lat.append([r["name"], r["case"], "%.1f" % gpu, "%.1f" % cpu, ratio])
        lines += ["## CPU vs GPU latency per model", "",
                  "Median of the self-test's timed runs, compiled executor, all passes; GPU speedup: "
                  "CPU time / GPU time.", ""]
        lines += table(["model", "spec", "GPU us", "CPU us", "GPU speedup"], lat) + [""]
    lines += ["## Self-test (`fusebox selftest --backend cuda`)", "",
              "%d passed, %d failed, %d not applicable. Reference: %s." % (
                  selftest.get("passed", 0), selftest.get("failed", 0), selftest.get("not_applicable", 0),
                  selftest.get("reference", "?")), ""]
    bad = [r for r in rows if r["status"] not in ("pass", "n/a")]
    lines += table(["kind", "name", "case", "result", "max abs", "max rel", "detail"],
                   [[r["kind"], r["name"], r["case"], r["status"], fmt_err(r.get("max_abs")),
                     fmt_err(r.get("max_rel")), r.get("detail", "")] for r in bad + [r for r in rows if r not in bad]])
    lines.append("")

    path = os.path.join(logs, "ctest.log")
    if os.path.exists(path):
        with open(path) as f:
            log = f.read()
        summary = re.findall(r"^\d+% tests passed.*$", log, re.M)
        failures = re.findall(r"^\s+\d+ - (\S+) \((Failed|Timeout|Subprocess aborted|SEGFAULT|Not Run)\)", log, re.M)
        lines += ["## Device tests (`FUSEBOX_REQUIRE_CUDA=1 ctest -L device`)", "",
                  summary[-1] if summary else "no summary line in the log", ""]
        if failures:
            lines += table(["test", "result"], [[n, why] for n, why in failures]) + [""]

    sanitizers = sorted(n for n in os.listdir(logs) if n.startswith("sanitizer-") and n.endswith(".log"))
    if sanitizers:
        lines += ["## compute-sanitizer", ""]
        rows_s = []
        for name in sanitizers:
            with open(os.path.join(logs, name)) as f:
                log = f.read()
            summary = re.findall(r"^=+ (?:ERROR|RACECHECK) SUMMARY: .*$", log, re.M)
            rows_s.append([name[len("sanitizer-"):-len(".log")],
                           summary[-1].lstrip("= ") if summary else "no summary line in the log"])
        lines += table(["tool", "summary"], rows_s) + [""]

    trace = os.path.join(logs, "profile-stack", "trace.json")
    if os.path.exists(trace):
        ok, sentence = check_trace(trace)
        lines += ["## Kernels tied to ops (`fusebox profile stack --backend cuda`)", "",
                  ("pass: " if ok else "FAIL: ") + sentence, ""]
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--logs")
    p.add_argument("--out")
    p.add_argument("--check-trace")
    p.add_argument("--check-kernels", nargs=2, metavar=("RAW_CSV", "KERNELS_JSON"))
    a = p.parse_args()
    if a.check_kernels:
        ok, sentence = check_kernels(*a.check_kernels)
        print(sentence)
        return 0 if ok else 1
    if a.check_trace:
        ok, sentence = check_trace(a.check_trace)
        print(sentence)
        return 0 if ok else 1
    if not a.logs or not a.out:
        p.error("--logs and --out, or --check-trace")
    text = write_report(a.logs)
    with open(a.out, "w") as f:
        f.write(text.rstrip("\n") + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
