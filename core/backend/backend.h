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

// What a backend noted itself during a recording (Backend::begin_recording/end_recording): its
// device activity (CUPTI's kernel, copy and memset records on CUDA) and its intra-op workers'
// busy spans (the CPU's threads). The op spans come from the executors (ExecutionObserver); the
// profiler's Recorder joins the two.
struct BackendActivity {
  std::vector<DeviceActivity> device;
  std::vector<WorkerSpan> workers;
};

// A run a backend captured (a CUDA graph): replay() launches again, on the same device pointers,
// the work that was launched between Backend::begin_capture() and end_capture().
class CapturedRun {
 public:
  virtual ~CapturedRun() = default;
  virtual void replay() = 0;
  // What was captured, for the report ("a CUDA graph of 42 nodes").
  virtual std::string describe() const { return ""; }
};

// What a backend can do, as data (like ggml's device properties): asked by the passes, the
// executors, constant folding and the settings bar, and filled once by the backend when it is made.
struct BackendCaps {
  // Its memory is the host's (allocate() returns host pointers, kernels read host memory): the
  // CPU. evaluate_node (constant folding) runs only on such a backend.
  bool host_memory = false;
  // It wants op events (on_op_begin/on_op_end around every kernel), which executors read once when
  // they are made: a backend that wants none (the CPU) costs nothing.
  bool op_events = false;
  // It can capture a run and replay it (begin_capture/end_capture: CUDA graphs).
  bool capture = false;
  // Instruction-set levels, for a backend whose kernels have several paths (the CPU: "avx512",
  // "avx2", "portable"): the ones this machine runs, best first; empty for a backend with one.
  std::vector<std::string> isa_levels;
  // Precisions of the float GEMMs it offers (CompileOptions::precision).
  std::vector<std::string> precisions = {"fp32"};
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;         // "cpu", "cuda"
  virtual std::string description() const = 0;  // "CPU: OpenBLAS 0.3.21 ..."
  virtual const KernelTable& kernels() const = 0;
  const BackendCaps& caps() const { return caps_; }

  // The settings a run on this backend uses (what compile() takes): "auto" made the level it picks
  // ("" for a backend with one), each value checked against caps(). Throws fusebox::Error naming
  // what it offers instead. Nothing in the backend changes: the result goes to compile().
  virtual CompileOptions resolve(const CompileOptions& options) const;

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
  // launches in between (CUPTI external correlation ids). Only when caps().op_events.
  virtual void on_op_begin(size_t /*node_index*/) {}
  virtual void on_op_end(size_t /*node_index*/) {}

  // Capture and replay (CUDA graphs). When caps().capture, the compiled executor may call
  // begin_capture(), run its kernels once (they are recorded, not necessarily run), then
  // end_capture(), and from then on replay the result instead of launching each kernel.
  // The defaults say no: begin_capture() and end_capture() throw fusebox::Error.
  virtual void begin_capture();
  virtual std::unique_ptr<CapturedRun> end_capture();

  // Intra-op threads for the kernels the calling thread runs next (and the BLAS underneath
  // them): one pool per calling thread. Call it on the thread that runs the kernels, before each
  // run; a backend keeps no process-wide thread count, so two runs on two threads never change
  // each other's. Throws fusebox::Error for threads < 1.
  virtual void bind_threads(int threads) const = 0;

  // Device memory, 64-byte aligned; freed when the returned pointer's last copy goes.
  virtual std::shared_ptr<void> allocate(size_t bytes) = 0;
  // Makes a weight available on the device; the result stays valid while it is held.
  // The CPU backend returns the host bytes themselves (no copy).
  virtual std::shared_ptr<const void> upload(const ir::Tensor& weight) = 0;
  virtual void copy_to_device(void* dst, const void* src, size_t bytes) = 0;
  virtual void copy_to_host(void* dst, const void* src, size_t bytes) = 0;
  virtual void synchronize() {}

  // Profiling: one channel for what a backend notes itself. begin_recording() drops whatever was
  // noted before and starts noting; end_recording() stops and hands over what was noted since
  // (BackendActivity). Outside a recording a backend notes nothing and pays for nothing beyond a
  // flag read per parallel region (the CPU) or per run (CUPTI is off on CUDA). A failed run may
  // end a recording early (CUDA); end_recording() then returns nothing. BackendRecording (below)
  // ends one an exception leaves open. The defaults note nothing.
  virtual void begin_recording() {}
  virtual BackendActivity end_recording() { return {}; }

 protected:
  ExecContext context_;  // what context() hands out; a device backend fills it
  BackendCaps caps_;     // what caps() hands out; filled by the backend when it is made
};

// A recording on a backend for as long as this lives: begun when made, ended by finish(), which
// returns what the backend noted, or by the destructor (what was noted is dropped) when an
// exception leaves first.
class BackendRecording {
 public:
  explicit BackendRecording(Backend& backend) : backend_(&backend) { backend.begin_recording(); }
  ~BackendRecording() {
    if (!backend_) return;
    try {
      backend_->end_recording();
    } catch (...) {  // already unwinding from the run's own error, which is the one to report
    }
  }
  BackendRecording(const BackendRecording&) = delete;
  BackendRecording& operator=(const BackendRecording&) = delete;
  BackendActivity finish() {
    Backend* b = backend_;
    backend_ = nullptr;
    return b ? b->end_recording() : BackendActivity{};
  }

 private:
  Backend* backend_;
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
