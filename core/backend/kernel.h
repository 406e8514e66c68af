#pragma once
// Kernels: how a backend computes one op. A kernel is two functions:
//  - prepare(ctx): runs once per node when a plan is compiled (or per call in the eager
//    executor). It reads attributes and shapes and returns the state run() needs (dims, strides,
//    parsed programs). It may throw fusebox::Error for what the kernel cannot do.
//  - run(args): does the work on raw pointers. It never allocates, never looks anything up:
//    every decision was made in prepare(). The one exception it may throw is fusebox::Error for
//    input data it cannot compute on (a Gather index out of range), checked on the calling thread
//    before any work is split across threads.
// A KernelTable maps op names to kernels: a Registry (core/base/registry.h) like every other
// table, so find/get/names read the same. Each backend owns one (the kernel table keyed by
// (op, backend) is the set of backends' tables).
#include <cstdint>
#include <functional>
#include <utility>
#include <memory>
#include <string>
#include <vector>

#include "core/base/registry.h"
#include "core/ir/node.h"
#include "core/ir/op_schema.h"
#include "core/ir/tensor.h"

namespace fusebox::exec {

// What a kernel runs with, owned by its backend and handed out by it (Backend::context()): the
// stream its work goes on and the libraries' handles, as opaque pointers so core needs no device
// headers (on CUDA: cudaStream_t, cublasHandle_t, ...). The CPU backend's is all null. Valid
// while the backend lives; a kernel only reads it.
struct ExecContext {
  int32_t device = 0;
  void* stream = nullptr;   // the stream kernels launch on (null: the device's default)
  void* blas = nullptr;     // the BLAS library's handle (cuBLAS)
  void* dnn = nullptr;      // the DNN library's handle (cuDNN)
  void* backend_data = nullptr;  // anything else the backend's own kernels share
};

// How one compiled run is configured: passed to compile() as an argument and on to every
// kernel's prepare() (KernelContext::options), never set on a backend, so two runs on one backend
// with different settings never change each other's. Backend::resolve() checks a set against what
// the backend offers (BackendCaps) and makes "auto" the level it picks.
// A backend plugin only reads these, through KernelContext::options, and never makes one: a new
// setting is appended at the end, where it moves none of the fields an older plugin reads, so
// adding one changes no plugin ABI (plugin_abi.h, version 6).
struct CompileOptions {
  // Instruction-set level of a backend with several (BackendCaps::isa_levels): "auto", or one of
  // them; resolved, the level itself, or "" for a backend with one.
  std::string isa = "auto";
  // Precision of the float GEMMs (the MatMul family), one of BackendCaps::precisions: "fp32" (IEEE
  // single throughout) or "tf32" (inputs rounded to TF32's 10-bit mantissa on tensor cores, fp32
  // accumulation: faster, about 1e-3 relative error).
  std::string precision = "fp32";
  // The MatMul family's GEMMs: "auto" (the backend's own kernels: on the CPU, micro-kernels on
  // weights packed at compile time, bias and activation applied in registers) or "blas" (a plain
  // BLAS sgemm on the weight as stored, bias and activation as passes over the output: what the
  // packing and the epilogue buy). Backends with one path take "auto" only.
  std::string gemm = "auto";
};

struct KernelArgs {
  const void* const* inputs = nullptr;  // one pointer per node input (device memory)
  void* const* outputs = nullptr;       // one pointer per node output
  void* scratch = nullptr;              // planner-given scratch region (Backend::scratch_bytes)
  const void* state = nullptr;          // what prepare() returned
  const ExecContext* context = nullptr;  // the backend's (Backend::context()); never null in executors
};

using KernelFn = void (*)(const KernelArgs&);

struct KernelContext {
  const ir::Node& node;
  const std::vector<ir::TensorType>& inputs;
  const std::vector<ir::TensorType>& outputs;
  size_t scratch_bytes = 0;
  // Host values of the inputs that are weights (null entries for the others), when known at
  // prepare time: a kernel may repack a weight once here (e.g. GEMM panels) and keep the packed
  // copy in its state. May be null altogether (e.g. when folding constants).
  const std::vector<const ir::Tensor*>* constants = nullptr;
  // What the kernel will run with (its backend's context()): device facts a kernel sizes itself
  // by in prepare (a GPU's shared-memory limit). May be null (constant folding, tests).
  const ExecContext* context = nullptr;
  // The run's settings, resolved (Backend::resolve): the CPU kernels' instruction-set level, the
  // GPU GEMMs' precision, fixed once in prepare. May be null (constant folding, tests): a kernel
  // then takes the backend's default.
  const CompileOptions* options = nullptr;
};

using PrepareFn = std::function<std::shared_ptr<const void>(const KernelContext&)>;
// The scratch a kernel needs in this context (its constants included: a weight packed in prepare
// needs no room to be packed at run time). Asked by the planner and by the program with the same
// context, so the region placed is the region prepare() is given.
using ScratchSizeFn = std::function<size_t(const KernelContext&)>;

struct KernelDef {
  KernelDef() = default;
  KernelDef(PrepareFn p, KernelFn r, ScratchSizeFn s = {}) : prepare(std::move(p)), run(r), scratch(std::move(s)) {}

  PrepareFn prepare;  // may be empty: run() gets state == nullptr
  KernelFn run = nullptr;
  ScratchSizeFn scratch;  // may be empty: the op schema's scratch_bytes
};

struct KernelTable : Registry<KernelDef> {
  KernelTable() : Registry<KernelDef>("kernel") {}
};

// Helper for prepare functions: wraps a state value into the shared pointer prepare returns.
template <typename State>
std::shared_ptr<const void> make_state(State state) {
  return std::make_shared<const State>(std::move(state));
}

}  // namespace fusebox::exec
