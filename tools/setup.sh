#!/usr/bin/env bash
# Installs the Debian 12 packages fusebox needs to build and test. Idempotent; run as root
# (or with sudo available). Usage: tools/setup.sh [--peers]
#   --peers  also installs what the peer benchmark and the model exports need (python3-torch,
#            python3-torchvision, python3-onnx).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libopenblas-openmp-dev     # CBLAS for MatMul, sharing OpenMP threads with our kernels
  nlohmann-json3-dev         # scenario files, JSON reports
  libcli11-dev               # the fusebox CLI
  libgtest-dev libgmock-dev  # unit tests
  libbenchmark-dev           # dispatch benchmarks
  libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata  # ONNX import and conformance
  libsqlite3-dev             # nsys-schema export
  zlib1g-dev                 # reading gzip'd PyTorch profiler (kineto) traces
  libsimdjson-dev            # the kineto importer's fast JSON reader
  libzstd-dev                # saved traces (fusebox trace --save)
  libhwy-dev                 # Highway: the CPU kernels' vector code, written once for every ISA
  libgraphviz-dev            # graph layout
  libimgui-dev libglfw3-dev libgl-dev libstb-dev fonts-dejavu-core  # the workbench
  xvfb xauth libgl1-mesa-dri # headless UI tests
  python3-jsonschema         # validates the scenario files against their schema
  python3-numpy              # the conv nets' check against PyTorch's outputs (CTest torchvision_models)
  clang libclang-rt-14-dev   # fuzzing and sanitizers
)
if [[ ${1:-} == --peers ]]; then
  packages+=(python3-torch python3-torchvision python3-onnx)
  # ONNX Runtime comes from npm (onnxruntime-node); node and npm are expected on PATH.
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "setup: all ${#packages[@]} packages present"
