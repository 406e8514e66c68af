#!/usr/bin/env bash
# Runs a test binary with the CPU kernels forced to one instruction-set level (FUSEBOX_ISA), so
# that one machine tests every path it can run: on an AVX-512 machine the AVX2 and portable paths
# too, on an AVX2 machine the portable one. Exits 77 (CTest: skipped, with the reason) when the
# CPU lacks the level or when it is the level `auto` already runs (the suite's plain run covers it).
# Usage: tools/isa-suite.sh LEVEL BINARY [ARGS...]
set -euo pipefail
level=$1
shift
flags=$(grep -m1 '^flags' /proc/cpuinfo || true)
has() { [[ " $flags " == *" $1 "* ]]; }
best=portable
if has avx2 && has fma; then best=avx2; fi
if has avx512f && has avx512bw && has avx512dq && has avx512vl && has fma; then best=avx512; fi
case $level in
  avx512) runs=$([[ $best == avx512 ]] && echo yes || echo no) ;;
  avx2) runs=$([[ $best != portable ]] && echo yes || echo no) ;;
  portable) runs=yes ;;
  *) echo "isa-suite.sh: unknown level '$level' (avx512 | avx2 | portable)" >&2; exit 2 ;;
esac
if [[ $runs == no ]]; then
  echo "skipped: this CPU cannot run $level (it runs up to $best)"
  exit 77
fi
if [[ $level == "$best" ]]; then
  echo "skipped: $level is what auto runs here, and the suite's own run covers it"
  exit 77
fi
FUSEBOX_ISA=$level exec "$@"
