#pragma once
// NVTX ranges for a session, in one domain "fusebox": a range per stage (its name), per run
// ("run <n>") and per op ("<OpType>.<index>(<node name>)", like ONNX Runtime). Nsight Systems
// (or any NVTX tool, loaded through NVTX_INJECTION64_PATH) shows them on the thread's timeline.
// Built on the header-only NVTX3 when the CUDA toolkit's copy was found at configure time;
// otherwise every call does nothing and nvtx_available() says so.
#include <cstdint>
#include <string>
#include <vector>

#include "core/backend/observer.h"
#include "profiler/nvtx_names.h"  // the domain and colours, shared with the exporters

namespace fusebox::ir {
class Graph;
}
namespace fusebox::exec {
class Session;  // the ranges attach to one; the exporters read the colours alone
}

namespace fusebox::profiler {

bool nvtx_available();  // compiled with NVTX3

class NvtxRanges final : public exec::ExecutionObserver {
 public:
  NvtxRanges();
  // Prepares the per-op range names from the session's graph. Ops seen before attach (or with
  // an index past the graph) get a generic name.
  void attach(const exec::Session& session);
  void attach(const ir::Graph& graph);  // the graph that runs
  // Names the calling OS thread in NVTX (nvtxNameOsThread).
  static void name_this_thread(const std::string& name);

  void on_stage_begin(const std::string& stage) override;
  void on_stage_end(const std::string& stage) override;
  void on_run_begin(int64_t run_index) override;
  void on_run_end(int64_t run_index) override;
  void on_op_begin(size_t node_index) override;
  void on_op_end(size_t node_index) override;

 private:
  void push(const char* message, uint32_t color);
  void pop();
  void* domain_ = nullptr;  // nvtxDomainHandle_t
  std::vector<std::string> op_names_;
  std::vector<uint32_t> op_colors_;
  std::string scratch_;
};

}  // namespace fusebox::profiler
