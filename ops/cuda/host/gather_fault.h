#pragma once
// Naming an out-of-range Gather index found on the device. A Gather's prepare() registers its
// site (the node, its indices input, the axis and its size) and gets an id the check kernel
// writes into the backend's fault record (layout_types.h: GatherFault); at synchronize the backend
// turns that record into the CPU backend's own sentence (ops/cpu/layout.cpp) and raises it.
// Plain C++, tested against the CPU's message in tests/cuda/gather_fault_test.cpp.
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

namespace fusebox::cuda {

struct GatherSite {
  std::string where;    // "node 'Gather_2' (Gather)"
  std::string indices;  // the indices input's tensor name
  int64_t axis = 0;     // normalized
  int64_t axis_dim = 0;
};

// The CPU's sentence for index `index` at position `element` of the indices.
std::string gather_index_message(const GatherSite& site, int64_t element, int64_t index);

// Sites by id, process-wide (kernel states outlive no backend in particular). Ids start at 1.
class GatherSites {
 public:
  static GatherSites& instance();
  uint32_t add(GatherSite site);
  void remove(uint32_t id);
  // The sentence for a fault at site `id`; a site no longer registered is still named by its id.
  std::string describe(uint32_t id, int64_t element, int64_t index) const;

 private:
  mutable std::mutex mu_;
  uint32_t next_ = 1;
  std::unordered_map<uint32_t, GatherSite> sites_;
};

}  // namespace fusebox::cuda
