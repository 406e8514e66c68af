#!/usr/bin/env bash
# Sets up, builds and runs the main job: the workbench (fusebox-ui) on the default model, the
# transformer encoder block. Where there is no display it says so and prints the headless report
# (the same as `fusebox run transformer`). Extra arguments go to fusebox-ui (`--help` lists them).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$(nproc)" --target fusebox fusebox-ui
exec ./build/app/ui/fusebox-ui "${@:-transformer}"
