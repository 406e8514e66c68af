#pragma once
// NhwcConv as Winograd F(2x2, 3x3) (core/ir/conv_params.h: winograd_shape, the winograd pass): the
// weight transformed once, U = G g G^T, into 16 packed GEMM weights [C_in x C_out]; each run takes
// blocks of up to kWinogradBlockTiles output tiles through the input transform (V = B^T d B, 16
// matrices [tiles x C_in] in the thread's slot), the 16 GEMMs (M = V U, on the packed GEMM's
// micro-kernels) and the output transform (Y = A^T M A, plus the bias and the fused activation),
// written straight into the channels-last output.
#include <vector>

#include "core/ir/conv_params.h"
#include "ops/cpu/conv_common.h"
#include "ops/cpu/packed_gemm.h"

namespace fusebox::cpu {

struct WinogradConv {
  Dims d;
  int64_t batch = 0, c_in = 0, c_out = 0;
  int64_t tiles_h = 0, tiles_w = 0;  // per image
  int64_t ldv = 0, ldm = 0;          // row strides of V and M in a slot (multiples of 16 floats)
  int64_t slot_floats = 0;           // one thread's slot (ir::winograd_slot_floats)
  Isa isa = Isa::kPortable;
  ir::ConvActivation act;
  std::vector<PackedB> u;    // 16: U[xi] = (G g G^T)[xi] as op(B) [C_in][C_out]
  std::vector<float> zeros;  // C_in zeros: the padding's input
};

// c must satisfy ir::winograd_shape (the node ir::takes_winograd); weight is the Conv's [C_out, C_in, 3, 3].
WinogradConv make_winograd(const ir::ConvShape& c, const float* weight, Isa isa, const ir::ConvActivation& act);

// x [N, H, W, C_in] -> y [N, OH, OW, C_out]; bias C_out floats or null; scratch holds
// nhwc_conv_scratch_bytes(c, false, true, true).
void run_winograd(const WinogradConv& w, const float* x, const float* bias, float* y, float* scratch);

}  // namespace fusebox::cpu
