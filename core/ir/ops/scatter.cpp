// ScatterND and ScatterElements schemas (ONNX's, with every reduction: core/ir/scatter_params.h).
#include "core/ir/ops/builtin_ops.h"
#include "core/ir/scatter_params.h"

namespace fusebox::ir {

void register_scatter_ops(OpRegistry& r) {
  struct Family {
    const char* name;
    const char* doc;
  };
  for (const Family& f : {
           Family{"ScatterND", "data with each update slice written (or reduced: attribute reduction) at the "
                               "index tuple indices[.., :] names"},
           Family{"ScatterElements", "data with updates[u] written (or reduced: attribute reduction) at u's "
                                     "coordinates, indices[u] replacing the one along attribute axis"},
       }) {
    OpSchema s;
    s.name = f.name;
    s.doc = f.doc;
    s.min_inputs = s.max_inputs = 3;
    s.in_place = true;  // the CPU kernel copies data to its output only when they differ
    s.infer = [](const Node& n, const std::vector<TensorType>& in) {
      scatter_params(n, in);
      return std::vector<TensorType>{in[0]};
    };
    // One operation per update element when it reduces; a plain write is a copy.
    s.flops = [](const Node& n, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
      const ScatterParams p = scatter_params(n, in);
      if (p.reduction == ScatterReduction::kNone) return 0.0;
      return static_cast<double>(numel(in[2].shape));
    };
    // In place the data is not copied: the kernel reads the indices and updates and writes an
    // element per update (reading it first when it reduces).
    s.in_place_bytes = [](const Node& n, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
      const ScatterParams p = scatter_params(n, in);
      const double written = static_cast<double>(in[2].nbytes());
      return static_cast<double>(in[1].nbytes()) + written +
             (p.reduction == ScatterReduction::kNone ? written : 2 * written);
    };
    r.add(std::move(s));
  }
  set_math(r, MathClass::Data, {"ScatterND", "ScatterElements"});  // copies; a reduction is one op an update
  set_types(r, "TIT", {"ScatterND", "ScatterElements"});  // data, indices, updates
  set_kind(r, OpKind::Layout, {"ScatterND", "ScatterElements"});
}

}  // namespace fusebox::ir
