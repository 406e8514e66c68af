// Softmax and LogSoftmax, LayerNorm (and SkipLayerNorm), ReduceMean, ReduceSum/Prod/Max/Min, ArgMax
// and ArgMin, CumSum.
//
// All three reduce along some dims. The shapes are reduced in prepare() to [outer, n, inner]
// (ReduceMean: the general case keeps a strided walk). With inner == 1 the reduced elements are
// contiguous and each row is a vectorized loop; with inner > 1 the loops run across a chunk of
// up to kCols columns at once (vectorized over the inner dim), accumulating per column on the
// stack. Sums accumulate in double: float sums over 1024 elements lose ~3 digits in the worst
// case, and LayerNorm outputs are compared against double references at 1e-5.
//
// LayerNorm rows have explicit AVX2 and AVX-512 paths (the level fixed in prepare, isa.h): the
// float -> double conversions and the double sums in vector registers, several accumulators
// deep, and the skip sum fused into the first pass. The portable level stays plain C++.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "core/ir/normalization_params.h"
#include "core/ir/shape.h"
#include "ops/cpu/cpu_backend.h"
#include "ops/cpu/ew_ops.h"
#include "ops/cpu/kernel_util.h"
#include "ops/cpu/math.h"
#include "ops/cpu/parallel.h"
#include "ops/cpu/strided.h"
#include "ops/cpu/vec_math.h"
#include "ops/cpu/vector_math.h"

namespace fusebox::cpu {

namespace {

constexpr int64_t kCols = 256;  // columns per chunk when reducing over a non-innermost axis

int64_t chunks_of(int64_t n) {
  return (n + kCols - 1) / kCols;
}

// ---- Softmax -------------------------------------------------------------------------------

struct SoftmaxState {
  int64_t outer = 1, n = 1, inner = 1;
  Isa isa = Isa::kPortable;  // kernel_isa at prepare: the exp of contiguous rows
  bool log = false;          // LogSoftmax: x - max - log(sum exp(x - max))
};

// log_softmax of one contiguous row: y = x - m first, then the exponentials of y in stack
// blocks on `isa`'s vector code, so y never holds exp values that would need a log per element.
void log_softmax_row(Isa isa, const float* x, float* y, int64_t n) {
  float m = -std::numeric_limits<float>::infinity();
#pragma omp simd reduction(max : m)
  for (int64_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] - m;
  constexpr int64_t kBlock = 256;
  float e[kBlock];
  double sum = 0;
  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
    const int64_t w = std::min(kBlock, n - i0);
    exp_span(isa, y + i0, e, w);
    for (int64_t i = 0; i < w; ++i) sum += e[i];
  }
  const float ls = static_cast<float>(std::log(sum));
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] -= ls;
}

// softmax_row (math.h) with the exponentials on `isa`'s explicit vector code (exp_span): the
// portable loop leaves exp_f32 to the compiler's vectorizer.
void softmax_row_isa(Isa isa, const float* x, float* y, int64_t n) {
  if (isa == Isa::kPortable) {
    softmax_row(x, y, n);
    return;
  }
  float m = -std::numeric_limits<float>::infinity();
#pragma omp simd reduction(max : m)
  for (int64_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] - m;
  exp_span(isa, y, y, n);
  double sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += y[i];
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) y[i] *= inv;
}

std::shared_ptr<const void> prepare_softmax(const exec::KernelContext& ctx) {
  require_arity(ctx, 1, 1);
  require_dtype(ctx, 0, ir::DType::f32);
  SoftmaxState st;
  st.isa = kernel_isa(ctx);
  const ir::AxisSplit split =
      or_fail(ctx, [&] { return ir::softmax_split(ctx.node, ctx.inputs[0].shape); });
  st.outer = split.outer;
  st.n = split.n;
  st.inner = split.inner;
  st.log = ctx.node.op == "LogSoftmax";
  return exec::make_state(st);
}

// Softmax over axis with inner > 1: columns [c0, c0 + w) of one outer block.
void softmax_columns(const float* x, float* y, int64_t n, int64_t inner, int64_t w, bool log) {
  float mx[kCols];
  double sum[kCols];
  std::fill(mx, mx + w, -std::numeric_limits<float>::infinity());
  std::fill(sum, sum + w, 0.0);
  for (int64_t a = 0; a < n; ++a) {
    const float* row = x + a * inner;
    for (int64_t j = 0; j < w; ++j) mx[j] = std::max(mx[j], row[j]);
  }
  for (int64_t a = 0; a < n; ++a) {
    const float* row = x + a * inner;
    float* out = y + a * inner;
    for (int64_t j = 0; j < w; ++j) {
      float e = exp_f32(row[j] - mx[j]);
      out[j] = e;
      sum[j] += e;
    }
  }
  float inv[kCols];
  if (log) {
    // out holds exp(x - max); log softmax is recomputed from x, exactly, rather than log(out).
    for (int64_t j = 0; j < w; ++j) inv[j] = mx[j] + static_cast<float>(std::log(sum[j]));
    for (int64_t a = 0; a < n; ++a) {
      const float* row = x + a * inner;
      float* out = y + a * inner;
      for (int64_t j = 0; j < w; ++j) out[j] = row[j] - inv[j];
    }
    return;
  }
  for (int64_t j = 0; j < w; ++j) inv[j] = static_cast<float>(1.0 / sum[j]);
  for (int64_t a = 0; a < n; ++a) {
    float* out = y + a * inner;
    for (int64_t j = 0; j < w; ++j) out[j] *= inv[j];
  }
}

void run_softmax(const exec::KernelArgs& args) {
  const auto& st = state_of<SoftmaxState>(args);
  const float* x = input_ptr<float>(args, 0);
  float* y = output_ptr<float>(args, 0);
  if (st.outer * st.n * st.inner == 0) return;
  if (st.inner == 1) {
    parallel_for(st.outer, std::max<int64_t>(1, kGrainMath / st.n),
                 [&](int64_t begin, int64_t end) {
                   for (int64_t r = begin; r < end; ++r) {
                     if (st.log) log_softmax_row(st.isa, x + r * st.n, y + r * st.n, st.n);
                     else softmax_row_isa(st.isa, x + r * st.n, y + r * st.n, st.n);
                   }
                 });
    return;
  }
  const int64_t chunks = chunks_of(st.inner);
  const int64_t block = st.n * st.inner;
  parallel_for(
      st.outer * chunks, std::max<int64_t>(1, kGrainMath / (st.n * std::min(kCols, st.inner))),
      [&](int64_t begin, int64_t end) {
        for (int64_t u = begin; u < end; ++u) {
          const int64_t o = u / chunks, c0 = (u % chunks) * kCols;
          const int64_t off = o * block + c0;
          softmax_columns(x + off, y + off, st.n, st.inner, std::min(kCols, st.inner - c0), st.log);
        }
      });
}

// ---- LayerNorm -----------------------------------------------------------------------------

// LayerNorm(x, scale, bias) and SkipLayerNorm(x, skip, scale, bias) = LayerNorm(x + skip, ...):
// one row loop; with a skip input the row sum is written to the output row first and normalized
// there, in place, while it is in L1.
//
// A row is three passes, each a per-level function (LnRow): the portable loops below, and the
// same passes written once over Highway for the vector levels (vec_math-inl.h: LnSum, LnSqDev,
// LnNorm):
//   sum      sum of the row in double (with skip: y = x + skip is stored, and its floats summed)
//   sq_dev   sum of (x - mean)^2 in double: two passes, no cancellation, unlike E[x^2] - E[x]^2
//   norm     y = ((x - m) - m_lo) * inv_std * scale + bias, dense scale and bias only
// The mean enters the float passes as a float pair m + m_lo: x - m is exact (Sterbenz: x and m
// are close when it matters), so rows with a large offset (x ~ 1000 +- 1) keep full precision.
struct LnRow {
  double (*sum)(const float* x, const float* skip, float* y, int64_t d);
  double (*sq_dev)(const float* x, double mean, int64_t d);
  void (*norm)(const float* x, float m, float m_lo, float s, const float* scale, const float* bias,
               float* y, int64_t d);
};

double ln_sum_portable(const float* x, const float* skip, float* y, int64_t d) {
  if (skip) {
    for (int64_t i = 0; i < d; ++i) y[i] = x[i] + skip[i];
    x = y;
  }
  double sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < d; ++i) sum += x[i];
  return sum;
}

double ln_sq_dev_portable(const float* x, double mean, int64_t d) {
  double sq = 0;
#pragma omp simd reduction(+ : sq)
  for (int64_t i = 0; i < d; ++i) {
    const double t = x[i] - mean;
    sq += t * t;
  }
  return sq;
}

void ln_norm_portable(const float* x, float m, float m_lo, float s, const float* scale,
                      const float* bias, float* y, int64_t d) {
  if (bias) {
    for (int64_t i = 0; i < d; ++i) y[i] = ((x[i] - m) - m_lo) * s * scale[i] + bias[i];
  } else {
    for (int64_t i = 0; i < d; ++i) y[i] = ((x[i] - m) - m_lo) * s * scale[i];
  }
}

// Indexed by Isa (isa.h: kPortable 0, kAvx2 1, kAvx512 2).
constexpr LnRow kLnRows[] = {
    {ln_sum_portable, ln_sq_dev_portable, ln_norm_portable},
    {N_AVX2::LnSum, N_AVX2::LnSqDev, N_AVX2::LnNorm},
    {N_AVX3::LnSum, N_AVX3::LnSqDev, N_AVX3::LnNorm},
};

struct LayerNormState {
  int64_t rows = 0, d = 0;
  float epsilon = 1e-5f;
  ir::LayerNormSplit split;  // which inputs (skip, bias) and outputs (mean, inv_std) it has
  bool dense_params = true;  // scale (and bias) are full [d] blocks
  StridedPlan params;        // otherwise: operands scale, bias broadcast over the normalized block
  Isa isa = Isa::kPortable;  // kernel_isa at prepare: the row functions (kLnRows)
};

// FirstParam: the input index of scale, 1 (LayerNorm) or 2 (SkipLayerNorm: after skip).
template <int FirstParam>
std::shared_ptr<const void> prepare_layer_norm(const exec::KernelContext& ctx) {
  require_arity(ctx, FirstParam + 1, 1);
  for (size_t i = 0; i < ctx.inputs.size(); ++i) require_dtype(ctx, i, ir::DType::f32);
  LayerNormState st;
  st.isa = kernel_isa(ctx);
  st.split = or_fail(ctx, [&] { return ir::layer_norm_split(ctx.node, ctx.inputs, FirstParam); });
  const ir::LayerNormSplit& ln = st.split;
  std::vector<ir::Shape> params{ctx.inputs[FirstParam].shape};
  if (ln.has_bias) params.push_back(ctx.inputs[FirstParam + 1].shape);
  st.params = or_fail(ctx, [&] { return make_broadcast_plan(params, ln.norm); });
  for (int k = 0; k < st.params.operands; ++k)
    st.dense_params = st.dense_params && st.params.contiguous(k);
  st.rows = ln.rows;
  st.d = ln.d;
  st.epsilon = static_cast<float>(ln.epsilon);
  return exec::make_state(std::move(st));
}

void run_layer_norm(const exec::KernelArgs& args) {
  const auto& st = state_of<LayerNormState>(args);
  const LnRow& row_fn = kLnRows[static_cast<int>(st.isa)];
  const float* x = input_ptr<float>(args, 0);
  const ir::LayerNormSplit& ln = st.split;
  const float* skip = ln.first_param == 2 ? input_ptr<float>(args, 1) : nullptr;
  const float* scale = input_ptr<float>(args, ln.first_param);
  const float* bias = ln.has_bias ? input_ptr<float>(args, ln.first_param + 1) : nullptr;
  float* y = output_ptr<float>(args, 0);
  float* mean_out = ln.write_mean ? output_ptr<float>(args, 1) : nullptr;
  float* inv_out = ln.write_inv_std ? output_ptr<float>(args, 2) : nullptr;
  const int64_t d = st.d;
  parallel_for(
      st.rows, std::max<int64_t>(1, kGrainSimple / std::max<int64_t>(d, 1)),
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          float* yr = y + r * d;
          const double sum = row_fn.sum(x + r * d, skip ? skip + r * d : nullptr, yr, d);
          // With skip, the row is normalized in place: each element is read before it is written.
          const float* xr = skip ? yr : x + r * d;
          const double mean = sum / static_cast<double>(d);
          const double sq = row_fn.sq_dev(xr, mean, d);
          const double inv = 1.0 / std::sqrt(sq / static_cast<double>(d) + st.epsilon);
          if (mean_out) mean_out[r] = static_cast<float>(mean);
          if (inv_out) inv_out[r] = static_cast<float>(inv);
          const float m = static_cast<float>(mean), m_lo = static_cast<float>(mean - m);
          const float s = static_cast<float>(inv);
          if (st.dense_params) {
            row_fn.norm(xr, m, m_lo, s, scale, bias, yr, d);
            continue;
          }
          const int64_t ss = st.params.inner_stride(0), bs = bias ? st.params.inner_stride(1) : 0;
          for_each_segment(st.params, 0, d, [&](int64_t o, const int64_t* off, int64_t len) {
            const float* g = scale + off[0];
            const float* b = bias ? bias + off[1] : nullptr;
            for (int64_t i = 0; i < len; ++i) {
              const float v = ((xr[o + i] - m) - m_lo) * s * g[i * ss];
              yr[o + i] = b ? v + b[i * bs] : v;
            }
          });
        }
      });
}

// ---- ReduceMean ----------------------------------------------------------------------------

struct ReduceMeanState {
  int64_t out_numel = 0;
  int64_t count = 0;  // elements averaged per output
  // Fast path: the input is [outer, count, inner] and the mean runs over the middle dim.
  bool middle = true;
  int64_t outer = 1, inner = 1;
  // General path: walk the kept dims for the output and the reduced dims for each sum.
  StridedPlan kept, reduced;
};

// The shape analysis every reduction shares (ReduceMean, ReduceSum, ReduceMax, ReduceMin).
ReduceMeanState reduce_state(const exec::KernelContext& ctx) {
  require_arity(ctx, 1, 1);
  const ir::Shape& x = ctx.inputs[0].shape;
  const ir::ReduceSplit split = or_fail(ctx, [&] { return ir::reduce_mean_split(ctx.node, x); });
  ReduceMeanState st;
  st.out_numel = ir::numel(ctx.outputs[0].shape);
  st.count = split.count;
  // Group neighbouring dims of the same kind; size-1 dims belong to neither.
  struct Group {
    bool reduced;
    int64_t size;
  };
  std::vector<Group> groups;
  for (size_t d = 0; d < x.size(); ++d) {
    if (x[d] == 1) continue;
    if (!groups.empty() && groups.back().reduced == split.reduce[d]) {
      groups.back().size *= x[d];
    } else {
      groups.push_back({split.reduce[d], x[d]});
    }
  }
  // Fast path when at most one reduced group: [kept?][reduced][kept?].
  int reduced_groups = 0;
  for (const auto& g : groups) reduced_groups += g.reduced ? 1 : 0;
  st.middle = reduced_groups <= 1;
  if (st.middle) {
    bool seen = false;
    for (const auto& g : groups) {
      if (g.reduced)
        seen = true;
      else
        (seen ? st.inner : st.outer) *= g.size;
    }
  } else {
    try {
      st.kept = make_strided_plan(split.kept_dims, {split.kept_strides});
      st.reduced = make_strided_plan(split.reduced_dims, {split.reduced_strides});
    } catch (const Error& e) {
      fail(ctx, e.what());
    }
  }
  return st;
}

std::shared_ptr<const void> prepare_reduce_mean(const exec::KernelContext& ctx) {
  require_dtype(ctx, 0, ir::DType::f32);
  return exec::make_state(reduce_state(ctx));
}

void run_reduce_mean(const exec::KernelArgs& args) {
  const auto& st = state_of<ReduceMeanState>(args);
  if (st.out_numel == 0) return;
  const float* x = input_ptr<float>(args, 0);
  float* y = output_ptr<float>(args, 0);
  const int64_t n = st.count;
  const double scale = 1.0 / static_cast<double>(n);  // n == 0: inf * 0 sums -> NaN, as numpy
  if (!st.middle) {
    const StridedPlan& kp = st.kept;
    const StridedPlan& rp = st.reduced;
    const int64_t ks = kp.inner_stride(0), rs = rp.inner_stride(0);
    parallel_for(
        st.out_numel, std::max<int64_t>(1, kGrainSimple / std::max<int64_t>(n, 1)),
        [&](int64_t begin, int64_t end) {
          for_each_segment(kp, begin, end, [&](int64_t o, const int64_t* koff, int64_t klen) {
            for (int64_t i = 0; i < klen; ++i) {
              const float* base = x + koff[0] + i * ks;
              double sum = 0;
              for_each_segment(rp, 0, rp.numel, [&](int64_t, const int64_t* roff, int64_t rlen) {
                const float* p = base + roff[0];
                for (int64_t j = 0; j < rlen; ++j) sum += p[j * rs];
              });
              y[o + i] = static_cast<float>(sum * scale);
            }
          });
        });
    return;
  }
  if (st.inner == 1) {
    parallel_for(st.outer, std::max<int64_t>(1, kGrainSimple / std::max<int64_t>(n, 1)),
                 [&](int64_t begin, int64_t end) {
                   for (int64_t o = begin; o < end; ++o) {
                     const float* row = x + o * n;
                     double sum = 0;
#pragma omp simd reduction(+ : sum)
                     for (int64_t j = 0; j < n; ++j) sum += row[j];
                     y[o] = static_cast<float>(sum * scale);
                   }
                 });
    return;
  }
  const int64_t chunks = chunks_of(st.inner);
  parallel_for(
      st.outer * chunks,
      std::max<int64_t>(1, kGrainSimple / std::max<int64_t>(n * std::min(kCols, st.inner), 1)),
      [&](int64_t begin, int64_t end) {
        double acc[kCols];
        for (int64_t u = begin; u < end; ++u) {
          const int64_t o = u / chunks, c0 = (u % chunks) * kCols;
          const int64_t w = std::min(kCols, st.inner - c0);
          std::fill(acc, acc + w, 0.0);
          for (int64_t r = 0; r < n; ++r) {
            const float* row = x + (o * n + r) * st.inner + c0;
            for (int64_t j = 0; j < w; ++j) acc[j] += row[j];
          }
          float* out = y + o * st.inner + c0;
          for (int64_t j = 0; j < w; ++j) out[j] = static_cast<float>(acc[j] * scale);
        }
      });
}

// ---- ReduceSum, ReduceMax, ReduceMin --------------------------------------------------------

// The reduction as an accumulator type: f32 sums accumulate in double (as ReduceMean's), i64
// sums wrap; Max/Min propagate NaN and give the type's identity (-inf / +inf, or the i64
// limits) over an empty set, as ONNX specifies.
template <typename T>
inline bool is_nan(T v) {
  if constexpr (std::is_same_v<T, float>) return std::isnan(v);
  else return false;
}

template <typename T>
struct SumR {
  using Acc = std::conditional_t<std::is_same_v<T, float>, double, uint64_t>;
  static Acc init() { return 0; }
  static void add(Acc& a, T v) { a += static_cast<Acc>(v); }
  static T finish(Acc a) { return static_cast<T>(a); }
};
// Products: f32 in double, i64 wrapping (unsigned multiply, as the element-wise ops).
template <typename T>
struct ProdR {
  using Acc = std::conditional_t<std::is_same_v<T, float>, double, uint64_t>;
  static Acc init() { return 1; }
  static void add(Acc& a, T v) { a *= static_cast<Acc>(v); }
  static T finish(Acc a) { return static_cast<T>(a); }
};
template <typename T>
struct MaxR {
  using Acc = T;
  static Acc init() {
    if constexpr (std::is_same_v<T, float>) return -std::numeric_limits<float>::infinity();
    else return std::numeric_limits<T>::min();
  }
  static void add(Acc& a, T v) { a = (v > a || is_nan(v)) ? v : a; }
  static T finish(Acc a) { return a; }
};
template <typename T>
struct MinR {
  using Acc = T;
  static Acc init() {
    if constexpr (std::is_same_v<T, float>) return std::numeric_limits<float>::infinity();
    else return std::numeric_limits<T>::max();
  }
  static void add(Acc& a, T v) { a = (v < a || is_nan(v)) ? v : a; }
  static T finish(Acc a) { return a; }
};

struct ReduceState {
  ReduceMeanState split;
  void (*run)(const ReduceMeanState&, const exec::KernelArgs&) = nullptr;
};

// The three paths of run_reduce_mean (strided walk, contiguous rows, column chunks) with the
// accumulator R.
template <typename T, typename R>
void reduce_impl(const ReduceMeanState& st, const exec::KernelArgs& args) {
  using Acc = typename R::Acc;
  const T* x = input_ptr<T>(args, 0);
  T* y = output_ptr<T>(args, 0);
  const int64_t n = st.count;
  const int64_t grain = std::max<int64_t>(1, kGrainSimple / std::max<int64_t>(n, 1));
  if (!st.middle) {
    const StridedPlan& kp = st.kept;
    const StridedPlan& rp = st.reduced;
    const int64_t ks = kp.inner_stride(0), rs = rp.inner_stride(0);
    parallel_for(st.out_numel, grain, [&](int64_t begin, int64_t end) {
      for_each_segment(kp, begin, end, [&](int64_t o, const int64_t* koff, int64_t klen) {
        for (int64_t i = 0; i < klen; ++i) {
          const T* base = x + koff[0] + i * ks;
          Acc acc = R::init();
          for_each_segment(rp, 0, rp.numel, [&](int64_t, const int64_t* roff, int64_t rlen) {
            const T* p = base + roff[0];
            for (int64_t j = 0; j < rlen; ++j) R::add(acc, p[j * rs]);
          });
          y[o + i] = R::finish(acc);
        }
      });
    });
    return;
  }
  if (st.inner == 1) {
    parallel_for(st.outer, grain, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        const T* row = x + o * n;
        Acc acc = R::init();
        for (int64_t j = 0; j < n; ++j) R::add(acc, row[j]);
        y[o] = R::finish(acc);
      }
    });
    return;
  }
  const int64_t chunks = chunks_of(st.inner);
  parallel_for(st.outer * chunks,
               std::max<int64_t>(1, kGrainSimple / std::max<int64_t>(n * std::min(kCols, st.inner), 1)),
               [&](int64_t begin, int64_t end) {
                 Acc acc[kCols];
                 for (int64_t u = begin; u < end; ++u) {
                   const int64_t o = u / chunks, c0 = (u % chunks) * kCols;
                   const int64_t w = std::min(kCols, st.inner - c0);
                   std::fill(acc, acc + w, R::init());
                   for (int64_t r = 0; r < n; ++r) {
                     const T* row = x + (o * n + r) * st.inner + c0;
                     for (int64_t j = 0; j < w; ++j) R::add(acc[j], row[j]);
                   }
                   T* out = y + o * st.inner + c0;
                   for (int64_t j = 0; j < w; ++j) out[j] = R::finish(acc[j]);
                 }
               });
}

template <template <typename> class R>
exec::KernelDef reduce_kernel() {
  auto prepare = [](const exec::KernelContext& ctx) {
    ReduceState st;
    st.split = reduce_state(ctx);
    st.run = ctx.inputs[0].dtype == ir::DType::f32 ? reduce_impl<float, R<float>>
                                                   : reduce_impl<int64_t, R<int64_t>>;
    return exec::make_state(std::move(st));
  };
  auto run = [](const exec::KernelArgs& args) {
    const auto& st = state_of<ReduceState>(args);
    if (st.split.out_numel > 0) st.run(st.split, args);
  };
  return {prepare, run};
}

// ---- ArgMax --------------------------------------------------------------------------------

struct ArgMaxState {
  int64_t outer = 1, n = 1, inner = 1;
  bool last = false;  // select_last_index: the last of equal maxima
  bool f32 = true;
  bool min = false;   // ArgMin: the same walk with the comparison turned around
};

// The first maximum (or the last); NaN counts as the maximum, as numpy's argmax. ArgMin: the first
// minimum, NaN counting as the minimum (numpy's argmin).
template <typename T>
void argmax_impl(const ArgMaxState& st, const T* x, int64_t* y) {
  parallel_for(st.outer * st.inner, std::max<int64_t>(1, kGrainSimple / std::max<int64_t>(st.n, 1)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t u = begin; u < end; ++u) {
                   const int64_t o = u / st.inner, i = u % st.inner;
                   const T* p = x + o * st.n * st.inner + i;
                   int64_t best = 0;
                   T bv = p[0];
                   for (int64_t k = 1; k < st.n && !is_nan(bv); ++k) {
                     const T v = p[k * st.inner];
                     if (is_nan(v) || (st.min ? v < bv : v > bv) || (st.last && v == bv)) {
                       bv = v;
                       best = k;
                     }
                   }
                   y[u] = best;
                 }
               });
}

std::shared_ptr<const void> prepare_argmax(const exec::KernelContext& ctx) {
  require_arity(ctx, 1, 1);
  const ir::Shape& x = ctx.inputs[0].shape;
  ArgMaxState st;
  const int axis = or_fail(ctx, [&] {
    return ir::normalize_axis(ctx.node.attrs.get_int("axis", 0), x.size(), ctx.node.op + " axis");
  });
  const ir::AxisSplit split = ir::split_at(x, axis);
  st.outer = split.outer;
  st.n = split.n;
  st.inner = split.inner;
  if (st.n == 0) fail(ctx, ctx.node.op + " over an empty axis has no answer");
  st.min = ctx.node.op == "ArgMin";
  st.last = ctx.node.attrs.get_int("select_last_index", 0) != 0;
  st.f32 = ctx.inputs[0].dtype == ir::DType::f32;
  return exec::make_state(std::move(st));
}

void run_argmax(const exec::KernelArgs& args) {
  const auto& st = state_of<ArgMaxState>(args);
  if (st.outer * st.inner == 0) return;
  if (st.f32) argmax_impl(st, input_ptr<float>(args, 0), output_ptr<int64_t>(args, 0));
  else argmax_impl(st, input_ptr<int64_t>(args, 0), output_ptr<int64_t>(args, 0));
}

// ---- CumSum --------------------------------------------------------------------------------

struct CumSumState {
  ir::AxisSplit split;     // the lines summed: split.n elements, split.inner apart
  bool exclusive = false;  // each output the sum of the elements before it
  bool reverse = false;    // summed from the end of the axis
  bool f32 = true;
};

// Each line along the axis summed in order (from its end when reverse). Float sums accumulate in
// double, as the reductions here and PyTorch's CPU cumsum do, so a long axis keeps its digits;
// i64 wraps on overflow (ew_ops.h). Each element is read before its output is written, so x and y
// may be one buffer.
template <typename T>
void cumsum_impl(const CumSumState& st, const T* x, T* y) {
  using Acc = std::conditional_t<std::is_same_v<T, float>, double, int64_t>;
  const int64_t n = st.split.n, inner = st.split.inner;
  parallel_for(st.split.outer * inner, std::max<int64_t>(1, kGrainSimple / std::max<int64_t>(n, 1)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t u = begin; u < end; ++u) {
                   const int64_t base = (u / inner) * n * inner + u % inner;
                   Acc acc = 0;
                   for (int64_t j = 0; j < n; ++j) {
                     const int64_t at = base + (st.reverse ? n - 1 - j : j) * inner;
                     Acc next;
                     if constexpr (std::is_same_v<T, float>) next = acc + static_cast<double>(x[at]);
                     else next = AddOp{}(acc, x[at]);
                     y[at] = static_cast<T>(st.exclusive ? acc : next);
                     acc = next;
                   }
                 }
               });
}

std::shared_ptr<const void> prepare_cumsum(const exec::KernelContext& ctx) {
  require_arity(ctx, 1, 1);
  const ir::Shape& x = ctx.inputs[0].shape;
  CumSumState st;
  st.split = ir::split_at(x, or_fail(ctx, [&] {
    return ir::normalize_axis(ctx.node.attrs.get_int("axis", 0), x.size(), ctx.node.op + " axis");
  }));
  st.exclusive = ctx.node.attrs.get_int("exclusive", 0) != 0;
  st.reverse = ctx.node.attrs.get_int("reverse", 0) != 0;
  st.f32 = ctx.inputs[0].dtype == ir::DType::f32;
  return exec::make_state(st);
}

void run_cumsum(const exec::KernelArgs& args) {
  const auto& st = state_of<CumSumState>(args);
  if (st.split.outer * st.split.n * st.split.inner == 0) return;
  if (st.f32) cumsum_impl(st, input_ptr<float>(args, 0), output_ptr<float>(args, 0));
  else cumsum_impl(st, input_ptr<int64_t>(args, 0), output_ptr<int64_t>(args, 0));
}

// ---- Hardmax -------------------------------------------------------------------------------

// Hardmax: 1 at the first maximum along the axis (ArgMax's walk, NaN counting as the maximum),
// 0 elsewhere.
std::shared_ptr<const void> prepare_hardmax(const exec::KernelContext& ctx) {
  require_arity(ctx, 1, 1);
  require_dtype(ctx, 0, ir::DType::f32);
  const ir::AxisSplit split =
      or_fail(ctx, [&] { return ir::softmax_split(ctx.node, ctx.inputs[0].shape); });
  ArgMaxState st;
  st.outer = split.outer;
  st.n = split.n;
  st.inner = split.inner;
  return exec::make_state(st);
}

void run_hardmax(const exec::KernelArgs& args) {
  const auto& st = state_of<ArgMaxState>(args);
  const float* x = input_ptr<float>(args, 0);
  float* y = output_ptr<float>(args, 0);
  if (st.outer * st.n * st.inner == 0) return;
  parallel_for(st.outer * st.inner, std::max<int64_t>(1, kGrainSimple / st.n), [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) {
      const int64_t o = u / st.inner, i = u % st.inner;
      const float* p = x + o * st.n * st.inner + i;
      float* q = y + o * st.n * st.inner + i;
      int64_t best = 0;
      for (int64_t k = 1; k < st.n && !std::isnan(p[best * st.inner]); ++k)
        if (std::isnan(p[k * st.inner]) || p[k * st.inner] > p[best * st.inner]) best = k;
      for (int64_t k = 0; k < st.n; ++k) q[k * st.inner] = k == best ? 1.0f : 0.0f;
    }
  });
}

}  // namespace

void add_normalization_kernels(exec::KernelTable& table) {
  table.add("ReduceSum", reduce_kernel<SumR>());
  table.add("ReduceMax", reduce_kernel<MaxR>());
  table.add("ReduceMin", reduce_kernel<MinR>());
  table.add("ReduceProd", reduce_kernel<ProdR>());
  table.add("ArgMax", {prepare_argmax, run_argmax});
  table.add("ArgMin", {prepare_argmax, run_argmax});
  table.add("CumSum", {prepare_cumsum, run_cumsum});
  table.add("LogSoftmax", {prepare_softmax, run_softmax});
  table.add("Hardmax", {prepare_hardmax, run_hardmax});
  table.add("Softmax", {prepare_softmax, run_softmax});
  table.add("LayerNorm", {prepare_layer_norm<1>, run_layer_norm});
  table.add("SkipLayerNorm", {prepare_layer_norm<2>, run_layer_norm});
  table.add("ReduceMean", {prepare_reduce_mean, run_reduce_mean});
}

}  // namespace fusebox::cpu
