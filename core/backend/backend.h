#pragma once
// Backend: one device that runs plans. The interface is a small table of functions, like ggml's
// ggml_backend_i: memory (arena, weights), copies in and out, the kernel table, threads,
// synchronization and device activity. The CPU backend (ops/cpu) is always there; others (CUDA)
// are plugins registered at start-up, each able to say why it is unavailable.
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/backend/device_activity.h"
#include "core/backend/kernel.h"
#include "core/backend/worker_activity.h"
#include "core/base/registry.h"
#include "core/ir/tensor.h"

namespace fusebox::exec {

// A run a backend captured (a CUDA graph): replay() launches again, on the same device pointers,
// the work that was launched between Backend::begin_capture() and end_capture().
class CapturedRun {
 public:
  virtual ~CapturedRun() = default;
  virtual void replay() = 0;
  // What was captured, for the report ("a CUDA graph of 42 nodes").
  virtual std::string describe() const { return ""; }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;         // "cpu", "cuda"
  virtual std::string description() const = 0;  // "CPU: OpenBLAS 0.3.21 ..."
  virtual const KernelTable& kernels() const = 0;
  // Whether its memory is the host's (allocate() returns host pointers, kernels read host
  // memory): the CPU. evaluate_node (constant folding) runs only on such a backend.
  bool host_memory() const { return host_memory_; }

  // What kernels run with (KernelArgs::context): stream, library handles. Owned by the backend.
  const ExecContext* context() const { return &context_; }

  // What this backend can run, asked by the passes (no rewrite creates an op the target cannot
  // run) and the planner (arena alignment, scratch regions), like ggml's supports_op.
  // Whether it runs `op` on inputs of these types. The default: it has a kernel for `op`, whose
  // prepare() names whatever it then refuses.
  virtual bool supports(const std::string& op, const std::vector<ir::TensorType>& inputs) const;
  // Alignment, in bytes, of allocate()'s memory and of every buffer the planner places in an arena.
  virtual size_t alignment() const = 0;
  // Scratch bytes its kernel for ctx.node needs (ctx.scratch_bytes is not read): the planner
  // places that much in the arena and the kernel gets it as KernelArgs::scratch. The default: the
  // kernel's own size (KernelDef::scratch) where it has one, else the op schema's. Throws
  // fusebox::Error for an op it has no kernel for.
  virtual size_t scratch_bytes(const KernelContext& ctx) const;

  // Op events: every executor tells the backend when the kernel of graph node `node_index`
  // begins and ends (views, which do no work, get none), so a GPU backend can tag what it
  // launches in between (CUPTI external correlation ids). Only when wants_op_events(), which
  // executors read once when they are made: a backend that wants none (the CPU) costs nothing.
  bool wants_op_events() const { return wants_op_events_; }
  virtual void on_op_begin(size_t /*node_index*/) {}
  virtual void on_op_end(size_t /*node_index*/) {}

  // Capture and replay (CUDA graphs). When can_capture(), the compiled executor may call
  // begin_capture(), run its kernels once (they are recorded, not necessarily run), then
  // end_capture(), and from then on replay the result instead of launching each kernel.
  // The defaults say no: begin_capture() and end_capture() throw fusebox::Error.
  virtual bool can_capture() const { return false; }
  virtual void begin_capture();
  virtual std::unique_ptr<CapturedRun> end_capture();

  // Intra-op threads for the kernels the calling thread runs next (and the BLAS underneath
  // them): one pool per calling thread. Call it on the thread that runs the kernels, before each
  // run; a backend keeps no process-wide thread count, so two runs on two threads never change
  // each other's. Throws fusebox::Error for threads < 1.
  virtual void bind_threads(int threads) const = 0;

  // Instruction-set levels, for a backend whose kernels have several paths (the CPU: "avx512",
  // "avx2", "portable"): the ones this machine runs, best first; empty for a backend with one.
  virtual std::vector<std::string> isa_levels() const { return {}; }
  // Kernels prepared from now on use `isa` ("auto": the best this machine runs); kernels
  // prepared before keep theirs. Throws fusebox::Error naming what this machine runs when it
  // cannot run that level. The default takes only "auto".
  virtual void select_isa(const std::string& isa);
  // The level select_isa chose ("avx2"); "" for a backend with one.
  virtual std::string isa() const { return ""; }

  // Precision of the float GEMMs (the MatMul family): "fp32" (IEEE single throughout) or "tf32"
  // (inputs rounded to TF32's 10-bit mantissa on tensor cores, fp32 accumulation: faster, about
  // 1e-3 relative error). The ones this backend offers; the default offers fp32 only.
  virtual std::vector<std::string> precisions() const { return {"fp32"}; }
  // Kernels prepared from now on use `precision`; kernels prepared before keep theirs. Throws
  // fusebox::Error for one this backend does not offer, saying what it computes instead.
  virtual void select_precision(const std::string& precision);
  virtual std::string precision() const { return "fp32"; }

  // Device memory, 64-byte aligned; freed when the returned pointer's last copy goes.
  virtual std::shared_ptr<void> allocate(size_t bytes) = 0;
  // Makes a weight available on the device; the result stays valid while it is held.
  // The CPU backend returns the host bytes themselves (no copy).
  virtual std::shared_ptr<const void> upload(const ir::Tensor& weight) = 0;
  virtual void copy_to_device(void* dst, const void* src, size_t bytes) = 0;
  virtual void copy_to_host(void* dst, const void* src, size_t bytes) = 0;
  virtual void synchronize() {}
  // Activity records collected since the last call (GPU backends; empty on CPU).
  virtual std::vector<DeviceActivity> take_activity() { return {}; }
  // Worker activity (a host backend's intra-op threads): while at least one caller has said
  // record_workers(true) (and not yet false), every parallel region notes each thread's busy
  // span; take_worker_spans() returns and forgets what was noted, from every thread. Not
  // recording costs one flag read per parallel region. The defaults record nothing.
  virtual void record_workers(bool /*on*/) {}
  virtual std::vector<WorkerSpan> take_worker_spans() { return {}; }

 protected:
  ExecContext context_;           // what context() hands out; a device backend fills it
  bool wants_op_events_ = false;  // set by a backend that wants on_op_begin/on_op_end
  bool host_memory_ = false;      // set by a backend whose memory is the host's
};

using BackendFactory = std::function<std::unique_ptr<Backend>()>;

// What a lazily registered backend turns out to be once loaded: a factory, or why there is none.
struct LazyBackend {
  BackendFactory factory;
  std::string unavailable_reason;
};

// Known backends by name; one that cannot run here is registered with the reason. A
// core/base/registry.h Registry inside, behind a lock, since plugins resolve lazily from any
// thread. names() is the available ones; known() every registered one.
class BackendRegistry {
 public:
  static BackendRegistry& instance();
  void add(const std::string& name, BackendFactory factory);
  void add_unavailable(const std::string& name, const std::string& reason);
  // A backend resolved on first use (create, names, status): `load` runs once, e.g. to dlopen a
  // plugin only when someone asks about that backend.
  void add_lazy(const std::string& name, std::function<LazyBackend()> load);
  // Throws fusebox::Error with the reason (unknown name, or why it is unavailable).
  std::unique_ptr<Backend> create(const std::string& name) const;
  std::vector<std::string> names() const;  // available ones (resolves lazy ones)
  std::vector<std::string> known() const;  // every registered name; resolves nothing
  // name -> "" when available, else the reason it is not.
  std::vector<std::pair<std::string, std::string>> status() const;

 private:
  struct Entry {
    BackendFactory factory;
    std::string unavailable_reason;
    std::function<LazyBackend()> load;  // set until resolved
  };
  void resolve() const;  // runs the pending loads
  mutable std::recursive_mutex mu_;
  mutable Registry<Entry> entries_{"backend"};
};

}  // namespace fusebox::exec
