#!/usr/bin/env bash
# Sets up, builds and runs every test: the Release build with warnings as errors (all CTest
# tests, the window's under Xvfb), then an AddressSanitizer + UndefinedBehaviorSanitizer build
# running the unit tests and the window's,
# then a ThreadSanitizer build running the workbench tests (the code with threads of its own).
# Usage: tools/test.sh [--no-sanitize]
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

bash tools/setup.sh
# Nsight Systems (unpacked under ~/.cache, no GPU needed) for the tests that feed our exports to
# ImportNvtxt and `nsys stats`. Without it (no network) those two tests skip, saying why.
bash tools/get-nsight-systems.sh || echo "test.sh: Nsight Systems could not be unpacked; its two checks will skip"

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DFUSEBOX_WERROR=ON
cmake --build build -j "$jobs"
# The window tests need a display: a private Xvfb server (xvfb-run), and FUSEBOX_REQUIRE_DISPLAY
# makes them fail instead of skipping should it not come up.
FUSEBOX_REQUIRE_DISPLAY=1 xvfb-run -a -s "-screen 0 1600x1000x24" \
  ctest --test-dir build --output-on-failure -j "$jobs"
# The shipped scenarios once more, for their tables: CTest ran them (scenario_check_*) and failed
# on a structural check; here the measured figures are printed.
scenarios=()
for f in scenarios/*.json; do [[ $f == */scenario.schema.json ]] || scenarios+=("$f"); done
build/app/cli/fusebox check "${scenarios[@]}"

if [[ ${1:-} != --no-sanitize ]]; then
  # The CUDA plugin is left out here: nvcc takes no sanitizer flags, and the Release run covers it.
  # The benchmarks are left out: nothing here runs them (their smoke runs are the Release build's).
  # Both sanitizer builds are unity builds (CMakeLists.txt says why and which files compile alone);
  # the Release build above compiles every file alone, so a missing #include still shows there.
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFUSEBOX_SANITIZE=ON -DFUSEBOX_WERROR=ON \
    -DFUSEBOX_CUDA=OFF -DFUSEBOX_BENCH=OFF -DCMAKE_UNITY_BUILD=ON
  cmake --build build-asan -j "$jobs"
  # The unit tests and the window's (the panels, the App, the layout thread) in one run, so the
  # window's, which take the display one at a time, run beside the others. Mesa and GLFW are not
  # instrumented, our code is. OpenMP's runtime keeps its thread pool alive past exit: leak
  # checking reports it, not us.
  ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 FUSEBOX_REQUIRE_DISPLAY=1 \
    xvfb-run -a -s "-screen 0 1600x1000x24" \
    ctest --test-dir build-asan --output-on-failure -j "$jobs" -L '^(unit|ui)$'

  # ThreadSanitizer over the workbench (Runner, Pipeline, Settings). tests/tsan.supp says how
  # OpenMP's uninstrumented runtime is handled.
  cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFUSEBOX_TSAN=ON -DFUSEBOX_WERROR=ON \
    -DFUSEBOX_UI=OFF -DFUSEBOX_CUDA=OFF -DFUSEBOX_BENCH=OFF -DCMAKE_UNITY_BUILD=ON
  cmake --build build-tsan -j "$jobs" --target test_workbench
  TSAN_OPTIONS="suppressions=$PWD/tests/tsan.supp halt_on_error=1 second_deadlock_stack=1" \
    build-tsan/tests/test_workbench
fi
