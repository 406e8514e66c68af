// load_model's dims: a dim the .onnx model does not have is an error naming it and the model's
// dims, not silently ignored (the run would use another shape than the one asked for).
#include "app/workbench/model_source.h"

#include <gtest/gtest.h>

#include <string>

#include "core/base/error.h"
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

}  // namespace
}  // namespace fusebox::workbench
