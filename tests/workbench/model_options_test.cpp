// The window's model options: a builtin spec's options with their values and defaults, a .onnx
// file's input dims, and the one settings command each edit becomes (checked by the spec).
#include "app/workbench/model_options.h"

#include <gtest/gtest.h>

#include "app/workbench/model_source.h"
#include "core/base/error.h"
#include "core/models/builtin_models.h"

namespace fusebox::workbench {
namespace {

Settings with_model(const std::string& model) {
  Settings s;
  s.model = model;
  return s;
}

std::string error_of(const Settings& s, const std::string& key, const std::string& value) {
  try {
    return "(no error: " + model_option_command(s, key, value) + ")";
  } catch (const Error& e) {
    return e.what();
  }
}

TEST(ModelOptions, ABuiltinSpecListsEveryOptionWithItsValueInTheKindsOrder) {
  const ModelOptions o = model_options(with_model("transformer:seq=32"));
  ASSERT_EQ(o.error, "");
  std::vector<std::string> keys, values;
  for (const auto& opt : o.options) {
    keys.push_back(opt.key);
    values.push_back(opt.value);
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"seq", "d", "heads", "ffn", "batch"}));
  EXPECT_EQ(values, (std::vector<std::string>{"32", "256", "4", "1024", "1"}));
  EXPECT_EQ(o.options[0].help, "default 64");
  const ModelOptions mlp = model_options(with_model("mlp"));
  ASSERT_EQ(mlp.options.size(), 2u);
  EXPECT_EQ(mlp.options[0].kind, ModelOption::Kind::List);
  EXPECT_EQ(mlp.options[0].value, "784-512-512-10");
}

TEST(ModelOptions, AnEditIsOneModelCommandKeepingOnlyWhatDiffersFromTheDefaults) {
  const Settings s = with_model("transformer:seq=32,heads=8");
  EXPECT_EQ(model_option_command(s, "seq", "64"), "model=transformer:heads=8");
  EXPECT_EQ(model_option_command(s, "batch", " 2 "), "model=transformer:seq=32,heads=8,batch=2");
  EXPECT_EQ(model_option_command(with_model("mlp"), "dims", "16-8-4"), "model=mlp:dims=16-8-4");
  // What comes out is a spec the model builder takes.
  EXPECT_NO_THROW(models::parse_model_spec(model_option_command(s, "ffn", "512").substr(6)));
}

TEST(ModelOptions, RefusedValuesNameTheOption) {
  const Settings s = with_model("transformer");
  EXPECT_EQ(error_of(s, "seq", "x"), "seq: expected an integer, got 'x'");
  EXPECT_NE(error_of(s, "heads", "3").find("heads"), std::string::npos) << error_of(s, "heads", "3");
  EXPECT_NE(error_of(s, "seq", "0").find("seq"), std::string::npos);
  EXPECT_EQ(error_of(s, "layers", "2"),
            "model 'transformer' has no option 'layers' (its options: seq, d, heads, ffn, batch)");
  // A spec that does not parse says so instead of listing options.
  EXPECT_NE(model_options(with_model("transformer:seq=-1")).error, "");
  EXPECT_TRUE(model_options(with_model("transformer:seq=-1")).options.empty());
}

TEST(ModelOptions, AnOnnxModelListsItsInputDimsAsTheDimsSettingNamesThem) {
  const std::string path = std::string(FUSEBOX_SOURCE_DIR) + "/assets/models/mlp_opset17.onnx";
  Settings s = with_model(path);
  const ModelOptions o = model_options(s);
  ASSERT_EQ(o.error, "");
  std::vector<std::string> dim_names;
  for (const OnnxDim& d : onnx_dims(path)) dim_names.push_back(d.name);
  ASSERT_EQ(o.options.size(), dim_names.size());
  for (size_t i = 0; i < o.options.size(); ++i) {
    EXPECT_EQ(o.options[i].key, dim_names[i]);
    EXPECT_EQ(o.options[i].kind, ModelOption::Kind::Dim);
  }
  const std::string first = o.options.at(0).key;
  EXPECT_EQ(model_option_command(s, first, "3"), "dims." + first + "=3");
  s.dims[first] = 3;
  EXPECT_EQ(model_options(s).options.at(0).value, "3");
  EXPECT_EQ(error_of(s, "bacth", "2").rfind("dims.bacth: ", 0), 0u) << error_of(s, "bacth", "2");
  EXPECT_NE(error_of(s, first, "-1").find("expected an integer"), std::string::npos);
  // A file that cannot be read: the error, no options.
  EXPECT_NE(model_options(with_model("/nonexistent/m.onnx")).error, "");
}

}  // namespace
}  // namespace fusebox::workbench
