#!/bin/sh
# CTest's cuda_selftest: `fusebox selftest --backend cuda` ($1 is the CLI). Where the backend
# cannot run, the CLI says "backend 'cuda' is unavailable: <why>" and CTest shows the test as
# Skipped (SKIP_REGULAR_EXPRESSION). With FUSEBOX_REQUIRE_CUDA=1 that is a failure instead, said
# without the words the skip pattern looks for.
out=$("$1" selftest --backend cuda 2>&1)
status=$?
if [ "${FUSEBOX_REQUIRE_CUDA:-}" = 1 ] && printf '%s\n' "$out" | grep -q "backend 'cuda' is unavailable"; then
  printf '%s\n' "$out" | sed "s/backend 'cuda' is unavailable/FUSEBOX_REQUIRE_CUDA=1, and the CUDA backend cannot run/"
  exit 1
fi
printf '%s\n' "$out"
exit "$status"
