#pragma once
// Helpers shared by the CPU kernel files: the generic ones from core/backend/kernel_util.h (typed
// access to KernelArgs, prepare-time checks naming the node) and the grain sizes that decide when
// a loop is worth splitting across threads.
#include <cstdint>

#include "core/backend/kernel_util.h"

namespace fusebox::cpu {

using exec::fail;
using exec::input_ptr;
using exec::or_fail;
using exec::output_ptr;
using exec::require_arity;
using exec::require_dtype;
using exec::state_of;

// Grains for parallel_for (ops/cpu/parallel.h): about how many items one core does in a
// microsecond, so that parallel_for can tell how long a loop is and whether splitting it pays
// for the measured fork/join: ~16K simple float ops, ~4K transcendental ones (exp/erf/tanh cost
// ~10x an add), 256 KiB of copies.
inline constexpr int64_t kGrainSimple = 16384;
inline constexpr int64_t kGrainMath = 4096;
inline constexpr int64_t kGrainCopyBytes = 256 * 1024;

}  // namespace fusebox::cpu
