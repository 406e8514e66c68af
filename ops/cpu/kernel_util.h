#pragma once
// Small helpers shared by the CPU kernel files: typed access to KernelArgs, prepare-time checks
// whose errors name the node, and the grain sizes that decide when a loop is worth splitting
// across threads.
#include <cstdint>
#include <string>

#include "core/base/error.h"
#include "core/exec/kernel.h"
#include "core/ir/dtype.h"

namespace fusebox::cpu {

// Grains for parallel_for (ops/cpu/parallel.h): about how many items one core does in a
// microsecond, so that parallel_for can tell how long a loop is and whether splitting it pays
// for the measured fork/join: ~16K simple float ops, ~4K transcendental ones (exp/erf/tanh cost
// ~10x an add), 256 KiB of copies.
inline constexpr int64_t kGrainSimple = 16384;
inline constexpr int64_t kGrainMath = 4096;
inline constexpr int64_t kGrainCopyBytes = 256 * 1024;

template <typename State>
const State& state_of(const exec::KernelArgs& args) {
  return *static_cast<const State*>(args.state);
}
template <typename T>
const T* input_ptr(const exec::KernelArgs& args, int i) {
  return static_cast<const T*>(args.inputs[i]);
}
template <typename T>
T* output_ptr(const exec::KernelArgs& args, int i) {
  return static_cast<T*>(args.outputs[i]);
}

// "node 'ln_1' (LayerNorm): <message>": prepare-time errors name the node a user can find.
[[noreturn]] inline void fail(const exec::KernelContext& ctx, const std::string& message) {
  throw Error("node '" + ctx.node.name + "' (" + ctx.node.op + "): " + message);
}

inline void require_dtype(const exec::KernelContext& ctx, size_t input, ir::DType want) {
  if (input >= ctx.inputs.size()) fail(ctx, "missing input " + std::to_string(input));
  if (ctx.inputs[input].dtype != want)
    fail(ctx, "input " + std::to_string(input) + " must be " + ir::dtype_name(want) + ", got " +
                  ir::dtype_name(ctx.inputs[input].dtype));
}

inline void require_arity(const exec::KernelContext& ctx, size_t inputs, size_t outputs) {
  if (ctx.inputs.size() < inputs || ctx.outputs.size() < outputs)
    fail(ctx, "expected " + std::to_string(inputs) + " input(s) and " + std::to_string(outputs) +
                  " output(s), got " + std::to_string(ctx.inputs.size()) + " and " +
                  std::to_string(ctx.outputs.size()));
}

}  // namespace fusebox::cpu
