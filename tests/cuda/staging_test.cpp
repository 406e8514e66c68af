// The CUDA backend's pinned staging rules (ops/cuda/host/staging.h), without a GPU: slots never
// overlap a slot that may be in flight, a wrap waits for the stream only when something is in
// flight, and sizes beyond what we pin are refused with the size named.
#include <gtest/gtest.h>

#include "core/base/error.h"
#include "ops/cuda/host/staging.h"

namespace fusebox::cuda {
namespace {

TEST(Staging, CapacityIsAPowerOfTwoFromOneMebibyte) {
  EXPECT_EQ(staging_capacity_for(0), kMinStagingBytes);
  EXPECT_EQ(staging_capacity_for(1), kMinStagingBytes);
  EXPECT_EQ(staging_capacity_for(kMinStagingBytes), kMinStagingBytes);
  EXPECT_EQ(staging_capacity_for(kMinStagingBytes + 1), 2 * kMinStagingBytes);
  EXPECT_EQ(staging_capacity_for(size_t{3} << 30), size_t{4} << 30);
  try {
    staging_capacity_for(kMaxStagingBytes + 1);
    ADD_FAILURE() << "pinned more than the limit";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "a copy of 4294967297 bytes is larger than the 4 GiB the CUDA backend pins for staging");
  }
}

TEST(Staging, SlotsAreAlignedAndFollowEachOther) {
  StagingRing ring(4096);
  StagingRing::Slot a = ring.reserve(100);
  StagingRing::Slot b = ring.reserve(300);
  StagingRing::Slot c = ring.reserve(256);
  EXPECT_EQ(a.offset, 0u);
  EXPECT_EQ(b.offset, 256u) << "100 bytes round up to one 256-byte step";
  EXPECT_EQ(c.offset, 768u);
  EXPECT_FALSE(a.wait_first || b.wait_first || c.wait_first) << "nothing wrapped";
}

TEST(Staging, AWrapWaitsForTheStreamOnlyWhenSlotsAreInFlight) {
  StagingRing ring(1024);
  EXPECT_EQ(ring.reserve(512).offset, 0u);
  EXPECT_EQ(ring.reserve(512).offset, 512u);
  StagingRing::Slot wrapped = ring.reserve(300);
  EXPECT_EQ(wrapped.offset, 0u);
  EXPECT_TRUE(wrapped.wait_first) << "the first slot may still be on its way to the device";
  // The wait drained the earlier slots; the one just handed out is the only one in flight, so the
  // next slot follows it without waiting.
  StagingRing::Slot next = ring.reserve(512);
  EXPECT_EQ(next.offset, 512u);
  EXPECT_FALSE(next.wait_first);

  // After the backend synchronizes nothing is in flight: a wrap needs no wait.
  ring.drained();
  StagingRing::Slot after_sync = ring.reserve(1024);
  EXPECT_EQ(after_sync.offset, 0u);
  EXPECT_FALSE(after_sync.wait_first);
}

TEST(Staging, AWholeBufferCopyFitsAndALargerOneIsRefused) {
  StagingRing ring(1024);
  EXPECT_TRUE(ring.fits(1024));
  EXPECT_FALSE(ring.fits(1025));
  EXPECT_EQ(ring.reserve(1024).offset, 0u);
  try {
    ring.reserve(1025);
    ADD_FAILURE() << "handed out a slot past the buffer";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "a copy of 1025 bytes does not fit the 1024-byte staging buffer");
  }
  EXPECT_THROW(StagingRing(1000), Error) << "not a multiple of the slot alignment";
  EXPECT_THROW(StagingRing(0), Error);
}

}  // namespace
}  // namespace fusebox::cuda
