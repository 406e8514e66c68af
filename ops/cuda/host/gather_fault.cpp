#include "ops/cuda/host/gather_fault.h"

namespace fusebox::cuda {

std::string gather_index_message(const GatherSite& s, int64_t element, int64_t index) {
  return s.where + ": input '" + s.indices + "' element " + std::to_string(element) + " is index " +
         std::to_string(index) + ", out of range for axis " + std::to_string(s.axis) + " of size " +
         std::to_string(s.axis_dim) + " (valid: " + std::to_string(-s.axis_dim) + ".." +
         std::to_string(s.axis_dim - 1) + ")";
}

GatherSites& GatherSites::instance() {
  static GatherSites sites;
  return sites;
}

uint32_t GatherSites::add(GatherSite site) {
  std::lock_guard<std::mutex> lock(mu_);
  uint32_t id = next_++;
  if (next_ == 0) next_ = 1;  // 0 means "no fault" on the device
  sites_[id] = std::move(site);
  return id;
}

void GatherSites::remove(uint32_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  sites_.erase(id);
}

std::string GatherSites::describe(uint32_t id, int64_t element, int64_t index) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = sites_.find(id);
  if (it != sites_.end()) return gather_index_message(it->second, element, index);
  return "a Gather (site " + std::to_string(id) + ", no longer prepared): element " + std::to_string(element) +
         " of its indices is index " + std::to_string(index) + ", out of range";
}

}  // namespace fusebox::cuda
