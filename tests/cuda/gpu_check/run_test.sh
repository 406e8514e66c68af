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
echo "gpu_check_report: ok"
