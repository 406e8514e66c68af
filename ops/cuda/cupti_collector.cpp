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

// What the buffer callbacks (CUPTI's threads) hand over to take() (the caller's thread).
struct Pending {
  std::mutex mu;
  std::vector<CuptiKernelRecord> kernels;
  std::vector<CuptiMemcpyRecord> memcpys;
  std::vector<CuptiMemsetRecord> memsets;
  std::vector<CuptiApiRecord> apis;
  std::unordered_map<uint32_t, uint64_t> external;  // correlation id -> external id (node + 1)
  size_t dropped = 0;
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
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        CuptiKernelRecord r;
        r.start = k->start, r.end = k->end;
        r.deviceId = k->deviceId, r.contextId = k->contextId, r.streamId = k->streamId;
        r.correlationId = k->correlationId;
        r.gridX = k->gridX, r.gridY = k->gridY, r.gridZ = k->gridZ;
        r.blockX = k->blockX, r.blockY = k->blockY, r.blockZ = k->blockZ;
        r.registersPerThread = k->registersPerThread;
        r.staticSharedMemory = k->staticSharedMemory, r.dynamicSharedMemory = k->dynamicSharedMemory;
        r.name = k->name ? k->name : "";
        p.kernels.push_back(std::move(r));
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
        CuptiMemcpyRecord r;
        r.copyKind = m->copyKind, r.bytes = m->bytes, r.start = m->start, r.end = m->end;
        r.deviceId = m->deviceId, r.contextId = m->contextId, r.streamId = m->streamId;
        r.correlationId = m->correlationId;
        p.memcpys.push_back(r);
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
        CuptiMemsetRecord r;
        r.value = m->value, r.bytes = m->bytes, r.start = m->start, r.end = m->end;
        r.deviceId = m->deviceId, r.contextId = m->contextId, r.streamId = m->streamId;
        r.correlationId = m->correlationId;
        p.memsets.push_back(r);
        break;
      }
      case CUPTI_ACTIVITY_KIND_RUNTIME: {
        const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(record);
        CuptiApiRecord r;
        r.cbid = a->cbid, r.start = a->start, r.end = a->end;
        r.processId = a->processId, r.threadId = a->threadId, r.correlationId = a->correlationId;
        r.name = callback_name(a->cbid);
        p.apis.push_back(std::move(r));
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
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS) p.dropped += dropped;
  std::free(buffer);
}

CuptiClock clock_now() {
  CuptiClock c;
  uint64_t t = 0;
  cuptiGetTimestamp(&t);
  c.cupti_ns = static_cast<int64_t>(t);
  c.host_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
  return c;
}

}  // namespace

CuptiCollector& CuptiCollector::instance() {
  static CuptiCollector c;
  return c;
}

std::string CuptiCollector::start() {
  if (started_) return note_;
  started_ = true;
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
  CuptiBatch batch;
  {
    Pending& p = pending();
    std::lock_guard<std::mutex> lock(p.mu);
    batch.kernels.swap(p.kernels);
    batch.memcpys.swap(p.memcpys);
    batch.memsets.swap(p.memsets);
    batch.apis.swap(p.apis);
    batch.external.swap(p.external);
  }
  return to_activities(batch, clock_now());
}

}  // namespace fusebox::cuda
