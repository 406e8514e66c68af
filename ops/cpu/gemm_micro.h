#pragma once
// gemm_micro-inl.h's micro-kernel (and, through it, vec_math-inl.h's functions) for every
// compiled Highway target, for a file whose own code is not compiled per target:
// packed_gemm.cpp takes N_AVX3::GemmMicroKernel<...> and N_AVX2::GemmMicroKernel<...> into its
// kernel tables. Include it once, from a .cpp, before other Highway headers, and instead of
// vec_math.h (both run foreach_target.h over vec_math-inl.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/cpu/gemm_micro-inl.h"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "ops/cpu/gemm_micro-inl.h"
