#!/usr/bin/env bash
# The first hour on a GPU, in one command: builds fusebox with the CUDA plugin, runs the CUDA
# self-test, the device tests with FUSEBOX_REQUIRE_CUDA=1 (a skip is a failure), the self-test
# under compute-sanitizer (memcheck, racecheck) where it is installed, profiles `stack` on the GPU
# and checks that every kernel is tied to an op, then writes ONE markdown report: each step's
# result, the self-test table, the device tests' summary, the sanitizers' summaries, the kernel
# check and the CPU vs GPU latency per model (tools/gpu_check_report.py writes it from the logs).
# Where Nsight Compute (ncu) is installed it also profiles `stack`'s kernels and reads the export
# back with `fusebox kernels` (step 5); where it is not, step 5 says so.
#
# Usage: tools/gpu-check.sh [--build-dir DIR] [--report FILE] [--no-build]
#   --build-dir DIR  build here (default build-gpu; Release, warnings as errors, FUSEBOX_CUDA=ON)
#   --report FILE    the report (default DIR/gpu-check-report.md); the logs go beside it
#   --no-build       use DIR as it is
# Exit status: 0 when every step passed; otherwise the number of the first step that failed.
# Without a usable GPU it stops at step 1 with the plugin's own sentence (e.g. "no NVIDIA driver:
# libcuda.so.1 was not found ...") and exit status 1.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=build-gpu
report=
do_build=1
while [[ $# -gt 0 ]]; do
  case $1 in
    --build-dir) build=$2; shift 2 ;;
    --report) report=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown option '$1' (see --help)" >&2; exit 64 ;;
  esac
done
cd "$root"
[[ -n $report ]] || report=$build/gpu-check-report.md
logs=$(dirname "$report")/gpu-check-logs
rm -rf "$logs"
mkdir -p "$logs"
status_file=$logs/status.tsv
: > "$status_file"
cli=$build/app/cli/fusebox
first_failed=0

# step NUMBER NAME RESULT DETAIL: one line of the report's step table.
step() {
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >> "$status_file"
  echo "gpu-check: step $1 ($2): $3${4:+: $4}"
  if [[ $3 == FAIL && $first_failed == 0 ]]; then first_failed=$1; fi
}

write_report() {
  python3 "$root/tools/gpu_check_report.py" --logs "$logs" --out "$report" &&
    echo "gpu-check: report written to $report"
}

stop() {
  write_report
  echo "gpu-check: stopped at step $first_failed" >&2
  exit "$first_failed"
}

# 1. Build with the plugin, and ask it whether CUDA runs here (the self-test, as JSON).
if [[ $do_build == 1 ]]; then
  if ! { cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFUSEBOX_WERROR=ON -DFUSEBOX_CUDA=ON \
           -DFUSEBOX_UI=OFF && cmake --build "$build" --target fusebox fusebox_cuda test_cuda_device; } \
         > "$logs/build.log" 2>&1; then
    step 1 "build with the CUDA plugin" FAIL "the build failed: $(tail -n 3 "$logs/build.log" | tr '\n\t' '  ')"
    stop
  fi
fi
if [[ ! -x $cli ]]; then
  step 1 "build with the CUDA plugin" FAIL "no $cli (build first, or drop --no-build)"
  stop
fi
"$cli" selftest --backend cuda --json > "$logs/selftest.json" 2> "$logs/selftest.err"
rc=$?
if [[ $rc == 2 ]]; then
  # The backend cannot run here: the plugin's sentence is the CLI's error.
  step 1 "CUDA backend and self-test" FAIL "$(sed 's/^fusebox: error: //' "$logs/selftest.err" | head -n 1)"
  cat "$logs/selftest.err" >&2
  stop
elif [[ $rc != 0 ]]; then
  step 1 "CUDA backend and self-test" FAIL "the self-test failed (exit $rc): $(tail -n 1 "$logs/selftest.err")"
else
  step 1 "CUDA backend and self-test" pass "$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["passed"], "passed,", j["failed"], "failed,", j["not_applicable"], "not applicable")' "$logs/selftest.json")"
fi

# 2. The device tests; with FUSEBOX_REQUIRE_CUDA=1 a skip is a failure.
if FUSEBOX_REQUIRE_CUDA=1 ctest --test-dir "$build" -L device --output-on-failure > "$logs/ctest.log" 2>&1; then
  step 2 "device tests (FUSEBOX_REQUIRE_CUDA=1)" pass "$(grep -E 'tests passed' "$logs/ctest.log" | tail -n 1)"
else
  step 2 "device tests (FUSEBOX_REQUIRE_CUDA=1)" FAIL "$(grep -E 'tests passed|No tests were found' "$logs/ctest.log" | tail -n 1)"
fi

# 3. The self-test under compute-sanitizer.
sanitizer=$(command -v compute-sanitizer || true)
[[ -n $sanitizer ]] || { [[ -x /usr/local/cuda/bin/compute-sanitizer ]] && sanitizer=/usr/local/cuda/bin/compute-sanitizer; }
if [[ -z $sanitizer ]]; then
  step 3 "compute-sanitizer" skipped "compute-sanitizer is not installed (it comes with the CUDA toolkit)"
else
  for tool in memcheck racecheck; do
    # A time limit, so a sanitizer that stalls on a machine's runtime ends as a failed step.
    if timeout "${FUSEBOX_GPU_CHECK_STEP_TIMEOUT:-300}" "$sanitizer" --tool "$tool" --error-exitcode 99 \
         "$cli" selftest --backend cuda > "$logs/sanitizer-$tool.log" 2>&1; then
      step 3 "compute-sanitizer --tool $tool" pass "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$logs/sanitizer-$tool.log" | tail -n 1)"
    else
      step 3 "compute-sanitizer --tool $tool" FAIL "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$logs/sanitizer-$tool.log" | tail -n 1)"
    fi
  done
fi

# 4. Profile `stack` on the GPU: every kernel of the trace must carry its op's node index.
if "$cli" profile stack --backend cuda --out "$logs/profile-stack" > "$logs/profile.log" 2>&1; then
  if check=$(python3 "$root/tools/gpu_check_report.py" --check-trace "$logs/profile-stack/trace.json"); then
    step 4 "profile stack: kernels tied to ops" pass "$check"
  else
    step 4 "profile stack: kernels tied to ops" FAIL "$check"
  fi
else
  step 4 "profile stack: kernels tied to ops" FAIL "fusebox profile failed: $(tail -n 1 "$logs/profile.log")"
fi

# 5. Nsight Compute on our own kernels: profile one run of `stack` (the sections fusebox kernels
# reads, those this ncu has), export the details and raw pages as CSV, and read them back.
ncu=$(command -v ncu || true)
[[ -n $ncu ]] || { [[ -x /usr/local/cuda/bin/ncu ]] && ncu=/usr/local/cuda/bin/ncu; }
if [[ -z $ncu ]]; then
  step 5 "ncu: stack's kernels read by fusebox kernels" skipped "Nsight Compute (ncu) is not installed on this machine"
else
  source "$root/tools/ncu-sections.sh"
  ncu_sections "$ncu" "$logs/ncu-sections.txt"
  # --clock-control none: leave the GPU's clocks as they are (what the kernels ran at).
  if timeout "${FUSEBOX_GPU_CHECK_STEP_TIMEOUT:-300}" "$ncu" --clock-control none -c 200 "${NCU_SECTION_ARGS[@]}" -f \
       -o "$logs/ncu-stack" "$cli" run stack --backend cuda --warmup 0 --iters 1 > "$logs/ncu.log" 2>&1 &&
     "$ncu" --import "$logs/ncu-stack.ncu-rep" --csv --page details > "$logs/ncu-stack.details.csv" 2>> "$logs/ncu.log" &&
     "$ncu" --import "$logs/ncu-stack.ncu-rep" --csv --page raw > "$logs/ncu-stack.raw.csv" 2>> "$logs/ncu.log"; then
    if "$cli" kernels "$logs/ncu-stack.details.csv" --json > "$logs/kernels-stack.json" 2> "$logs/kernels.err" &&
       check=$(python3 "$root/tools/gpu_check_report.py" --check-kernels "$logs/ncu-stack.raw.csv" "$logs/kernels-stack.json"); then
      step 5 "ncu: stack's kernels read by fusebox kernels" pass "$check"
    else
      step 5 "ncu: stack's kernels read by fusebox kernels" FAIL "${check:-fusebox kernels failed: $(head -n 1 "$logs/kernels.err")}"
    fi
  else
    step 5 "ncu: stack's kernels read by fusebox kernels" FAIL "ncu failed: $(grep -m1 -E 'ERR|rror' "$logs/ncu.log" || tail -n 1 "$logs/ncu.log")"
  fi
fi

write_report
if [[ $first_failed != 0 ]]; then
  echo "gpu-check: step $first_failed failed; see $report" >&2
  exit "$first_failed"
fi
