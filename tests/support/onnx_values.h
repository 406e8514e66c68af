#pragma once
// The inputs and outputs of ONNX models built in a test, with dims written as exporters write
// them.
#include <onnx/onnx_pb.h>

#include <cctype>
#include <string>
#include <vector>

namespace fusebox::test {

// `v` becomes a tensor value named `name` of element type `type` (onnx::TensorProto::FLOAT, ...).
// Each dim is a number (a dim_value), a name (a dim_param) or "" (neither, as some exporters leave
// one); no dims is a scalar's shape.
inline void onnx_tensor_value(onnx::ValueInfoProto* v, const std::string& name, int type,
                              const std::vector<std::string>& dims) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(type);
  tt->mutable_shape();
  for (const std::string& d : dims) {
    auto* dim = tt->mutable_shape()->add_dim();
    if (d.empty()) continue;
    if (std::isdigit(static_cast<unsigned char>(d[0]))) dim->set_dim_value(std::stoll(d));
    else dim->set_dim_param(d);
  }
}

}  // namespace fusebox::test
