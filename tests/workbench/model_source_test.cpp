// load_model's dims: a dim the .onnx model does not have is an error naming it and the model's
// dims, not silently ignored (the run would use another shape than the one asked for).
#include "app/workbench/model_source.h"

#include <gtest/gtest.h>

#include <string>

#include "core/base/error.h"
#include "core/ir/npy.h"
#include "core/models/onnx_import.h"

namespace fusebox::workbench {
namespace {

const std::string kMlp = std::string(FUSEBOX_SOURCE_DIR) + "/assets/models/mlp_opset17.onnx";

std::string error_of(const std::map<std::string, int64_t>& dims) {
  try {
    load_model(kMlp, 1, dims);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ModelSource, AnUnknownDimIsAnErrorListingTheModelsDims) {
  const auto inputs = models::inspect_onnx_file(kMlp).inputs;
  ASSERT_EQ(inputs.size(), 1u);
  const std::string x = inputs[0].name;
  EXPECT_EQ(error_of({{"bacth", 2}}),
            "dims.bacth: " + kMlp + " has no dim 'bacth' (its dims: " + x + ":0, " + x + ":1)");
  // The names it lists are the ones it takes.
  EXPECT_EQ(load_model(kMlp, 1, {{x + ":0", 3}}).tensor(x).shape.at(0), 3);
}

// A builtin spec has no dynamic dims: the error spells out the options that set its sizes.
TEST(ModelSource, DimsOnABuiltinSpecListItsSizeOptions) {
  try {
    load_model("transformer:seq=16", 1, {{"batch", 2}});
    FAIL() << "dims on a builtin spec were accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "dims: only a .onnx model has dynamic dims ('transformer:seq=16' is a builtin spec; its sizes are set "
              "in the spec itself: transformer:seq=16,d=256,heads=4,ffn=1024,batch=1)");
  }
}

// Inputs from .npy files: the others keep the values they have without them (the seeded draws
// are the same), and a file's input is not also drawn (no second copy of a large input).
TEST(ModelSource, AnInputFromAFileLeavesTheOthersSeededValues) {
  ir::Graph g;
  g.add_input("a", ir::DType::f32, {3});
  g.add_input("b", ir::DType::f32, {2});
  g.outputs = {g.add_node("Mul", {"b", "b"}, {}, "mul")};
  const std::vector<ir::Tensor> seeded = random_inputs(g, 7);
  const std::string file = ::testing::TempDir() + "/model_source_a.npy";
  ir::Tensor a(ir::DType::f32, {3});
  for (int i = 0; i < 3; ++i) a.data<float>()[i] = static_cast<float>(i) + 0.5f;
  ir::write_npy(file, a);
  const std::vector<ir::Tensor> in = load_inputs(g, 7, {{"a", file}});
  ASSERT_EQ(in.size(), 2u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(in[0].data<float>()[i], static_cast<float>(i) + 0.5f);
  for (int i = 0; i < 2; ++i) EXPECT_EQ(in[1].data<float>()[i], seeded[1].data<float>()[i]);
}

}  // namespace
}  // namespace fusebox::workbench
