#!/usr/bin/env bash
# Sets up, builds and runs the main job: the workbench (fusebox-ui) playing the interview
# walkthrough (scenarios/interview.json: from "it is slow" to the fixed runtime, ten checked
# steps on the transformer block). Where there is no display it says so and prints the scenario's
# report (what `fusebox check` prints). Extra arguments go to fusebox-ui instead (`--help`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$(nproc)" --target fusebox fusebox-ui
exec ./build/app/ui/fusebox-ui "${@:-scenarios/interview.json}"
