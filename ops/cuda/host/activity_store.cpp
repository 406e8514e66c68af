#include "ops/cuda/host/activity_store.h"

#include <exception>
#include <utility>

namespace fusebox::cuda {

void ActivityStore::set_clock(const CuptiClock& clock) {
  std::lock_guard<std::mutex> lock(mu_);
  clock_ = clock;
}

void ActivityStore::add(const CUpti_Activity& record, const ApiNameFn& api_name) {
  std::lock_guard<std::mutex> lock(mu_);
  const bool wanted = record.kind == CUPTI_ACTIVITY_KIND_KERNEL || record.kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
                      record.kind == CUPTI_ACTIVITY_KIND_MEMCPY || record.kind == CUPTI_ACTIVITY_KIND_MEMSET ||
                      record.kind == CUPTI_ACTIVITY_KIND_RUNTIME || record.kind == CUPTI_ACTIVITY_KIND_DRIVER ||
                      record.kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  if (!wanted) return;
  if (full_locked()) {
    ++dropped_;
    return;
  }
  try {
    switch (record.kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        activity_.push_back(to_activity(reinterpret_cast<const CUpti_ActivityKernel10&>(record), clock_));
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY:
        activity_.push_back(to_activity(reinterpret_cast<const CUpti_ActivityMemcpy6&>(record), clock_));
        break;
      case CUPTI_ACTIVITY_KIND_MEMSET:
        activity_.push_back(to_activity(reinterpret_cast<const CUpti_ActivityMemset4&>(record), clock_));
        break;
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_DRIVER: {
        const auto& api = reinterpret_cast<const CUpti_ActivityAPI&>(record);
        std::string name = api_name ? api_name(record.kind, api.cbid) : std::string();
        if (name.empty())
          name = (record.kind == CUPTI_ACTIVITY_KIND_DRIVER ? "cuDriver_" : "cudaRuntime_") + std::to_string(api.cbid);
        activity_.push_back(to_activity(api, name, clock_));
        break;
      }
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const auto& e = reinterpret_cast<const CUpti_ActivityExternalCorrelation&>(record);
        if (e.externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) external_[e.correlationId] = e.externalId;
        break;
      }
      default:
        break;
    }
  } catch (const std::exception&) {
    ++dropped_;  // a malformed record: counted, since a callback on CUPTI's thread must not throw
  }
}

void ActivityStore::add_dropped(size_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  dropped_ += n;
}

TakenActivity ActivityStore::take() {
  TakenActivity t;
  std::unordered_map<uint32_t, uint64_t> external;
  {
    std::lock_guard<std::mutex> lock(mu_);
    t.activity.swap(activity_);
    external.swap(external_);
    t.dropped = std::exchange(dropped_, 0);
  }
  attach_nodes(t.activity, external);
  return t;
}

void ActivityStore::clear() {
  std::lock_guard<std::mutex> lock(mu_);
  activity_.clear();
  external_.clear();
  dropped_ = 0;
}

size_t ActivityStore::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return activity_.size() + external_.size();
}

}  // namespace fusebox::cuda
