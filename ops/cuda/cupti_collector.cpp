#include "ops/cuda/cupti_collector.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <dlfcn.h>

#include <chrono>
#include <cstdlib>

#include "ops/cuda/host/activity_store.h"
#include "ops/cuda/host/cupti_library.h"

namespace fusebox::cuda {
namespace {

constexpr size_t kBufferBytes = size_t{4} << 20;
constexpr size_t kBufferAlignment = 8;  // CUPTI's requirement for activity buffers

// The CUPTI entry points the collector calls, resolved from the library dlopened on first use.
struct CuptiApi {
  decltype(&cuptiGetTimestamp) get_timestamp = nullptr;
  decltype(&cuptiGetResultString) get_result_string = nullptr;
  decltype(&cuptiGetCallbackName) get_callback_name = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&cuptiActivityEnable) enable = nullptr;
  decltype(&cuptiActivityDisable) disable = nullptr;
  decltype(&cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&cuptiActivityGetNextRecord) next_record = nullptr;
  decltype(&cuptiActivityGetNumDroppedRecords) dropped_records = nullptr;
  decltype(&cuptiActivityPushExternalCorrelationId) push_external = nullptr;
  decltype(&cuptiActivityPopExternalCorrelationId) pop_external = nullptr;
  std::string unavailable;  // why there is none ("" when loaded)
};

// The directory the process loaded cuBLAS from (the toolkit's library folder), or "".
std::string blas_directory() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&cublasGetProperty), &info) || !info.dli_fname) return "";
  const std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

template <typename F>
bool resolve(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  return f != nullptr;
}

const CuptiApi& api() {
  static const CuptiApi* loaded = [] {
    auto* a = new CuptiApi;  // kept for the process, like the library it points into
    const std::string soname = cupti_soname(CUDART_VERSION);
    const char* home = std::getenv("CUDA_HOME");
    if (!home) home = std::getenv("CUDA_PATH");
    void* lib = nullptr;
    std::string tried;
    for (const std::string& path : cupti_library_candidates(soname, blas_directory(), home ? home : "")) {
      lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (lib) break;
      tried += (tried.empty() ? "" : ", ") + path;
    }
    if (!lib) {
      a->unavailable = "CUPTI tracing unavailable: " + soname + " was not found (tried " + tried +
                       "; add the toolkit's extras/CUPTI/lib64 to LD_LIBRARY_PATH), so only NVTX ranges are recorded";
      return a;
    }
    const bool ok = resolve(lib, "cuptiGetTimestamp", a->get_timestamp) &&
                    resolve(lib, "cuptiGetResultString", a->get_result_string) &&
                    resolve(lib, "cuptiGetCallbackName", a->get_callback_name) &&
                    resolve(lib, "cuptiActivityRegisterCallbacks", a->register_callbacks) &&
                    resolve(lib, "cuptiActivityEnable", a->enable) && resolve(lib, "cuptiActivityDisable", a->disable) &&
                    resolve(lib, "cuptiActivityFlushAll", a->flush_all) &&
                    resolve(lib, "cuptiActivityGetNextRecord", a->next_record) &&
                    resolve(lib, "cuptiActivityGetNumDroppedRecords", a->dropped_records) &&
                    resolve(lib, "cuptiActivityPushExternalCorrelationId", a->push_external) &&
                    resolve(lib, "cuptiActivityPopExternalCorrelationId", a->pop_external);
    if (!ok) {
      const char* e = dlerror();
      a->unavailable = "CUPTI tracing unavailable: the " + soname + " found lacks an entry point (" +
                       (e ? e : "unknown") + "), so only NVTX ranges are recorded";
    }
    return a;
  }();
  return *loaded;
}

// Made before CUPTI is first enabled (begin_recording asks for it first) and never destroyed, so
// a buffer CUPTI completes at any time, even from its exit handler, finds it.
ActivityStore& store() {
  static ActivityStore* s = new ActivityStore();
  return *s;
}

CuptiClock clock_now() {
  CuptiClock c;
  uint64_t t = 0;
  api().get_timestamp(&t);
  c.cupti_ns = static_cast<int64_t>(t);
  c.host_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
                  .count();
  return c;
}

std::string result_text(CUptiResult r) {
  const char* s = nullptr;
  api().get_result_string(r, &s);
  return s ? s : "CUPTI error " + std::to_string(static_cast<int>(r));
}

std::string api_name(CUpti_ActivityKind kind, uint32_t cbid) {
  const char* name = nullptr;
  const CUpti_CallbackDomain domain =
      kind == CUPTI_ACTIVITY_KIND_DRIVER ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
  if (api().get_callback_name(domain, cbid, &name) == CUPTI_SUCCESS && name) return name;
  return "";
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlignment, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  ActivityStore& s = store();
  CUpti_Activity* record = nullptr;
  while (api().next_record(buffer, valid, &record) == CUPTI_SUCCESS) s.add(*record, api_name);
  size_t dropped = 0;
  if (api().dropped_records(nullptr, 0, &dropped) == CUPTI_SUCCESS) s.add_dropped(dropped);
  std::free(buffer);
}

// Driver-API records as well as runtime ones: cuBLAS(Lt) launches through cuLaunchKernelEx, and
// only the driver record's external correlation ties such a kernel to its op.
constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                         CUPTI_ACTIVITY_KIND_MEMSET,            CUPTI_ACTIVITY_KIND_RUNTIME,
                                         CUPTI_ACTIVITY_KIND_DRIVER,            CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};

}  // namespace

CuptiCollector& CuptiCollector::instance() {
  static CuptiCollector c;
  return c;
}

std::string CuptiCollector::begin_recording() {
  std::lock_guard<std::mutex> lock(mu_);
  const CuptiApi& a = api();
  if (!a.unavailable.empty()) return a.unavailable;
  if (recordings_ > 0) {
    ++recordings_;
    return "";
  }
  store().clear();
  store().set_clock(clock_now());  // before any callback can read it
  CUptiResult r = CUPTI_SUCCESS;
  if (!callbacks_registered_) {
    r = a.register_callbacks(buffer_requested, buffer_completed);
    callbacks_registered_ = r == CUPTI_SUCCESS;
  }
  for (const CUpti_ActivityKind k : kKinds) {
    if (r != CUPTI_SUCCESS) break;
    r = a.enable(k);
  }
  if (r != CUPTI_SUCCESS) {
    for (const CUpti_ActivityKind k : kKinds) a.disable(k);
    return r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
               ? "CUPTI activity off: another tool (Nsight Systems?) holds CUPTI, so only NVTX ranges are recorded"
               : "CUPTI activity off: " + result_text(r) + ", so only NVTX ranges are recorded";
  }
  recordings_ = 1;
  active_ = true;
  return "";
}

void CuptiCollector::end_recording() {
  std::lock_guard<std::mutex> lock(mu_);
  if (recordings_ == 0 || --recordings_ > 0) return;
  active_ = false;
  const CuptiApi& a = api();
  a.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);  // what is still in CUPTI's buffers reaches the store
  for (const CUpti_ActivityKind k : kKinds) a.disable(k);
  store().clear();  // nobody is left to take it
}

void CuptiCollector::push_op(size_t node_index) {
  if (active_) api().push_external(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, node_index + 1);
}

void CuptiCollector::pop_op() {
  uint64_t last = 0;
  if (active_) api().pop_external(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
}

std::vector<exec::DeviceActivity> CuptiCollector::take() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!active_) return {};
  api().flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);  // incomplete buffers too
  TakenActivity t = store().take();
  last_dropped_ = t.dropped;
  return std::move(t.activity);
}

}  // namespace fusebox::cuda
