// Every op's record says what its kernel computes (core/ir/op_schema.h: MathClass), so the
// roofline's "transcendental" reason is read from the op, not from a table kept beside it.
#include <gtest/gtest.h>

#include <string>

#include "core/ir/op_schema.h"

namespace fusebox::ir {
namespace {

TEST(OpSchemas, EveryOpDeclaresItsMath) {
  const OpRegistry& ops = OpRegistry::instance();
  ASSERT_GT(ops.size(), 100u);
  for (const auto& [name, schema] : ops.items()) {
    EXPECT_NE(schema.math, MathClass::Unset) << name << " declares no math class";
    if (schema.math == MathClass::Transcendental) {
      EXPECT_TRUE(static_cast<bool>(schema.transcendentals)) << name << " is transcendental but names no function";
    }
  }
}

// Every op says what it is (the graph's colours, the op table's swatches), and the passes' own
// ops say they are a fusion.
TEST(OpSchemas, EveryOpDeclaresItsKind) {
  for (const auto& [name, schema] : OpRegistry::instance().items())
    EXPECT_NE(schema.kind, OpKind::Unset) << name << " declares no kind";
  for (const char* op :
       {"FusedElementwise", "FusedBiasGelu", "MatMulAdd", "Attention", "LayerNorm", "Gelu"})
    EXPECT_EQ(op_kind(op), OpKind::Fused) << op;
  EXPECT_EQ(op_kind("Conv"), OpKind::Conv);
  EXPECT_EQ(op_kind("Add"), OpKind::Elementwise);
  EXPECT_EQ(op_kind("NoSuchOp"), OpKind::Unset);
  EXPECT_STREQ(op_kind_name(OpKind::Normalization), "normalization");
}

// Every op says which dtypes its inputs take (op_schema.h: OpSchema::types), in the letters the
// header defines, and no more letters than it has inputs.
TEST(OpSchemas, EveryOpDeclaresItsTypes) {
  for (const auto& [name, schema] : OpRegistry::instance().items()) {
    EXPECT_FALSE(schema.types.empty()) << name << " declares no types";
    EXPECT_EQ(schema.types.find_first_not_of("FIT"), std::string::npos) << name << ": " << schema.types;
    EXPECT_LE(schema.types.size(), static_cast<size_t>(schema.max_inputs)) << name << ": " << schema.types;
  }
  EXPECT_EQ(OpRegistry::instance().get("Where").types, "ITT");
  EXPECT_EQ(OpRegistry::instance().get("LSTM").types, "FFFFIFFF");
  EXPECT_STREQ(type_letter_name('T'), "f32|i64");
}

// A transcendental op names at least one function on its default attributes; the others name
// none unless their attributes add one (a Conv's fused sigmoid, a program's instructions).
TEST(OpSchemas, ATranscendentalOpNamesItsFunctions) {
  for (const auto& [name, schema] : OpRegistry::instance().items()) {
    Node n;
    n.op = name;
    n.inputs = {"x"};
    const std::vector<std::string> f = node_transcendentals(n);
    if (schema.math == MathClass::Transcendental) {
      EXPECT_FALSE(f.empty()) << name;
    } else {
      EXPECT_TRUE(f.empty()) << name << " (" << math_class_name(schema.math) << ") names " << f.front();
    }
  }
}

}  // namespace
}  // namespace fusebox::ir
