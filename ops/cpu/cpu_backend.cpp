#include "ops/cpu/cpu_backend.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "core/base/error.h"
#include "core/base/machine.h"
#include "core/base/strings.h"
#include "core/ir/op_schema.h"
#include "ops/cpu/isa.h"
#include "ops/cpu/parallel.h"

namespace fusebox::cpu {

namespace {

class CpuBackend final : public exec::Backend {
 public:
  CpuBackend() {
    // Kernels get a null stream and handles, and read the level from KernelContext::options.
    caps_.host_memory = true;
    caps_.isa_levels = cpu::isa_levels();
    add_matmul_kernels(table_);
    add_elementwise_kernels(table_);
    add_fused_elementwise_kernels(table_);
    add_normalization_kernels(table_);
    add_layout_kernels(table_);
    add_attention_kernels(table_);
    add_conv_kernels(table_);
    add_conv_nhwc_kernels(table_);
    add_resize_kernels(table_);
    add_recurrent_kernels(table_);
    add_scatter_kernels(table_);
  }

  std::string name() const override { return "cpu"; }
  std::string description() const override {
    return "CPU (runs " + join(caps_.isa_levels, " | ") + "): " + openblas_get_config();
  }
  const exec::KernelTable& kernels() const override { return table_; }

  // supports() and scratch_bytes() are Backend's: every op in the table (the convs size their own
  // scratch, with no room to pack a weight that is a constant).
  size_t alignment() const override { return ir::kAlignment; }

  // OpenMP's thread count is per calling thread (its nthreads ICV), and our kernels size their
  // teams from omp_get_max_threads(). The OpenMP build of OpenBLAS follows the same ICV at each
  // call, so setting it here covers BLAS too without touching OpenBLAS's global count.
  void bind_threads(int threads) const override {
    if (threads < 1) throw Error("threads must be >= 1, got " + std::to_string(threads));
    // libgomp maps each worker's whole stack as it starts the team and aborts the process when one
    // does not fit: say so first (threads=256 under a ulimit -v of 1.5 GB exited 1).
    // The threads of the largest team bound so far are already mapped (libgomp keeps them).
    static std::atomic<int> largest{1};
    const int started = largest.load();
    const size_t stacks =
        static_cast<size_t>(std::max(0, threads - started)) * thread_stack_bytes();
    if (const size_t left = address_space_left(); stacks > left)
      throw Error("threads: " + std::to_string(threads) + " threads need " +
                  format_bytes(static_cast<double>(stacks)) +
                  " of address space for their stacks (" +
                  format_bytes(static_cast<double>(thread_stack_bytes())) +
                  " each), and the ulimit -v leaves " + format_bytes(static_cast<double>(left)) +
                  ": use fewer threads or a larger limit");
    if (threads > started) largest.store(threads);
    omp_set_num_threads(threads);
  }

  // Worker spans from the kernels' parallel regions (ops/cpu/parallel.h); no device activity.
  void begin_recording() override {
    if (recording_) cpu::record_workers(false);
    (void)cpu::take_worker_spans();  // what an earlier recording left
    cpu::record_workers(true);
    recording_ = true;
  }
  exec::BackendActivity end_recording() override {
    if (!recording_) return {};
    cpu::record_workers(false);
    recording_ = false;
    return {{}, cpu::take_worker_spans()};
  }

  // Kernels read the level in prepare (kernel_isa) and keep it in their state. "auto" is
  // auto_isa(): the best this CPU runs, or FUSEBOX_ISA's; a level it lacks is refused with the CPU
  // named (parse_isa).
  // gemm: auto (the packed micro-kernels; OpenBLAS at the portable level) or blas (OpenBLAS at
  // every level, ops/cpu/matmul.cpp).
  exec::CompileOptions resolve(const exec::CompileOptions& options) const override {
    if (options.gemm != "auto" && options.gemm != "blas")
      throw Error("gemm must be auto or blas, got '" + options.gemm + "'");
    exec::CompileOptions out = options;
    out.isa = isa_name(parse_isa(options.isa.empty() ? "auto" : options.isa));
    out.gemm = "auto";  // the checks every backend makes
    out = Backend::resolve(out);
    out.gemm = options.gemm;
    return out;
  }

  std::shared_ptr<void> allocate(size_t bytes) override {
    size_t padded = (bytes + ir::kAlignment - 1) / ir::kAlignment * ir::kAlignment;
    if (padded == 0) padded = ir::kAlignment;
    void* p = std::aligned_alloc(ir::kAlignment, padded);
    if (!p) throw Error("out of memory allocating an arena of " + std::to_string(bytes) + " bytes");
    return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
  }
  std::shared_ptr<const void> upload(const ir::Tensor& weight) override {
    auto keep = std::make_shared<ir::Tensor>(weight);  // shares the bytes, no copy
    return std::shared_ptr<const void>(keep, keep->bytes());
  }
  void copy_to_device(void* dst, const void* src, size_t bytes) override {
    if (bytes) std::memcpy(dst, src, bytes);
  }
  void copy_to_host(void* dst, const void* src, size_t bytes) override {
    if (bytes) std::memcpy(dst, src, bytes);
  }

 private:
  exec::KernelTable table_;
  bool recording_ = false;  // between begin_recording and end_recording (worker recording nests)
};

}  // namespace

std::unique_ptr<exec::Backend> make_backend() { return std::make_unique<CpuBackend>(); }

void register_backend() {
  auto& reg = exec::BackendRegistry::instance();
  for (const auto& n : reg.names())
    if (n == "cpu") return;
  reg.add("cpu", [] { return make_backend(); });
}

}  // namespace fusebox::cpu
