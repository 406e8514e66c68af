// A tiny NVTX tool: loaded by NVTX through NVTX_INJECTION64_PATH, it records the domain, range and
// thread-name calls it receives, so a test can check exactly what a profiler would see.
#include <nvtx3/nvToolsExt.h>

#include <mutex>
#include <string>
#include <vector>

namespace {

std::mutex mu;
std::vector<std::string> events;

struct Domain {
  std::string name;
};

void record(std::string e) {
  std::lock_guard<std::mutex> lock(mu);
  events.push_back(std::move(e));
}

std::string domain_name(nvtxDomainHandle_t d) { return d ? reinterpret_cast<Domain*>(d)->name : "(default)"; }

std::string message(const nvtxEventAttributes_t* a) {
  if (!a) return "";
  if (a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii) return a->message.ascii;
  return "(non-ascii message)";
}

nvtxDomainHandle_t NVTX_API domain_create(const char* name) {
  record(std::string("domain ") + name);
  return reinterpret_cast<nvtxDomainHandle_t>(new Domain{name});
}
int NVTX_API domain_push(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  record("push " + domain_name(d) + ":" + message(a) + (a && a->colorType == NVTX_COLOR_ARGB ? " color" : ""));
  return 0;
}
int NVTX_API domain_pop(nvtxDomainHandle_t d) {
  record("pop " + domain_name(d));
  return 0;
}
int NVTX_API push_a(const char* m) {
  record(std::string("push (default):") + m);
  return 0;
}
int NVTX_API pop() {
  record("pop (default)");
  return 0;
}
void NVTX_API name_thread(uint32_t, const char* name) { record(std::string("thread ") + name); }

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table) {
  auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_table(NVTX_ETID_CALLBACKS));
  if (!callbacks) return 0;
  NvtxFunctionTable core = nullptr, core2 = nullptr;
  unsigned int core_size = 0, core2_size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &core_size)) return 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &core2_size)) return 0;
  *core[NVTX_CBID_CORE_RangePushA] = reinterpret_cast<NvtxFunctionPointer>(&push_a);
  *core[NVTX_CBID_CORE_RangePop] = reinterpret_cast<NvtxFunctionPointer>(&pop);
  *core[NVTX_CBID_CORE_NameOsThreadA] = reinterpret_cast<NvtxFunctionPointer>(&name_thread);
  *core2[NVTX_CBID_CORE2_DomainCreateA] = reinterpret_cast<NvtxFunctionPointer>(&domain_create);
  *core2[NVTX_CBID_CORE2_DomainRangePushEx] = reinterpret_cast<NvtxFunctionPointer>(&domain_push);
  *core2[NVTX_CBID_CORE2_DomainRangePop] = reinterpret_cast<NvtxFunctionPointer>(&domain_pop);
  return 1;
}

__attribute__((visibility("default"))) size_t fusebox_nvtx_event_count() {
  std::lock_guard<std::mutex> lock(mu);
  return events.size();
}
__attribute__((visibility("default"))) const char* fusebox_nvtx_event(size_t i) {
  std::lock_guard<std::mutex> lock(mu);
  return i < events.size() ? events[i].c_str() : nullptr;
}
__attribute__((visibility("default"))) void fusebox_nvtx_clear() {
  std::lock_guard<std::mutex> lock(mu);
  events.clear();
}
}
