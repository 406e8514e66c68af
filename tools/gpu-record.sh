#!/usr/bin/env bash
# The project's own GPU recordings, made on a lent GPU after tools/gpu-check.sh passed: what the
# profilers fusebox reads record of a real generate loop and of fusebox's own CUDA backend.
#   1. tools/gpu_record_traces.py: a small GPT-style decoder (bf16, random weights) generating
#      with a static KV cache, as two PyTorch profiler traces: decode steps launched op by op, and
#      each decode step one CUDA graph replay; and under Nsight Compute (prefill + 2 decode steps,
#      the same kernels), exported as the details and raw CSV pages.
#   2. fusebox's CUDA backend profiling `transformer`, op by op and as a captured CUDA graph.
#   3. What fusebox says of each: `fusebox trace` and `fusebox kernels`, and nvidia-smi's view.
#
# Usage: tools/gpu-record.sh OUT_DIR [--cli PATH]    (PATH default build-gpu/app/cli/fusebox)
# Each command runs under a time limit (FUSEBOX_GPU_RECORD_TIMEOUT, default 180 s); its stdout,
# stderr and exit status are kept in OUT_DIR/<name>.{out,err,rc}. Exit status: 0 when every
# recording was made, else 1.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[[ $# -ge 1 && $1 != -* ]] || { sed -n '2,15p' "$0"; exit 64; }
out=$1; shift
cli=$root/build-gpu/app/cli/fusebox
while [[ $# -gt 0 ]]; do
  case $1 in
    --cli) cli=$2; shift 2 ;;
    *) echo "gpu-record: unknown option '$1'" >&2; exit 64 ;;
  esac
done
mkdir -p "$out"
limit=${FUSEBOX_GPU_RECORD_TIMEOUT:-180}
failed=0

# rec NAME COMMAND...: run one recording step under the time limit, keeping what it printed.
rec() {
  local name=$1; shift
  local t0=$SECONDS
  timeout "$limit" "$@" > "$out/$name.out" 2> "$out/$name.err"
  local rc=$?
  echo "$rc" > "$out/$name.rc"
  echo "gpu-record: $name: exit $rc in $((SECONDS - t0)) s"
  [[ $rc == 0 ]] || failed=1
}

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem --format=csv \
  > "$out/nvidia-smi.csv" 2>&1 || true

rec torch_eager python3 "$root/tools/gpu_record_traces.py" --mode eager --out "$out/gpt_decode_eager.json.gz"
rec torch_graph python3 "$root/tools/gpu_record_traces.py" --mode graph --out "$out/gpt_decode_cudagraph.json.gz"

ncu=$(command -v ncu || true)
[[ -n $ncu ]] || { [[ -x /usr/local/cuda/bin/ncu ]] && ncu=/usr/local/cuda/bin/ncu; }
if [[ -n $ncu ]]; then
  source "$root/tools/ncu-sections.sh"
  ncu_sections "$ncu" "$out/ncu-sections.txt"
  rec ncu_gpt "$ncu" --clock-control none --profile-from-start off "${NCU_SECTION_ARGS[@]}" -f -o "$out/gpt_ncu" \
    python3 "$root/tools/gpu_record_traces.py" --mode ncu
  rec ncu_details "$ncu" --import "$out/gpt_ncu.ncu-rep" --csv --page details
  mv "$out/ncu_details.out" "$out/gpt_ncu.details.csv"
  rec ncu_raw "$ncu" --import "$out/gpt_ncu.ncu-rep" --csv --page raw
  mv "$out/ncu_raw.out" "$out/gpt_ncu.raw.csv"
  rec kernels_gpt "$cli" kernels "$out/gpt_ncu.details.csv"
else
  echo "gpu-record: Nsight Compute (ncu) is not installed; no kernel-level recording" | tee "$out/ncu-missing.txt"
fi

rec fb_profile_eager "$cli" profile transformer --backend cuda --out "$out/fb_transformer"
rec fb_profile_graph "$cli" profile transformer --backend cuda --capture on --out "$out/fb_transformer_graph"
rec fb_run_cpu "$cli" run transformer --backend cpu --threads 8 --json
rec fb_run_cuda "$cli" run transformer --backend cuda --json
rec fb_run_cuda_graph "$cli" run transformer --backend cuda --capture on --json

for t in gpt_decode_eager gpt_decode_cudagraph; do
  [[ -f $out/$t.json.gz ]] && rec "trace_$t" "$cli" trace "$out/$t.json.gz"
done
for d in fb_transformer fb_transformer_graph; do
  [[ -f $out/$d/trace.json ]] && rec "trace_$d" "$cli" trace "$out/$d/trace.json"
done
exit $failed
