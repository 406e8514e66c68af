#!/usr/bin/env python3
"""A kineto trace whose kernels are the shipped Nsight Compute exports' launches, for the kernel
level beside a trace (`fusebox trace T --kernels NCU`, the window's kernels=PATH).

  make_kernel_level_trace.py NCU_DIR OUT.json

Not a recording: each of the exports' launches (tests/data/ncu/rtx5090_deepseek_ocr) becomes a
kernel of one stream, named as kineto names kernels ("void " before a name ncu prints without a
return type, "at::native::" before PyTorch's elementwise kernels), with the launch geometry and
duration ncu measured, repeated over 4 steps with a launch call each; and two kernels ncu did not
profile. Standard library only: the CSV is read with `csv`.
"""
import csv
import glob
import json
import os
import sys


def launches(ncu_dir):
    out = []
    for path in sorted(glob.glob(os.path.join(ncu_dir, "*", "ncu.details.csv"))):
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        first = rows[0]
        dur = next(float(r["Metric Value"].replace(",", "")) for r in rows
                   if r["Section Name"] == "GPU Speed Of Light Throughput" and r["Metric Name"] == "Duration")
        unit = next(r["Metric Unit"] for r in rows
                    if r["Section Name"] == "GPU Speed Of Light Throughput" and r["Metric Name"] == "Duration")
        us = dur / 1000 if unit in ("ns", "nsecond") else dur * 1000 if unit in ("ms", "msecond") else dur
        geometry = lambda s: [int(v) for v in s.strip("()").split(",")]
        out.append((first["Kernel Name"], geometry(first["Grid Size"]), geometry(first["Block Size"]), us))
    return out


def kineto_name(name):
    for pytorch in ("vectorized_elementwise_kernel", "unrolled_elementwise_kernel", "elementwise_kernel"):
        if name.startswith("void " + pytorch):
            return "void at::native::" + name[len("void "):]
    return name if name.startswith("void ") or "::type " in name else "void " + name


def main():
    ncu_dir, out = sys.argv[1], sys.argv[2]
    kernels = [(kineto_name(n), g, b, us) for n, g, b, us in launches(ncu_dir)]
    kernels += [("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float> >(at::native::ReduceOp<float>)",
                 [64, 1, 1], [512, 1, 1], 21.0),
                ("void at::native::index_select_kernel<float>(float*, long*)", [96, 1, 1], [256, 1, 1], 8.0)]
    events, t, corr = [], 100.0, 1
    for step in range(4):
        events.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % step, "pid": 100, "tid": 100,
                       "ts": t - 50, "dur": 0})
        start = t
        for name, grid, block, us in kernels:
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 100,
                           "ts": t - 8, "dur": 4, "args": {"correlation": corr}})
            events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": round(t, 3),
                           "dur": round(us, 3), "args": {"device": 0, "stream": 7, "correlation": corr,
                                                         "grid": grid, "block": block}})
            t += us + 2
            corr += 1
        events[-2 * len(kernels) - 1]["dur"] = round(t - start + 50, 3)
        t += 40
    with open(out, "w") as f:
        json.dump({"traceEvents": events, "displayTimeUnit": "ns"}, f, indent=0)
        f.write("\n")


if __name__ == "__main__":
    main()
