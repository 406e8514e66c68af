// FusedElementwise: a chain of element-wise ops (the node's `program`, see
// core/ir/elementwise_program.h) run as one pass over the output.
//
// Unfused, each op of a Gelu chain reads and writes the whole tensor; fused, the output is
// processed in tiles of kTile elements and every instruction runs over the tile while it sits in
// L1, so memory is touched once per input and once for the output. Intermediate results live in
// a few tile-sized registers on the stack of the thread running the tile (no heap allocation in
// run). prepare() parses the program, assigns registers by liveness (a result's register is
// reused once its last reader has run) and builds the broadcast plan.
//
// Inputs are broadcast to the output. Two ways to feed a tile:
//  - segment mode (the collapsed innermost dim is long, or there is no broadcasting at all):
//    tiles never cross an innermost row, so every input is either a pointer into its own data
//    (stride 1) or one value (stride 0). No copies: full-size inputs, scalars and [.., N] biases
//    are all read in place.
//  - gather mode (short innermost rows, e.g. [1000, 3] + [3]): tiles run over the flat output;
//    full-size inputs and scalars are still read in place, other inputs are gathered into a
//    tile buffer when an instruction reads them.
#include <algorithm>
#include <string>
#include <vector>

#include "core/ir/elementwise_program.h"
#include "ops/cpu/cpu_backend.h"
#include "ops/cpu/ew_ops.h"
#include "ops/cpu/kernel_util.h"
#include "ops/cpu/math.h"
#include "ops/cpu/parallel.h"
#include "ops/cpu/strided.h"

namespace fusebox::cpu {

namespace {

constexpr int kTile = 512;            // elements per tile: 2 KiB per register
constexpr int kMaxInstructions = ir::kMaxEwInstructions;
constexpr int kMaxRegisters = ir::kMaxEwLiveResults;  // 16 x 2 KiB on the stack
constexpr int64_t kMinSegment = 128;  // innermost runs this long are read in place

enum class InputKind : uint8_t { Full, Scalar, General };

struct FusedState {
  std::vector<ir::EwInstr> program;
  std::vector<int> reg;  // register of each instruction's result; the last one writes the output
  StridedPlan plan;      // every input broadcast to the output
  bool segment_mode = true;
  std::vector<InputKind> kinds;          // gather mode: how each input feeds a tile
  std::vector<StridedPlan> input_plans;  // gather mode: each input alone vs the output
  int64_t grain = kGrainSimple;          // elements per thread, scaled by program length
};

// One thread's tile storage, on its stack (~36 KiB).
struct TileScratch {
  alignas(64) float regs[kMaxRegisters][kTile];
  alignas(64) float gather[2][kTile];
};

// An operand over a tile: kTile-ish values at p, or one value at p[0].
struct Val {
  const float* p;
  bool scalar;
};

// ---- instruction evaluation -----------------------------------------------------------------

float scalar_op(ir::EwOp op, float a, float b) {
  switch (op) {
    case ir::EwOp::Add:
      return AddOp{}(a, b);
    case ir::EwOp::Sub:
      return SubOp{}(a, b);
    case ir::EwOp::Mul:
      return MulOp{}(a, b);
    case ir::EwOp::Div:
      return DivOp{}(a, b);
    case ir::EwOp::Pow:
      return PowOp{}(a, b);
    case ir::EwOp::Relu:
      return ReluF{}(a);
    case ir::EwOp::Gelu:
      return GeluErfF{}(a);
    case ir::EwOp::GeluTanh:
      return GeluTanhF{}(a);
    case ir::EwOp::Tanh:
      return TanhF{}(a);
    case ir::EwOp::Sigmoid:
      return SigmoidF{}(a);
    case ir::EwOp::Exp:
      return ExpF{}(a);
    case ir::EwOp::Erf:
      return ErfF{}(a);
    case ir::EwOp::Sqrt:
      return std::sqrt(a);
    case ir::EwOp::Neg:
      return NegF{}(a);
  }
  return 0.0f;
}

// y[i] = op(a, b) for a tile where at least one operand is a vector. y may be the output,
// which may alias an input in place, so no __restrict.
template <typename Op>
void binary_tile(Val a, Val b, float* y, int n) {
  Op op;
  if (!a.scalar && !b.scalar) {
    for (int i = 0; i < n; ++i) y[i] = op(a.p[i], b.p[i]);
  } else if (!a.scalar) {
    const float vb = b.p[0];
    for (int i = 0; i < n; ++i) y[i] = op(a.p[i], vb);
  } else {
    const float va = a.p[0];
    for (int i = 0; i < n; ++i) y[i] = op(va, b.p[i]);
  }
}

template <typename F>
void unary_tile(const float* x, float* y, int n) {
  F f;
  for (int i = 0; i < n; ++i) y[i] = f(x[i]);
}

// Runs one instruction whose result is a vector (some operand is).
void vector_op(ir::EwOp op, Val a, Val b, float* y, int n) {
  switch (op) {
    case ir::EwOp::Add:
      return binary_tile<AddOp>(a, b, y, n);
    case ir::EwOp::Sub:
      return binary_tile<SubOp>(a, b, y, n);
    case ir::EwOp::Mul:
      return binary_tile<MulOp>(a, b, y, n);
    case ir::EwOp::Div:
      return binary_tile<DivOp>(a, b, y, n);
    case ir::EwOp::Pow:
      return binary_tile<PowOp>(a, b, y, n);
    case ir::EwOp::Relu:
      return unary_tile<ReluF>(a.p, y, n);
    case ir::EwOp::Gelu:
      return unary_tile<GeluErfF>(a.p, y, n);
    case ir::EwOp::GeluTanh:
      return unary_tile<GeluTanhF>(a.p, y, n);
    case ir::EwOp::Tanh:
      return unary_tile<TanhF>(a.p, y, n);
    case ir::EwOp::Sigmoid:
      return unary_tile<SigmoidF>(a.p, y, n);
    case ir::EwOp::Exp:
      return unary_tile<ExpF>(a.p, y, n);
    case ir::EwOp::Erf:
      return unary_tile<ErfF>(a.p, y, n);
    case ir::EwOp::Sqrt:
      return sqrt_span(a.p, y, n);
    case ir::EwOp::Neg:
      return unary_tile<NegF>(a.p, y, n);
  }
}

// Evaluates the program over one tile of n elements into out. input(i, which) returns input i
// over this tile; `which` (0 or 1) names the gather buffer it may use.
template <typename InputFn>
void eval_tile(const FusedState& st, InputFn&& input, float* out, int n, TileScratch& s) {
  Val results[kMaxInstructions];
  const int count = static_cast<int>(st.program.size());
  for (int k = 0; k < count; ++k) {
    const ir::EwInstr& ins = st.program[k];
    const bool binary = ir::ew_is_binary(ins.op);
    Val a = ins.a.is_input ? input(ins.a.index, 0) : results[ins.a.index];
    Val b = a;
    if (binary) b = ins.b.is_input ? input(ins.b.index, 1) : results[ins.b.index];
    const bool last = k == count - 1;
    float* y = last ? out : s.regs[st.reg[k]];
    if (a.scalar && b.scalar) {
      // Every operand is one value over this tile: compute it once.
      const float v = scalar_op(ins.op, a.p[0], b.p[0]);
      if (last) {
        std::fill(out, out + n, v);
      } else {
        y[0] = v;
      }
      results[k] = {y, true};
    } else {
      vector_op(ins.op, a, b, y, n);
      results[k] = {y, false};
    }
  }
}

// ---- run -----------------------------------------------------------------------------------

void run_segments(const FusedState& st, const exec::KernelArgs& args) {
  const StridedPlan& p = st.plan;
  float* out = output_ptr<float>(args, 0);
  parallel_for(p.numel, st.grain, [&](int64_t begin, int64_t end) {
    TileScratch s;
    for_each_segment(p, begin, end, [&](int64_t o, const int64_t* off, int64_t len) {
      for (int64_t t = 0; t < len; t += kTile) {
        const int n = static_cast<int>(std::min<int64_t>(kTile, len - t));
        auto input = [&](int i, int) -> Val {
          const int64_t stride = p.inner_stride(i);
          return {input_ptr<float>(args, i) + off[i] + t * stride, stride == 0};
        };
        eval_tile(st, input, out + o + t, n, s);
      }
    });
  });
}

void run_gathered(const FusedState& st, const exec::KernelArgs& args) {
  const int64_t numel = st.plan.numel;
  float* out = output_ptr<float>(args, 0);
  const int64_t tiles = (numel + kTile - 1) / kTile;
  parallel_for(tiles, std::max<int64_t>(1, st.grain / kTile), [&](int64_t first, int64_t last) {
    TileScratch s;
    for (int64_t tile = first; tile < last; ++tile) {
      const int64_t start = tile * kTile;
      const int n = static_cast<int>(std::min<int64_t>(kTile, numel - start));
      auto input = [&](int i, int which) -> Val {
        const float* x = input_ptr<float>(args, i);
        switch (st.kinds[i]) {
          case InputKind::Full:
            return {x + start, false};
          case InputKind::Scalar:
            return {x, true};
          case InputKind::General:
            break;
        }
        float* buf = s.gather[which];
        const StridedPlan& ip = st.input_plans[i];
        const int64_t is = ip.inner_stride(0);
        for_each_segment(ip, start, start + n, [&](int64_t o, const int64_t* off, int64_t len) {
          float* y = buf + (o - start);
          const float* src = x + off[0];
          if (is == 1) {
            std::copy(src, src + len, y);
          } else {
            std::fill(y, y + len, src[0]);
          }
        });
        return {buf, false};
      };
      eval_tile(st, input, out + start, n, s);
    }
  });
}

void run_fused(const exec::KernelArgs& args) {
  const auto& st = state_of<FusedState>(args);
  if (st.plan.numel == 0) return;
  if (st.segment_mode) {
    run_segments(st, args);
  } else {
    run_gathered(st, args);
  }
}

// ---- prepare -------------------------------------------------------------------------------

std::shared_ptr<const void> prepare_fused(const exec::KernelContext& ctx) {
  require_arity(ctx, 1, 1);
  FusedState st;
  const std::vector<std::string> text = ctx.node.attrs.get_strings("program");
  if (static_cast<int>(text.size()) > kMaxInstructions)
    fail(ctx, "program has " + std::to_string(text.size()) +
                  " instructions; the CPU kernel runs at most " + std::to_string(kMaxInstructions) +
                  ": split the chain into several FusedElementwise nodes");
  const int num_inputs = static_cast<int>(ctx.inputs.size());
  try {
    st.program = ir::parse_ew_program(text, num_inputs);
  } catch (const Error& e) {
    fail(ctx, e.what());
  }
  for (int i = 0; i < num_inputs; ++i) require_dtype(ctx, static_cast<size_t>(i), ir::DType::f32);
  if (ctx.outputs[0].dtype != ir::DType::f32) fail(ctx, "output must be f32");
  // Register allocation by liveness, as every backend does it.
  st.reg = or_fail(ctx, [&] { return ir::assign_ew_registers(st.program, "the CPU kernel"); });

  std::vector<ir::Shape> shapes;
  for (const auto& t : ctx.inputs) shapes.push_back(t.shape);
  const ir::Shape& out = ctx.outputs[0].shape;
  try {
    st.plan = make_broadcast_plan(shapes, out);
    st.segment_mode = st.plan.rank == 1 || st.plan.inner() >= kMinSegment;
    if (!st.segment_mode) {
      const int64_t numel = st.plan.numel;
      for (int i = 0; i < num_inputs; ++i) {
        const int64_t n = ir::numel(shapes[i]);
        InputKind kind = n == numel ? InputKind::Full
                         : n == 1   ? InputKind::Scalar
                                    : InputKind::General;
        st.kinds.push_back(kind);
        st.input_plans.push_back(kind == InputKind::General ? make_broadcast_plan({shapes[i]}, out)
                                                            : StridedPlan{});
      }
    }
  } catch (const Error& e) {
    fail(ctx, e.what());
  }
  st.grain = std::max<int64_t>(kTile, kGrainSimple / static_cast<int64_t>(st.program.size()));
  return exec::make_state(std::move(st));
}

}  // namespace

void add_fused_elementwise_kernels(exec::KernelTable& table) {
  table.add("FusedElementwise", {prepare_fused, run_fused});
}

}  // namespace fusebox::cpu
