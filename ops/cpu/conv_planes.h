#pragma once
// The vector loops of the channels-first conv and MaxPool (conv.cpp): conv_planes.cpp writes
// them once over Highway and compiles them for AVX2 and AVX-512 (AVX3). conv.cpp calls them by
// level; its portable level is its own plain loops.
//
// Depthwise conv and MaxPool read a plane that conv.cpp copied into a padded, phase-split buffer:
// rows[t] is the buffer row that kernel row t of an output row reads (null in the padding), and
// taps[kw] the offset of tap kw for output column 0 in it. Output column o's tap reads
// rows[t][taps[kw] + o]: no tap needs a bounds check.
//
// CopyEven: dst[i] = src[2 i] for i < n, reading no float at or past `end` (the input row's end).
// DwRows: depthwise conv, R (1 or 4) consecutive output rows from y (d.ow floats apart);
//   rows[r * row_taps + t] is the buffer row output row r's kernel row t reads, w the channel's
//   taps ([t][kw]).
// MaxRow: MaxPool, one output row, the max over the window's taps inside the input.
#include <cstdint>

#include "ops/cpu/conv_common.h"  // Dims

namespace fusebox::cpu {

namespace N_AVX3 {
void CopyEven(const float* src, const float* end, float* dst, int64_t n);
void DwRows(const Dims& d, int R, const float* const* rows, const int64_t* taps, const float* w,
            float bias, float* y);
void MaxRow(const Dims& d, const float* const* rows, const int64_t* taps, float* y);
}  // namespace N_AVX3
namespace N_AVX2 {
void CopyEven(const float* src, const float* end, float* dst, int64_t n);
void DwRows(const Dims& d, int R, const float* const* rows, const int64_t* taps, const float* w,
            float bias, float* y);
void MaxRow(const Dims& d, const float* const* rows, const int64_t* taps, float* y);
}  // namespace N_AVX2

}  // namespace fusebox::cpu
