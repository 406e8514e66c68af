#pragma once
// Pinned staging for copies between the host and the device, as pure logic (no CUDA), so its
// rules are unit-tested without a GPU (tests/cuda/staging_test.cpp).
//
// cudaMemcpyAsync from pageable memory is neither asynchronous nor fast: the driver stages it
// through its own pinned buffer. The backend stages through one of its own instead: a copy in
// goes caller's bytes -> pinned slot (memcpy) -> device (async, on the stream), so the caller's
// buffer is free when copy_to_device returns and the stream never waits on the host. Slots are
// handed out round a ring; a slot may still be in flight until the stream has passed it, so
// when the ring wraps the backend waits for the stream first (Slot::wait_first).
#include <cstddef>

namespace fusebox::cuda {

inline constexpr size_t kStagingAlignment = 256;           // slot offsets (DMA likes aligned rows)
inline constexpr size_t kMinStagingBytes = size_t{1} << 20;  // 1 MiB
inline constexpr size_t kMaxStagingBytes = size_t{1} << 32;  // 4 GiB: beyond that, pinning is unkind

// The pinned buffer to hold a copy of `bytes`: a power of two, at least kMinStagingBytes. Throws
// fusebox::Error naming the size when it is over kMaxStagingBytes.
size_t staging_capacity_for(size_t bytes);

class StagingRing {
 public:
  struct Slot {
    size_t offset = 0;
    bool wait_first = false;  // wait for the stream before writing: the slot's bytes may be in flight
  };
  explicit StagingRing(size_t capacity);
  size_t capacity() const { return capacity_; }
  bool fits(size_t bytes) const { return bytes <= capacity_; }
  // A slot of `bytes` (<= capacity()). When wait_first is set the caller must wait for the stream
  // before writing it (that wait drains every earlier slot). Throws fusebox::Error when it does
  // not fit.
  Slot reserve(size_t bytes);
  // The stream has passed every slot handed out so far (the backend synchronized).
  void drained();

 private:
  size_t capacity_;
  size_t next_ = 0;          // where the next slot starts
  bool in_flight_ = false;   // slots handed out since the last drained()
};

}  // namespace fusebox::cuda
