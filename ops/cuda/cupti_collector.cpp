#include "ops/cuda/cupti_collector.h"

#include <cupti.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <unordered_map>

#include "ops/cuda/host/cupti_records.h"

namespace fusebox::cuda {
namespace {

constexpr size_t kBufferBytes = size_t{4} << 20;
constexpr size_t kBufferAlignment = 8;  // CUPTI's requirement for activity buffers

CuptiClock clock_now() {
  CuptiClock c;
  uint64_t t = 0;
  cuptiGetTimestamp(&t);
  c.cupti_ns = static_cast<int64_t>(t);
  c.host_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
  return c;
}

// What the buffer callbacks (CUPTI's threads) hand over to take() (the caller's thread): records
// already converted (a kernel's name lives in CUPTI's buffer, which is freed once read), and the
// external correlation ids that take() attaches.
struct Pending {
  std::mutex mu;
  CuptiClock clock;  // read once, when collection starts
  std::vector<exec::DeviceActivity> activity;
  std::unordered_map<uint32_t, uint64_t> external;  // correlation id -> external id (node + 1)
  size_t dropped = 0;  // records CUPTI dropped or that did not convert
};

Pending& pending() {
  static Pending p;
  return p;
}

std::string result_text(CUptiResult r) {
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  return s ? s : "CUPTI error " + std::to_string(static_cast<int>(r));
}

std::string callback_name(uint32_t cbid) {
  const char* name = nullptr;
  if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) == CUPTI_SUCCESS && name) return name;
  return "cudaRuntime_" + std::to_string(cbid);
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlignment, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  Pending& p = pending();
  std::lock_guard<std::mutex> lock(p.mu);
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    try {
      switch (record->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
          p.activity.push_back(to_activity(*reinterpret_cast<const CUpti_ActivityKernel10*>(record), p.clock));
          break;
        case CUPTI_ACTIVITY_KIND_MEMCPY:
          p.activity.push_back(to_activity(*reinterpret_cast<const CUpti_ActivityMemcpy6*>(record), p.clock));
          break;
        case CUPTI_ACTIVITY_KIND_MEMSET:
          p.activity.push_back(to_activity(*reinterpret_cast<const CUpti_ActivityMemset4*>(record), p.clock));
          break;
        case CUPTI_ACTIVITY_KIND_RUNTIME: {
          const auto* api = reinterpret_cast<const CUpti_ActivityAPI*>(record);
          p.activity.push_back(to_activity(*api, callback_name(api->cbid), p.clock));
          break;
        }
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
          const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
          if (e->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) p.external[e->correlationId] = e->externalId;
          break;
        }
        default:
          break;
      }
    } catch (const std::exception&) {
      ++p.dropped;  // a malformed record; a callback on CUPTI's thread must not throw
    }
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS) p.dropped += dropped;
  std::free(buffer);
}

}  // namespace

CuptiCollector& CuptiCollector::instance() {
  static CuptiCollector c;
  return c;
}

std::string CuptiCollector::start() {
  if (started_) return note_;
  started_ = true;
  pending().clock = clock_now();  // before any callback can read it
  CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                      CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME,
                                      CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};
  for (const CUpti_ActivityKind k : kinds) {
    if (r != CUPTI_SUCCESS) break;
    r = cuptiActivityEnable(k);
  }
  if (r != CUPTI_SUCCESS) {
    for (const CUpti_ActivityKind k : kinds) cuptiActivityDisable(k);
    note_ = r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
                ? "CUPTI activity off: another tool (Nsight Systems?) holds CUPTI, so only NVTX ranges are recorded"
                : "CUPTI activity off: " + result_text(r) + ", so only NVTX ranges are recorded";
    return note_;
  }
  active_ = true;
  return note_;
}

void CuptiCollector::push_op(size_t node_index) {
  if (active_) cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, node_index + 1);
}

void CuptiCollector::pop_op() {
  uint64_t last = 0;
  if (active_) cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
}

std::vector<exec::DeviceActivity> CuptiCollector::take() {
  if (!active_) return {};
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);  // incomplete buffers too
  std::vector<exec::DeviceActivity> out;
  std::unordered_map<uint32_t, uint64_t> external;
  {
    Pending& p = pending();
    std::lock_guard<std::mutex> lock(p.mu);
    out.swap(p.activity);
    external.swap(p.external);
  }
  attach_nodes(out, external);
  return out;
}

}  // namespace fusebox::cuda
