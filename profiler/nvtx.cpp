#include "profiler/nvtx.h"

#include <sys/syscall.h>
#include <unistd.h>

#include "core/exec/session.h"
#include "profiler/recording.h"

// The one place NVTX is switched: four calls, real or empty.
#if FUSEBOX_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
namespace {
void* nvtx_domain_create(const char* name) { return nvtxDomainCreateA(name); }
void nvtx_push(void* domain, const char* message, uint32_t color) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.colorType = NVTX_COLOR_ARGB;
  a.color = color;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = message;
  nvtxDomainRangePushEx(static_cast<nvtxDomainHandle_t>(domain), &a);
}
void nvtx_pop(void* domain) { nvtxDomainRangePop(static_cast<nvtxDomainHandle_t>(domain)); }
void nvtx_name_thread(uint32_t tid, const char* name) { nvtxNameOsThreadA(tid, name); }
}  // namespace
#else
namespace {
void* nvtx_domain_create(const char*) { return nullptr; }
void nvtx_push(void*, const char*, uint32_t) {}
void nvtx_pop(void*) {}
void nvtx_name_thread(uint32_t, const char*) {}
}  // namespace
#endif

namespace fusebox::profiler {

bool nvtx_available() { return FUSEBOX_HAVE_NVTX != 0; }
NvtxRanges::NvtxRanges() : domain_(nvtx_domain_create(nvtx_domain_name())) {}

void NvtxRanges::attach(const exec::Session& session) { attach(session.graph()); }

void NvtxRanges::attach(const ir::Graph& g) {
  op_names_.clear();
  op_colors_.clear();
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    op_names_.push_back(op_range_name(g.nodes[i].op, i, g.nodes[i].name));
    op_colors_.push_back(op_color(g.nodes[i].op));
  }
}

void NvtxRanges::name_this_thread(const std::string& name) {
  nvtx_name_thread(static_cast<uint32_t>(syscall(SYS_gettid)), name.c_str());
}

void NvtxRanges::push(const char* message, uint32_t color) { nvtx_push(domain_, message, color); }
void NvtxRanges::pop() { nvtx_pop(domain_); }

void NvtxRanges::on_stage_begin(const std::string& stage) { push(stage.c_str(), stage_color()); }
void NvtxRanges::on_stage_end(const std::string&) { pop(); }
void NvtxRanges::on_run_begin(int64_t run_index) {
  scratch_ = run_range_name(run_index);
  push(scratch_.c_str(), run_color());
}
void NvtxRanges::on_run_end(int64_t) { pop(); }
void NvtxRanges::on_op_begin(size_t node_index) {
  if (node_index < op_names_.size()) {
    push(op_names_[node_index].c_str(), op_colors_[node_index]);
  } else {
    scratch_ = "op." + std::to_string(node_index);
    push(scratch_.c_str(), 0xFF7F7F7F);
  }
}
void NvtxRanges::on_op_end(size_t) { pop(); }

}  // namespace fusebox::profiler
