// The CUDA backend: memory, copies, the stream and library handles, CUDA graphs, and CUPTI
// activity. The kernels are in the family files (cuda_backend.h lists them).
#include "ops/cuda/cuda_backend.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <mutex>

#include "core/base/error.h"
#include "core/ir/op_schema.h"
#include "ops/cuda/cuda_util.h"
#include "ops/cuda/cupti_collector.h"
#include "ops/cuda/host/gather_fault.h"
#include "ops/cuda/host/recording_switch.h"
#include "ops/cuda/host/staging.h"

namespace fusebox::cuda {
namespace {

// cuBLAS's workspace, set once so that no GEMM allocates while a run is being captured into a
// CUDA graph (cuBLAS asks for one when capturing). 32 MiB is what NVIDIA advises for Hopper.
constexpr size_t kBlasWorkspaceBytes = size_t{32} << 20;
constexpr size_t kDeviceAlignment = 256;  // cudaMalloc's alignment; what every arena offset keeps

// Pinned host memory for staging, freed with cudaFreeHost.
struct Pinned {
  void* ptr = nullptr;
  size_t bytes = 0;
  ~Pinned() {
    if (ptr) cudaFreeHost(ptr);
  }
  void reserve(size_t want) {
    if (want <= bytes) return;
    if (ptr) cudaFreeHost(ptr);
    ptr = nullptr;
    bytes = 0;
    check(cudaMallocHost(&ptr, want), "cudaMallocHost of " + std::to_string(want) + " staging bytes");
    bytes = want;
  }
};

// The process-wide collector behind the backend's recording switch.
struct CuptiCalls final : RecordingSwitch::Collector {
  std::string begin() override { return CuptiCollector::instance().begin_recording(); }
  std::vector<exec::DeviceActivity> take() override { return CuptiCollector::instance().take(); }
  void end() override { CuptiCollector::instance().end_recording(); }
};

class CudaGraphRun final : public exec::CapturedRun {
 public:
  CudaGraphRun(cudaGraph_t graph, cudaGraphExec_t exec, cudaStream_t stream, size_t nodes)
      : graph_(graph), exec_(exec), stream_(stream), nodes_(nodes) {}
  ~CudaGraphRun() override {
    cudaGraphExecDestroy(exec_);
    cudaGraphDestroy(graph_);
  }
  void replay() override {
    check(cudaGraphLaunch(exec_, stream_), "cudaGraphLaunch");
    if (!launched_) {
      // A graph's memory nodes get their memory when it is first launched, not when it is
      // instantiated: read the figure after that launch (it would always be 0 before).
      launched_ = true;
      uint64_t bytes = 0;  // the driver's cuuint64_t
      if (cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrReservedMemCurrent, &bytes) == cudaSuccess)
        graph_memory_ = static_cast<size_t>(bytes);
      else
        (void)cudaGetLastError();  // an unanswered query is not a kernel's failure
    }
  }
  // The graph's own device memory: what its memory nodes hold beyond the arena, the weights and
  // the cuBLAS workspace, which the backend owns and the graph only addresses.
  std::string describe() const override {
    return "a CUDA graph of " + std::to_string(nodes_) + " node" + (nodes_ == 1 ? "" : "s") + ", holding " +
           std::to_string(graph_memory_) + " bytes of graph-owned device memory";
  }

 private:
  cudaGraph_t graph_;
  cudaGraphExec_t exec_;
  cudaStream_t stream_;
  size_t nodes_;
  bool launched_ = false;
  size_t graph_memory_ = 0;
};

class CudaBackend final : public exec::Backend {
 public:
  CudaBackend() {
    try {
      set_up();
    } catch (...) {
      release();  // what was made before the failing call; the destructor will not run
      throw;
    }
  }

  ~CudaBackend() override {
    cudaStreamSynchronize(stream_);
    // CUPTI flushed and its activity kinds disabled before the stream and handles go (the
    // collector's store outlives both: it is never destroyed).
    CuptiCalls calls;
    recording_.abandon(calls);
    release();
  }

 private:
  void set_up() {
    check(cudaSetDevice(0), "cudaSetDevice(0)");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    device_name_ = prop.name;
    sm_ = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
    shared_.sm_major = prop.major;
    shared_.sm_count = prop.multiProcessorCount;
    shared_.max_shared_per_block = static_cast<int>(prop.sharedMemPerBlockOptin);
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cublasCreate(&blas_), "cublasCreate");
    check(cublasSetStream(blas_, stream_), "cublasSetStream");
    check(cudaMalloc(&shared_.workspace, kBlasWorkspaceBytes), "cudaMalloc of the cuBLAS workspace");
    shared_.workspace_bytes = kBlasWorkspaceBytes;
    check(cublasSetWorkspace(blas_, shared_.workspace, shared_.workspace_bytes), "cublasSetWorkspace");
    check(cublasLtCreate(&shared_.lt), "cublasLtCreate");
    // The Gather fault record: host memory the device writes through a mapped pointer, read at
    // synchronize with no copy queued (graph replays write it too).
    check(cudaHostAlloc(reinterpret_cast<void**>(&gather_fault_host_), sizeof(GatherFault), cudaHostAllocMapped),
          "cudaHostAlloc of the Gather fault record");
    *gather_fault_host_ = GatherFault{};
    check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&shared_.gather_fault), gather_fault_host_, 0),
          "cudaHostGetDevicePointer of the Gather fault record");
    shared_.failures = &failures_;
    context_.device = 0;
    context_.stream = stream_;
    context_.blas = blas_;
    context_.backend_data = &shared_;
    caps_.op_events = true;  // CUPTI external correlation ids tie kernels to ops
    caps_.host_memory = false;
    caps_.capture = true;    // CUDA graphs: begin_capture / end_capture
    caps_.precisions = gemm_precision_names();

    add_matmul_kernels(kernels_);
    add_elementwise_kernels(kernels_);
    add_fused_elementwise_kernels(kernels_);
    add_normalization_kernels(kernels_);
    add_layout_kernels(kernels_);
    add_attention_kernels(kernels_);
    add_conv_kernels(kernels_);
  }

  void release() {
    if (shared_.lt) cublasLtDestroy(shared_.lt);
    if (blas_) cublasDestroy(blas_);
    if (shared_.workspace) cudaFree(shared_.workspace);
    if (stream_) cudaStreamDestroy(stream_);
    if (gather_fault_host_) cudaFreeHost(gather_fault_host_);
    gather_fault_host_ = nullptr;
    shared_ = CudaShared{};
    blas_ = nullptr;
    stream_ = nullptr;
  }

 public:

  std::string name() const override { return "cuda"; }

  std::string description() const override {
    std::string d = "CUDA: " + device_name_ + " (" + sm_ + ", " + std::to_string(shared_.sm_count) + " SMs), cuBLAS " +
                    std::to_string(blas_version());
    d += recording_.note().empty() ? ", CUPTI activity on recorded runs" : ", " + recording_.note();
    return d;
  }
  const exec::KernelTable& kernels() const override { return kernels_; }

  // supports() and scratch_bytes() are Backend's: every op in the table, with the kernel's own
  // scratch size where it differs from the schema's (the CPU's need).
  size_t alignment() const override { return kDeviceAlignment; }
  // Host threads do not speed up a GPU: the count is checked and otherwise not used.
  void bind_threads(int threads) const override {
    if (threads < 1) throw Error("threads must be >= 1, got " + std::to_string(threads));
  }

  // The runtime's last error is cleared before an op's launches and read after them, so a launch
  // failure is blamed on the op that made it, and never on an earlier, unrelated call.
  void on_op_begin(size_t node_index) override {
    (void)cudaGetLastError();
    CuptiCollector::instance().push_op(node_index);
  }
  void on_op_end(size_t node_index) override {
    CuptiCollector::instance().pop_op();
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
      failures_.record("launching the kernels of graph node " + std::to_string(node_index) + ": " +
                       cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
  }

  void begin_capture() override {
    check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  }
  std::unique_ptr<exec::CapturedRun> end_capture() override {
    cudaGraph_t graph = nullptr;
    check(cudaStreamEndCapture(stream_, &graph), "cudaStreamEndCapture (a kernel in the run may not be capturable)");
    size_t nodes = 0;
    cudaGraphGetNodes(graph, nullptr, &nodes);
    cudaGraphExec_t exec = nullptr;
    const cudaError_t e = cudaGraphInstantiate(&exec, graph, 0);
    if (e != cudaSuccess) cudaGraphDestroy(graph);
    check(e, "cudaGraphInstantiate");
    return std::make_unique<CudaGraphRun>(graph, exec, stream_, nodes);
  }

  std::shared_ptr<void> allocate(size_t bytes) override {
    void* p = nullptr;
    check(cudaMalloc(&p, bytes ? bytes : kDeviceAlignment), "cudaMalloc of " + std::to_string(bytes) + " bytes");
    return std::shared_ptr<void>(p, [](void* q) { cudaFree(q); });
  }
  std::shared_ptr<const void> upload(const ir::Tensor& weight) override {
    const size_t bytes = weight.nbytes();
    std::shared_ptr<void> d = allocate(bytes);
    if (!bytes) return d;
    // On the backend's stream (non-blocking: the legacy stream cudaMemcpy uses is not ordered
    // with it), then waited for, so the weight is on the device before any kernel reads it and
    // the caller's pageable bytes may go.
    check(cudaMemcpyAsync(d.get(), weight.bytes(), bytes, cudaMemcpyHostToDevice, stream_), "uploading a weight");
    check(cudaStreamSynchronize(stream_), "uploading a weight (cudaStreamSynchronize)");
    return d;
  }

  // Caller's bytes -> pinned slot -> device, asynchronously on the stream (host/staging.h).
  void copy_to_device(void* dst, const void* src, size_t bytes) override {
    if (!bytes) return;
    std::lock_guard<std::mutex> lock(staging_mu_);
    if (!in_ || !in_->fits(bytes)) {
      check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
      const size_t capacity = staging_capacity_for(bytes);
      // The ring goes first: if pinning the larger buffer fails (reserve throws, leaving no
      // buffer), no later copy may hand out a slot of the old ring over a null pointer.
      in_.reset();
      pinned_in_.reserve(capacity);
      in_ = std::make_unique<StagingRing>(capacity);
    }
    const StagingRing::Slot slot = in_->reserve(bytes);
    if (slot.wait_first) check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    char* staged = static_cast<char*>(pinned_in_.ptr) + slot.offset;
    std::memcpy(staged, src, bytes);
    check(cudaMemcpyAsync(dst, staged, bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync to the device");
  }
  // Device -> pinned buffer (async, after everything queued), wait, -> caller's bytes.
  void copy_to_host(void* dst, const void* src, size_t bytes) override {
    if (!bytes) return;
    std::lock_guard<std::mutex> lock(staging_mu_);
    pinned_out_.reserve(staging_capacity_for(bytes));
    check(cudaMemcpyAsync(pinned_out_.ptr, src, bytes, cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync to the host");
    sync_locked();
    std::memcpy(dst, pinned_out_.ptr, bytes);
  }
  void synchronize() override {
    std::lock_guard<std::mutex> lock(staging_mu_);
    sync_locked();
  }
  // CUPTI is on only around recorded runs (host/recording_switch.h).
  void begin_recording() override {
    std::lock_guard<std::mutex> lock(staging_mu_);
    CuptiCalls calls;
    recording_.begin(calls);
  }
  exec::BackendActivity end_recording() override {
    std::lock_guard<std::mutex> lock(staging_mu_);
    CuptiCalls calls;
    return {recording_.end(calls), {}};
  }

 private:
  void sync_locked() {
    // What the runs launched and run() could not throw: a launch error outside an op (kept with
    // the runtime until asked), the kernels' own failure, a failed cuBLAS status, an
    // out-of-range Gather index. The first is raised.
    const cudaError_t launch = cudaGetLastError();
    if (launch != cudaSuccess)
      failures_.record(std::string("a CUDA call outside the ops: ") + cudaGetErrorName(launch) + " (" +
                       cudaGetErrorString(launch) + ")");
    const cudaError_t run = cudaStreamSynchronize(stream_);
    if (run != cudaSuccess) {
      (void)cudaGetLastError();
      failures_.record(std::string("running the kernels (cudaStreamSynchronize): ") + cudaGetErrorName(run) + " (" +
                       cudaGetErrorString(run) + ")");
    }
    if (in_ && run == cudaSuccess) in_->drained();
    if (gather_fault_host_ && gather_fault_host_->site != 0) {
      const GatherFault f = *gather_fault_host_;
      *gather_fault_host_ = GatherFault{};
      failures_.record(GatherSites::instance().describe(f.site, f.element, f.index));
    }
    if (failures_.any()) {
      // A failed run ends its recording: the caller's end_recording() may not come.
      CuptiCalls calls;
      recording_.abandon(calls);
    }
    failures_.raise_if_any();
  }
  int blas_version() const {
    int v = 0;
    cublasGetVersion(blas_, &v);
    return v;
  }

  exec::KernelTable kernels_;
  CudaShared shared_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  std::string device_name_, sm_;
  RecordingSwitch recording_;  // CUPTI on from begin_recording() to end_recording()
  FirstFailure failures_;
  GatherFault* gather_fault_host_ = nullptr;  // host-mapped; the device writes it
  std::mutex staging_mu_;
  Pinned pinned_in_, pinned_out_;
  std::unique_ptr<StagingRing> in_;
};

}  // namespace

std::unique_ptr<exec::Backend> make_backend() { return std::make_unique<CudaBackend>(); }

}  // namespace fusebox::cuda
