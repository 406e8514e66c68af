#!/usr/bin/env python3
"""Writes a kineto (PyTorch profiler) trace of about N events with a real job's shape, for the
large-trace measurements: per ProfilerStep#k a step range, module annotations, aten ops on the
main thread, each with its cudaLaunchKernel call and kernel (on 4 streams, joined by correlation
id and an ac2g flow pair), and one NCCL all-reduce per step. Usage:
make_big_trace.py OUT.json.gz N [--plain]   (gzip'd unless --plain)"""
import gzip
import json
import sys


def main():
    out, n = sys.argv[1], int(sys.argv[2])
    plain = "--plain" in sys.argv
    fh = open(out, "w") if plain else gzip.open(out, "wt", compresslevel=1)
    fh.write('{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100", '
             '"numSms": 132, "totalGlobalMem": 85000000000}],\n"distributedInfo": {"rank": 0, '
             '"world_size": 8, "backend": "nccl"},\n"traceEvents": [\n')
    first = [True]

    def emit(e):
        fh.write(("" if first[0] else ",\n") + json.dumps(e, separators=(",", ":")))
        first[0] = False

    t, corr, written, step = 1_000_000.0, 1, 0, 0
    ops_per_step = 200
    while written < n:
        step_start = t
        body = []
        for i in range(ops_per_step):
            s = t + 1.0
            name = ("aten::mm", "aten::add", "aten::gelu", "aten::layer_norm")[i % 4]
            body.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": s, "dur": 8.0,
                         "args": {"External id": corr}})
            body.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                         "ts": s + 2.0, "dur": 4.0, "args": {"correlation": corr}})
            kname = ("ampere_sgemm_128x64_tn", "vectorized_elementwise_kernel<4, add>",
                     "gelu_kernel<float>", "layer_norm_kernel<float>")[i % 4]
            ks = s + 10.0 + (i % 3)
            body.append({"ph": "X", "cat": "kernel", "name": kname, "pid": 0, "tid": 7 + i % 4, "ts": ks,
                         "dur": 6.0, "args": {"correlation": corr, "device": 0, "stream": 7 + i % 4,
                                              "grid": [128, 1, 1], "block": [256, 1, 1]}})
            body.append({"ph": "s", "id": corr, "pid": 1, "tid": 1, "ts": s + 2.0, "cat": "ac2g", "name": "ac2g"})
            body.append({"ph": "f", "id": corr, "pid": 0, "tid": 7 + i % 4, "ts": ks, "cat": "ac2g",
                         "name": "ac2g", "bp": "e"})
            corr += 1
            t += 10.0
        body.append({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)",
                     "pid": 0, "tid": 20, "ts": t + 5, "dur": 200.0,
                     "args": {"correlation": 0, "device": 0, "stream": 20, "Collective name": "allreduce",
                              "In msg nelems": 1048576, "Out msg nelems": 1048576, "Group size": 8,
                              "dtype": "Float"}})
        t += 250.0
        emit({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}", "pid": 1, "tid": 1,
              "ts": step_start, "dur": t - step_start})
        emit({"ph": "X", "cat": "user_annotation", "name": "## forward ##", "pid": 1, "tid": 1,
              "ts": step_start + 0.5, "dur": t - step_start - 1.0})
        for e in body:
            emit(e)
        written += len(body) + 2
        step += 1
    fh.write("\n]}\n")
    fh.close()
    print(f"{out}: {written} events, {step} steps")


if __name__ == "__main__":
    main()
