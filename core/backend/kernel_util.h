#pragma once
// Small helpers for writing kernels, shared by every backend's kernel files: typed access to
// KernelArgs and prepare-time checks whose errors name the node.
#include <cstdint>
#include <string>

#include "core/base/error.h"
#include "core/backend/kernel.h"
#include "core/ir/dtype.h"

namespace fusebox::exec {

template <typename State>
const State& state_of(const KernelArgs& args) {
  return *static_cast<const State*>(args.state);
}
template <typename T>
const T* input_ptr(const KernelArgs& args, int i) {
  return static_cast<const T*>(args.inputs[i]);
}
template <typename T>
T* output_ptr(const KernelArgs& args, int i) {
  return static_cast<T*>(args.outputs[i]);
}

// "node 'ln_1' (LayerNorm): <message>": prepare-time errors name the node a user can find.
[[noreturn]] inline void fail(const KernelContext& ctx, const std::string& message) {
  throw Error("node '" + ctx.node.name + "' (" + ctx.node.op + "): " + message);
}

// f()'s result; when f throws fusebox::Error (e.g. a core/ir function reading the node's attributes
// and shapes: ir::matmul_shape, ir::layer_norm_split), fail(ctx, its message), naming the node.
template <typename F>
auto or_fail(const KernelContext& ctx, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error& e) {
    fail(ctx, e.what());
  }
}

inline void require_dtype(const KernelContext& ctx, size_t input, ir::DType want) {
  if (input >= ctx.inputs.size()) fail(ctx, "missing input " + std::to_string(input));
  if (ctx.inputs[input].dtype != want)
    fail(ctx, "input " + std::to_string(input) + " must be " + ir::dtype_name(want) + ", got " +
                  ir::dtype_name(ctx.inputs[input].dtype));
}

inline void require_arity(const KernelContext& ctx, size_t inputs, size_t outputs) {
  if (ctx.inputs.size() < inputs || ctx.outputs.size() < outputs)
    fail(ctx, "expected " + std::to_string(inputs) + " input(s) and " + std::to_string(outputs) +
                  " output(s), got " + std::to_string(ctx.inputs.size()) + " and " +
                  std::to_string(ctx.outputs.size()));
}

}  // namespace fusebox::exec
