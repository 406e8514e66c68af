#pragma once
// Op schemas: for every op type, its arity, the dtypes its inputs take, what its attributes
// mean, how to infer output types, what it costs (FLOPs, bytes moved), whether it is element-wise (fusable into a
// FusedElementwise program), whether its output is a view of its first input (Reshape and
// friends: zero-copy, aliasing in the planner), and how much kernel scratch it needs.
// Schemas are registered by name in OpRegistry; core/ir/ops/*.cpp register the builtin ones.
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/registry.h"
#include "core/ir/dtype.h"
#include "core/ir/graph.h"
#include "core/ir/node.h"
#include "core/ir/shape.h"

namespace fusebox::ir {

struct TensorType {
  DType dtype = DType::f32;
  Shape shape;
  size_t nbytes() const { return nbytes_of(shape, dtype_size(dtype)); }
};

using InferFn = std::function<std::vector<TensorType>(const Node&, const std::vector<TensorType>&)>;
using FlopsFn =
    std::function<double(const Node&, const std::vector<TensorType>&, const std::vector<TensorType>&)>;
using BytesFn = FlopsFn;
using ScratchFn =
    std::function<size_t(const Node&, const std::vector<TensorType>&, const std::vector<TensorType>&)>;

// What an op's kernel computes per element, for the roofline's reasons (profiler/analysis.h:
// an op below both roofs is held back by its transcendentals when it evaluates any). Every
// registered op declares it (test_ir: OpSchemas.EveryOpDeclaresItsMath).
enum class MathClass : uint8_t {
  Unset,           // not declared: a registration to mend
  Data,            // copies, moves, gathers or indexes data: no per-element arithmetic to speak of
  Arithmetic,      // adds, multiplies, compares, min/max, divides, square roots: the FMA units' work
  Transcendental,  // evaluates exp, log, tanh, erf, sin...: a vector-math polynomial an element
};
const char* math_class_name(MathClass c);  // "unset", "data", "arithmetic", "transcendental"

// The transcendental functions a node evaluates an element ({"exp", "log"} for LogSoftmax), in
// order without repeats, from its attributes where they choose (Gelu's approximation, a Conv's
// fused activation, a FusedElementwise program, a recurrent op's activations).
using MathFn = std::function<std::vector<std::string>(const Node&)>;
// A MathFn that always names `functions`.
MathFn fixed_math(std::vector<std::string> functions);

// What an op is, for drawing and grouping: the graph's box colours, the arena's and the op
// table's swatches (app/workbench/graph_layout.h: NodeKind). Every registered op declares it
// (test_ir: OpSchemas.EveryOpDeclaresItsKind).
enum class OpKind : uint8_t {
  Unset,          // not declared: a registration to mend
  MatMul,         // matrix products, and the recurrent ops (a GEMM a step against R)
  Conv,           // convolutions
  Fused,          // what the passes make: Fused*, MatMulAdd, Attention, LayerNorm, Gelu, ...
  Elementwise,    // an output element from the same elements of the inputs
  Normalization,  // softmaxes, batch norm, reductions and pools: an output from many inputs
  Layout,         // views, copies, gathers, scatters, pads, resizes: moves bytes
};
const char* op_kind_name(OpKind k);  // "unset", "matmul", "conv", "fused", "elementwise", ...
// The kind of an op type: its schema's, Unset for an op no schema names.
OpKind op_kind(std::string_view op);

// The dtypes an op's inputs take, ONNX's type constraints written as data: one letter an input,
// the last repeating for any inputs past it (Concat's, FusedElementwise's):
//   F  f32
//   I  i64
//   T  f32 or i64, one dtype for every T of the node (Add's two inputs, Where's two branches)
// So "TT" is Add, "ITT" Where, "TI" Gather, "F" Softmax. infer_node checks a node against them
// before its schema's infer runs, so a model that feeds an op a dtype fusebox has no kernel for
// is refused at import, naming the node, the input and what the op takes there, and the kernels'
// own checks are a second line. They are the CPU kernels' (the reference backend); another backend
// may take fewer and says so at prepare. Every registered op declares them
// (test_ir: OpSchemas.EveryOpDeclaresItsTypes).
// Whether `types` (as above) accepts the dtypes `inputs`: empty when it does, else the sentence
// saying why not ("input 1 is i64, but Softmax takes f32 there"). `op` names the op in it.
std::string type_mismatch(std::string_view op, std::string_view types, const std::vector<DType>& inputs);
// What a letter of `types` stands for, for listings: "f32", "i64", "f32|i64".
const char* type_letter_name(char letter);

struct OpSchema {
  std::string name;
  std::string doc;  // one line
  int min_inputs = 1;
  int max_inputs = 1;
  int min_outputs = 1;
  int max_outputs = 1;
  bool elementwise = false;  // out[i] depends on in[j][i] only (with broadcasting)
  bool view = false;         // output 0 shares input 0's bytes (no kernel work at all)
  // Output 0 may take input 0's bytes when nothing reads them after this node (the planner
  // decides, core/planner/lifetimes.h); the kernel must then work with output 0 == input 0.
  bool in_place = false;
  std::string types;         // the dtypes its inputs take (above); empty: not declared
  InferFn infer;             // throws fusebox::Error on bad shapes or attributes
  FlopsFn flops;             // may be empty: 0 FLOPs
  BytesFn bytes;             // may be empty: every input and output moves once, whole
  BytesFn in_place_bytes;    // with in_place: what it moves when the plan wrote it in place
  ScratchFn scratch_bytes;   // may be empty: no scratch
  OpKind kind = OpKind::Unset;
  MathClass math = MathClass::Unset;
  MathFn transcendentals;    // set for Transcendental ops, and for others whose attributes may add some
};

// The transcendental functions `node` evaluates per output element (its schema's
// transcendentals; empty for an op without, or unknown). A malformed node claims none.
std::vector<std::string> node_transcendentals(const Node& node);

struct OpCost {
  double flops = 0;
  double bytes = 0;  // bytes read + written by the kernel, assuming no cache reuse across ops
};

// The op schemas (core/base/registry.h), the builtin ones registered on first use by family
// (core/ir/ops/*.cpp).
class OpRegistry : public Registry<OpSchema> {
 public:
  OpRegistry() : Registry("op") {}
  static OpRegistry& instance();
};

// Infers output types of `node` from its input types, checking arity first. Errors name the node.
std::vector<TensorType> infer_node(const Node& node, const std::vector<TensorType>& inputs);
// `written_in_place`: the plan put output 0 over input 0 (OpSchema::in_place), so the kernel moves
// only what its in_place_bytes says.
OpCost node_cost(const Node& node, const std::vector<TensorType>& inputs,
                 const std::vector<TensorType>& outputs, bool written_in_place = false);
// node_cost summed over a graph's nodes, with the types its tensors have.
OpCost graph_cost(const Graph& graph);
size_t node_scratch_bytes(const Node& node, const std::vector<TensorType>& inputs,
                          const std::vector<TensorType>& outputs);

}  // namespace fusebox::ir
