#include "ops/cuda/host/staging.h"

#include "core/base/error.h"

namespace fusebox::cuda {

size_t staging_capacity_for(size_t bytes) {
  if (bytes > kMaxStagingBytes)
    throw Error("a copy of " + std::to_string(bytes) + " bytes is larger than the " +
                std::to_string(kMaxStagingBytes >> 30) + " GiB the CUDA backend pins for staging");
  size_t c = kMinStagingBytes;
  while (c < bytes) c *= 2;
  return c;
}

StagingRing::StagingRing(size_t capacity) : capacity_(capacity) {
  if (capacity == 0 || capacity % kStagingAlignment != 0)
    throw Error("a staging ring needs a capacity that is a positive multiple of " +
                std::to_string(kStagingAlignment) + " bytes, got " + std::to_string(capacity));
}

StagingRing::Slot StagingRing::reserve(size_t bytes) {
  if (bytes > capacity_)
    throw Error("a copy of " + std::to_string(bytes) + " bytes does not fit the " + std::to_string(capacity_) +
                "-byte staging buffer");
  Slot s;
  if (next_ + bytes > capacity_) {  // wrap: the slots at the start may still be in flight
    s.wait_first = in_flight_;       // the caller waits for the stream, which drains them all
    next_ = 0;
  }
  s.offset = next_;
  next_ = (next_ + bytes + kStagingAlignment - 1) / kStagingAlignment * kStagingAlignment;
  in_flight_ = true;
  return s;
}

void StagingRing::drained() { in_flight_ = false; }

}  // namespace fusebox::cuda
