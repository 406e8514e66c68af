#pragma once
// conv_direct-inl.h's row (and DirectRowArgs) for every compiled Highway target, for a file
// whose own code is not compiled per target: conv_nhwc.cpp calls N_AVX3::ConvDirectRow and
// N_AVX2::ConvDirectRow by level. Include it once, from a .cpp, before other Highway
// headers.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/cpu/conv_direct-inl.h"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "ops/cpu/conv_direct-inl.h"
