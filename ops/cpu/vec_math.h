#pragma once
// vec_math-inl.h's functions (exp, the activations, the row reductions) for every compiled Highway
// target, in a file whose own code is not compiled per target: its intrinsic code calls them on
// registers, e.g. in a FUSEBOX_AVX512 function
//   x = N_AVX3::Activate<ACT>(kF32x16, V16{x}).raw;
// (avx512.h says why that inlines), and its plain code calls the row functions by target:
//   N_AVX2::LnSum(x, skip, y, d);
// Include it once, from a .cpp, before other Highway headers.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/cpu/vec_math-inl.h"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "ops/cpu/vec_math-inl.h"

namespace fusebox::cpu {
// A register of each level as Highway's vector, and the tag its functions take.
using V16 = hwy::N_AVX3::Vec512<float>;
using V8 = hwy::N_AVX2::Vec256<float>;
inline constexpr hwy::N_AVX3::ScalableTag<float> kF32x16{};
inline constexpr hwy::N_AVX2::ScalableTag<float> kF32x8{};
}  // namespace fusebox::cpu
