// core/base/checked.h against exact 128-bit arithmetic, on every pair of values near the edges
// of int64 and uint64 (where overflow starts) and a few ordinary ones.
#include "core/base/checked.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

using namespace fusebox;

namespace {

__extension__ typedef __int128 i128;  // exact for any sum or difference of 64-bit values

template <typename T>
std::vector<T> edges() {
  constexpr T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  std::vector<T> v = {lo, static_cast<T>(lo + 1), static_cast<T>(hi - 1), hi, 0, 1, 2, 3, 1000,
                      static_cast<T>(hi / 2), static_cast<T>(hi / 2 + 1), static_cast<T>(int64_t{1} << 31),
                      static_cast<T>(int64_t{1} << 32)};  // 0 for int32
  if constexpr (std::is_signed_v<T>) {
    for (T x : {T{-1}, T{-2}, T{-1000}, static_cast<T>(lo / 2), static_cast<T>(lo / 2 - 1),
                static_cast<T>(-(int64_t{1} << 32))})
      v.push_back(x);
  }
  return v;
}

template <typename T>
std::optional<T> fits(i128 exact) {
  if (exact < static_cast<i128>(std::numeric_limits<T>::min()) || exact > static_cast<i128>(std::numeric_limits<T>::max()))
    return std::nullopt;
  return static_cast<T>(exact);
}

template <typename T>
T clamp(i128 exact) {
  if (exact < static_cast<i128>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (exact > static_cast<i128>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(exact);
}

template <typename T>
void check_all() {
  for (T a : edges<T>())
    for (T b : edges<T>()) {
      const i128 x = a, y = b;
      EXPECT_EQ(checked_add(a, b), fits<T>(x + y)) << a << " + " << b;
      EXPECT_EQ(checked_sub(a, b), fits<T>(x - y)) << a << " - " << b;
      // |x * y| < 2^128 for 64-bit operands except for unsigned near 2^64 squared: compare by
      // division there.
      const bool small = (x < 0 ? -x : x) < (i128{1} << 63) && (y < 0 ? -y : y) < (i128{1} << 63);
      if (small) {
        EXPECT_EQ(checked_mul(a, b), fits<T>(x * y)) << a << " * " << b;
      }
      EXPECT_EQ(saturating_add(a, b), clamp<T>(x + y)) << a << " +sat " << b;
      EXPECT_EQ(saturating_sub(a, b), clamp<T>(x - y)) << a << " -sat " << b;
    }
}

}  // namespace

TEST(Checked, Int64AgreesWithExactArithmetic) { check_all<int64_t>(); }
TEST(Checked, Uint64AgreesWithExactArithmetic) { check_all<uint64_t>(); }
TEST(Checked, Int32AgreesWithExactArithmetic) { check_all<int32_t>(); }

TEST(Checked, UnsignedProductsNearTwoToTheSixtyFour) {
  constexpr uint64_t hi = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(checked_mul(hi, uint64_t{1}), hi);
  EXPECT_EQ(checked_mul(hi, uint64_t{2}), std::nullopt);
  EXPECT_EQ(checked_mul(uint64_t{1} << 32, uint64_t{1} << 32), std::nullopt);
  EXPECT_EQ(checked_mul(uint64_t{1} << 32, (uint64_t{1} << 32) - 1), hi - ((uint64_t{1} << 32) - 1));
}

TEST(Checked, ProductOfAListStopsAtTheFirstOverflow) {
  EXPECT_EQ(checked_product(std::vector<int64_t>{}), 1);
  EXPECT_EQ(checked_product(std::vector<int64_t>{2, 3, 7}), 42);
  EXPECT_EQ(checked_product(std::vector<int64_t>{0, int64_t{1} << 62, 4}), 0);
  // An overflow before the zero is still one: the arithmetic could not be done in order.
  EXPECT_EQ(checked_product(std::vector<int64_t>{int64_t{1} << 62, 4, 0}), std::nullopt);
  EXPECT_EQ(checked_product(std::vector<int64_t>{int64_t{1} << 31, int64_t{1} << 31, 2}), std::nullopt);  // 2^63
  EXPECT_EQ(checked_product(std::vector<int64_t>{-(int64_t{1} << 62), 2}), std::numeric_limits<int64_t>::min());
}
