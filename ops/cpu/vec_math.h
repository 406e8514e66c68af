#pragma once
// vec_math-inl.h's functions (exp, the activations, the row reductions) for every compiled Highway
// target, in a file whose own code is not compiled per target: it calls the row functions by
// target, e.g.
//   N_AVX2::LnSum(x, skip, y, d);
// Include it once, from a .cpp, before other Highway headers.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/cpu/vec_math-inl.h"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "ops/cpu/vec_math-inl.h"

