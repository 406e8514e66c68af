#!/usr/bin/env bash
# Sets up, builds and runs the main job: the fusebox CLI on the default model (a transformer
# encoder block), unoptimized and then with every pass, so the difference is on screen.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$(nproc)"
./build/app/cli/fusebox run transformer --passes none --iters 200
echo
./build/app/cli/fusebox run transformer --passes all --iters 200 --explain
