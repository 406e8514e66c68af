#pragma once
// The two macros of the code that nvcc compiles for the device and g++ for the host tests
// (broadcast_index.cuh, layout_index.cuh, ew_math.cuh): defined here once, so whichever of those
// headers comes first, every function is declared alike.
//   FUSEBOX_HD       a function both sides call: __host__ __device__ and inlined under nvcc,
//                    plain inline under g++
//   FUSEBOX_UNROLL   before a loop over a compile-time bound: unrolled under nvcc, nothing under g++

#ifdef __CUDACC__
#define FUSEBOX_HD __host__ __device__ __forceinline__
#define FUSEBOX_UNROLL _Pragma("unroll")
#else
#define FUSEBOX_HD inline
#define FUSEBOX_UNROLL
#endif
