#pragma once
// How Conv and the pooling ops (MaxPool, AveragePool, Global*Pool) and BatchNormalization read
// their attributes against their input shapes: one reading shared by the op schemas
// (core/ir/ops/conv.cpp) and every backend's kernels (ops/cpu/conv.cpp), which only map it onto
// their loops. Inputs are NC + spatial dims (NCHW for 2-D). Each function throws fusebox::Error
// naming the attribute or shape at fault.
#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/node.h"
#include "core/ir/shape.h"

namespace fusebox::ir {

// The CPU depthwise loop looks each kernel row's input row up once per output row, on the stack.
inline constexpr int64_t kDepthwiseMaxKernelRows = 64;

// A sliding window over the spatial dims of x [N, C, spatial...]. Output position o of dim i
// reads inputs o * strides[i] - pad_begin[i] + j * dilations[i] for j < kernel[i]; positions
// outside [0, in[i]) are padding.
struct WindowGeometry {
  int64_t batch = 0, channels = 0;
  Shape in, kernel, out;  // spatial dims, one entry each
  std::vector<int64_t> strides, dilations, pad_begin, pad_end;
  int64_t in_size() const { return numel(in); }
  int64_t out_size() const { return numel(out); }
  int64_t kernel_size() const { return numel(kernel); }
};

// Reads strides, dilations, pads and auto_pad (NOTSET, SAME_UPPER, SAME_LOWER, VALID) for a
// window of `kernel` over x. ceil_mode rounds the output size up (pooling), dropping a last window
// that would start in the end padding (as PyTorch and ONNX Runtime do). `op` names the op in errors.
WindowGeometry window_geometry(const Node& node, const Shape& x, const Shape& kernel, bool ceil_mode,
                               const char* op);

// Conv(x, w[, b]): x [N, C_in, spatial...], w [C_out, C_in / group, kernel...], b [C_out].
// One to three spatial dims.
struct ConvShape {
  WindowGeometry g;
  int64_t group = 1;
  int64_t c_in = 0, c_out = 0;
  int64_t c_in_per_group = 0, c_out_per_group = 0;
  bool has_bias = false;
  // Rows of the im2col matrix per output position: c_in_per_group * kernel size.
  int64_t k() const { return c_in_per_group * g.kernel_size(); }
  // A 1x1 window, stride 1, no padding: the input is already the GEMM's matrix.
  bool pointwise() const;
  // Each group sees one input channel (depthwise when group == C_in), and the kernel has at most
  // kDepthwiseMaxKernelRows rows (depth x height): the kernels' own depthwise loop. Others are
  // grouped GEMMs.
  bool depthwise() const;
  Shape output_shape() const;
};

ConvShape conv_shape(const Node& node, const Shape& x, const Shape& w, const Shape* bias);

// The activation a Conv applies to each output before it stores it, set by the conv_activation
// fusion patterns (core/passes/pattern_conv_activation.cpp), so the activation never rereads the
// output: attribute "activation" = "relu" | "sigmoid" | "clip" (activation_min, activation_max;
// absent bounds are infinite) | "hardsigmoid" (activation_alpha, activation_beta) | "hardswish";
// no attribute: none. Each computes what the standalone op's CPU kernel computes.
enum class ConvActKind : uint8_t { kNone, kRelu, kSigmoid, kClip, kHardSigmoid, kHardSwish };
struct ConvActivation {
  ConvActKind kind = ConvActKind::kNone;
  float a = 0, b = 0;  // clip: min, max; hardsigmoid: alpha, beta
  double flops_per_output() const;
};
// Throws fusebox::Error naming an unknown activation.
ConvActivation conv_activation(const Node& node);
// The activation's sentence for rewrites and the details pane: "relu", "clip [0, 6]".
std::string conv_activation_text(const ConvActivation& act);

// ConvTranspose(x, w[, b]): x [N, C_in, spatial...], w [C_in, C_out / group, kernel...], b [C_out];
// one to three spatial dims. Input position i of dim d adds into outputs
// i * strides[d] - pad_begin[d] + j * dilations[d] for kernel taps j (those inside the output).
// Output size: strides * (in - 1) + output_padding + (kernel - 1) * dilations + 1 - pads, or the
// output_shape attribute (pads then derived from it, as is auto_pad SAME_*: out = in * strides).
struct ConvTransposeShape {
  int64_t batch = 0, group = 1, c_in = 0, c_out = 0, c_in_per_group = 0, c_out_per_group = 0;
  Shape in, kernel, out;
  std::vector<int64_t> strides, dilations, pad_begin;
  bool has_bias = false;
  Shape output_shape() const;
};

ConvTransposeShape conv_transpose_shape(const Node& node, const Shape& x, const Shape& w, const Shape* bias);

// MaxPool / AveragePool: kernel_shape (required), ceil_mode; the window over x.
WindowGeometry pool_geometry(const Node& node, const Shape& x, const char* op);

// BatchNormalization (inference): x [N, C, ...] and scale, B, mean, var each [C].
struct BatchNormShape {
  int64_t batch = 0, channels = 0, spatial = 1;  // spatial: product of the dims after C
  double epsilon = 1e-5;
};
BatchNormShape batch_norm_shape(const Node& node, const Shape& x, const std::vector<Shape>& params);


// ---- Channels-last (NHWC) forms -------------------------------------------------------------
//
// NhwcConv, NhwcMaxPool, NhwcAveragePool, NhwcGlobalAveragePool and NhwcGlobalMaxPool, made by the
// channels_last pass (core/passes/channels_last.cpp), compute what Conv and the pools compute, with
// the same attributes and weights (a Conv weight stays [C_out, C_in / group, kernel...]); only
// their activations are stored channels-last, [N, spatial..., C]. Their schemas read a node
// through the functions above on channels_first(x) and store the result channels_last().

// NhwcConv's attribute channels_first_input = 1: its input is still channels-first (a stem conv
// reading the graph's own input, a few channels: it reads them in place instead of after a
// Transpose); its output is channels-last all the same. The shape its schema reads as [N, C, ...].
// The channels_last pass asks for it when a Conv with one group and at most
// kChannelsFirstInputMaxChannels input channels reads a channels-first tensor: a Transpose of the
// input would cost as much as the conv's own reads (the CPU kernel's direct path reads each
// channel in place).
inline constexpr int64_t kChannelsFirstInputMaxChannels = 4;
bool reads_channels_first(const Node& node);
Shape nhwc_conv_input_as_channels_first(const Node& node, const Shape& x);

// [N, spatial..., C] -> [N, C, spatial...] and back; shapes of rank < 3 are returned unchanged.
Shape channels_first(const Shape& x);
Shape channels_last(const Shape& x);
// The Transpose perms between the two for a rank: to channels-last (0, 2, ..., r - 1, 1) and to
// channels-first (0, r - 1, 1, ..., r - 2).
std::vector<int64_t> to_channels_last_perm(size_t rank);
std::vector<int64_t> to_channels_first_perm(size_t rank);
// The channels-last op an op becomes ("Conv" -> "NhwcConv"), or "" when it has none; and back.
std::string channels_last_op(const std::string& op);
std::string channels_first_op(const std::string& op);

// The CPU NhwcConv kernel (ops/cpu/conv_nhwc.cpp) is the packed GEMM with the output positions as
// its rows, written straight into the output: C[p][co] = A[p][k] B[k][co], k running over
// (kernel tap, input channel) so that each tap's input channels are one contiguous run of the
// input. A pointwise conv's A is the input itself; any other conv copies the rows of one tile of
// kConvTileRows positions at a time into its thread's slot (nhwc_conv_row_floats floats a row). A
// depthwise conv with one output channel per group (nhwc_depthwise; at most
// kDepthwiseMaxKernelRows kernel rows) is its own loop over the channels and needs no slot. Before
// the slots: room for the weight reordered at each run when it is not a constant, C_out * k
// floats (reserved unless weight_constant, as conv_scratch_bytes).
bool nhwc_depthwise(const ConvShape& c);
int64_t nhwc_conv_row_floats(const ConvShape& c);
int64_t nhwc_conv_weight_floats(const ConvShape& c);
// A channels-first input (channels_first_input) always takes the im2col's slots; a conv that
// takes_winograd (below) takes its own.
size_t nhwc_conv_scratch_bytes(const ConvShape& c, bool channels_first_input = false, bool weight_constant = false,
                               bool winograd = false);

// ---- Winograd F(2x2, 3x3) -------------------------------------------------------------------
//
// NhwcConv's attribute winograd = 1, set by the winograd pass (core/passes/winograd.cpp): the CPU
// kernel computes the conv as Winograd's minimal filtering F(2x2, 3x3) (Lavin and Gray, 2015).
// Each 2x2 block of outputs (a tile) reads a 4x4 block of input; both are taken to a 4x4
// transformed domain where the 3x3 conv is an element-wise product summed over input channels,
// i.e. 16 GEMMs [tiles x C_in] x [C_in x C_out]: 16 multiplies per tile and channel pair instead of
// 36, 2.25x fewer, for the cost of the transforms (adds only). It applies to a 2-D conv with a 3x3
// kernel, stride 1, no dilation, one group, a channels-last input and a constant weight (transformed
// once in prepare); others run the GEMM path as before.
inline constexpr int64_t kWinogradBlockTiles = 28;  // tiles per GEMM (two 14-row micro-kernel blocks)
bool winograd_shape(const ConvShape& c);
bool wants_winograd(const Node& node);
// Why NhwcConv `node` of shape c cannot run as Winograd (a stem reading its input channels-first,
// a stride, a dilation, another shape); "" when it can. The one rule the pass, the schema's FLOPs,
// the scratch and the kernel all read.
std::string winograd_refusal(const Node& node, const ConvShape& c);
// The kernel runs `node` as Winograd: marked, a shape it takes, and its weight a constant.
bool takes_winograd(const Node& node, const ConvShape& c, bool weight_constant);
// Output tiles of one image: ceil(OH / 2) x ceil(OW / 2).
int64_t winograd_tiles(const ConvShape& c);
// One thread's slot: the transformed input and the GEMMs' results of a block, 16 x tiles x
// (C_in + C_out) floats.
int64_t winograd_slot_floats(const ConvShape& c);
// The FLOPs the Winograd kernel does: the 16 GEMMs, the input transform (32 adds per tile and input
// channel), the output transform (24 adds per tile and output channel) and the bias.
double winograd_flops(const ConvShape& c);
}  // namespace fusebox::ir

namespace fusebox::ir {

// The CPU depthwise Conv copies each input plane into its slot padded in width and split into
// `strides.back()` phases (padded column c at phase c % stride, index c / stride), so that the
// taps of consecutive output columns are consecutive floats whatever the stride: each phase row
// holds this many floats.
int64_t depthwise_phase_width(const ConvShape& c);
// The same for any window (a MaxPool's), and the floats of one such padded plane, a multiple of
// 16 (64 bytes).
int64_t phase_width(const WindowGeometry& g);
int64_t padded_plane_floats(const WindowGeometry& g);
// Whether the CPU MaxPool takes its vector path over padded planes: a window at most
// kMaxPoolVectorWidth wide and kDepthwiseMaxKernelRows rows (depth x height). Other windows are
// pooled in place, tap by tap over what each output reads.
inline constexpr int64_t kMaxPoolVectorWidth = 16;
bool max_pool_uses_planes(const WindowGeometry& g);
// The CPU MaxPool's planned scratch: one padded plane (filled with -inf) per thread slot, and
// none for a window pooled in place (so a kernel of 2^32 with pads asks for nothing).
size_t max_pool_scratch_bytes(const WindowGeometry& g);

// The CPU Conv kernel's planned scratch (ops/cpu/conv.cpp): it computes kConvTileRows output
// positions at a time per thread, each tile needing its im2col rows (none for a pointwise conv,
// which reads the input in place) and its GEMM result before that is transposed into NCHW. Up to
// kConvScratchSlots threads (and no more than there are tiles, times the weight panels a tile's
// output channels split into when tiles are fewer than threads) work at once, each in its own
// slot; a depthwise conv's slot holds one padded, phase-split input plane instead.
// Before the slots: room for the weight packed into GEMM panels (kConvPanelWidth columns wide, as
// ops/cpu/packed_gemm.h packs), used when the weight is not a constant (a graph input) and must
// be packed at each run. The schema cannot tell, so its size (weight_constant false) reserves it;
// the CPU kernel's own scratch size, asked with the node's constants, leaves it out when the
// weight is one (packed once in prepare).
inline constexpr int64_t kConvTileRows = 96;
inline constexpr int64_t kConvScratchSlots = 8;
inline constexpr int64_t kConvPanelWidth = 32;
// Floats of the packed weight region and of one thread's slot, each a multiple of 16 (64 bytes)
// so every part stays aligned.
int64_t conv_weight_floats(const ConvShape& c);
int64_t conv_slot_floats(const ConvShape& c);
size_t conv_scratch_bytes(const ConvShape& c, bool weight_constant = false);

}  // namespace fusebox::ir
