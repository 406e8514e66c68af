#pragma once
// checked: integer arithmetic on sizes, counts and times that come from a file, in one place.
// A model's dims and attributes, a .npy header and a trace's timestamps are whatever the file
// says, so a product or a sum of them can pass 2^63; plain `*` and `+` would wrap (signed: undefined
// behaviour) and carry on with a wrong size. These say so instead:
//
//   checked_mul(a, b)     a * b, or nullopt where it does not fit T (the caller's error names what)
//   checked_add, checked_sub
//   checked_product(dims) the product of a list (1 for none), or nullopt
//   saturating_add, saturating_sub
//                         the result clamped to T's range, for times where a clamp (with a
//                         warning) is the right answer rather than a refusal
//
// T is the first operand's type; the second converts to it, so both sides are one type and the
// check is the type's own range (GCC's __builtin_*_overflow, exact for every input).
#include <concepts>
#include <iterator>
#include <limits>
#include <optional>
#include <type_traits>

namespace fusebox {

template <std::integral T>
[[nodiscard]] constexpr std::optional<T> checked_add(T a, std::type_identity_t<T> b) {
  T out{};
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

template <std::integral T>
[[nodiscard]] constexpr std::optional<T> checked_sub(T a, std::type_identity_t<T> b) {
  T out{};
  if (__builtin_sub_overflow(a, b, &out)) return std::nullopt;
  return out;
}

template <std::integral T>
[[nodiscard]] constexpr std::optional<T> checked_mul(T a, std::type_identity_t<T> b) {
  T out{};
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// The product of `values` (any range of T), 1 for an empty one; nullopt where a partial product
// overflows. A zero anywhere still makes nullopt if an earlier partial product overflowed: the
// question is whether the arithmetic can be done, not what its true value is.
template <typename Range, std::integral T = std::remove_cvref_t<decltype(*std::begin(std::declval<Range&>()))>>
[[nodiscard]] constexpr std::optional<T> checked_product(const Range& values) {
  T out = 1;
  for (T v : values)
    if (__builtin_mul_overflow(out, v, &out)) return std::nullopt;
  return out;
}

template <std::integral T>
[[nodiscard]] constexpr T saturating_add(T a, std::type_identity_t<T> b) {
  T out{};
  if (!__builtin_add_overflow(a, b, &out)) return out;
  return b > 0 ? std::numeric_limits<T>::max() : std::numeric_limits<T>::min();
}

template <std::integral T>
[[nodiscard]] constexpr T saturating_sub(T a, std::type_identity_t<T> b) {
  T out{};
  if (!__builtin_sub_overflow(a, b, &out)) return out;
  return b < 0 ? std::numeric_limits<T>::max() : std::numeric_limits<T>::min();
}

}  // namespace fusebox
