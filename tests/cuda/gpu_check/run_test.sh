#!/bin/sh
# CTest's gpu_check_report: tools/gpu_check_report.py (the report of tools/gpu-check.sh) fed with
# canned logs -- invented inputs, not measurements: a run that stopped at step 1 without a driver
# (no_driver/) and one that went through every step with failures in it (full/) -- against the
# reports expected from them; and the trace check's verdicts.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
writer="$here/../../../tools/gpu_check_report.py"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for case in no_driver full; do
  python3 "$writer" --logs "$here/$case" --out "$out/$case.md"
  diff -u "$here/$case.expected.md" "$out/$case.md"
done
if python3 "$writer" --check-trace "$here/full/profile-stack/trace.json" > "$out/check.txt"; then
  echo "a trace with an untied kernel passed the check"; exit 1
fi
grep -qx "1 of 2 kernels are tied to no op: sm90_xmma_gemm_f32f32" "$out/check.txt"
echo '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "args": {"Node Index": 0}}]}' > "$out/tied.json"
test "$(python3 "$writer" --check-trace "$out/tied.json")" = "all 1 kernels are tied to an op"
echo '{"traceEvents": []}' > "$out/empty.json"
if python3 "$writer" --check-trace "$out/empty.json"; then echo "a trace without kernels passed"; exit 1; fi
# The ncu step's check: fusebox kernels --json against ncu's raw page (one row per launch, a row
# of units), with ==PROF== lines around it as ncu prints them.
cat > "$out/raw.csv" <<'CSV'
==PROF== Connected to process 1
"ID","Kernel Name","Block Size","Grid Size","gpu__time_duration.sum"
"","","","","usecond"
"0","k_a","(128, 1, 1)","(80, 1, 1)","1,012.5"
"1","k_b","(256, 1, 1)","(40, 1, 1)","3"
CSV
echo '{"kernels": [{"duration_ns": 1012500, "limiter": "DRAM"}, {"duration_ns": 3000, "limiter": "DRAM"}]}' > "$out/k.json"
test "$(python3 "$writer" --check-kernels "$out/raw.csv" "$out/k.json")" = \
  "fusebox kernels read all 2 launches with the raw page's durations (limiters: DRAM 2)"
echo '{"kernels": [{"duration_ns": 1012500}, {"duration_ns": 3001}]}' > "$out/k_off.json"
if python3 "$writer" --check-kernels "$out/raw.csv" "$out/k_off.json" > "$out/off.txt"; then
  echo "a duration off by 1 ns passed the kernels check"; exit 1
fi
grep -q "1 of 2 durations differ from the raw page, first launch 1 (k_b)" "$out/off.txt"
echo '{"kernels": [{"duration_ns": 1012500}]}' > "$out/k_short.json"
if python3 "$writer" --check-kernels "$out/raw.csv" "$out/k_short.json"; then echo "a missing launch passed"; exit 1; fi
echo "gpu_check_report: ok"
