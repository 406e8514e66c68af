// Model spec parsing: defaults, options, canonical form, and an actionable message for every
// kind of mistake (each names the spec and the offending option or value).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/models/builtin_models.h"

namespace fusebox::models {
namespace {

// Parses `text`, expecting fusebox::Error whose message contains every one of `parts`.
void expect_error(const std::string& text, const std::vector<std::string>& parts) {
  try {
    parse_model_spec(text);
    ADD_FAILURE() << "'" << text << "' parsed without error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    for (const auto& p : parts)
      EXPECT_NE(msg.find(p), std::string::npos)
          << "message for '" << text << "' lacks '" << p << "': " << msg;
  }
}

TEST(ModelSpec, MlpDefaults) {
  ModelSpec s = parse_model_spec("mlp");
  EXPECT_EQ(s.kind, "mlp");
  EXPECT_EQ(s.text, "mlp");
  EXPECT_EQ(s.list_options.at("dims"), (std::vector<int64_t>{784, 512, 512, 10}));
  EXPECT_EQ(s.get("batch"), 1);
  EXPECT_EQ(s.canonical(), "mlp:dims=784-512-512-10,batch=1");
}

TEST(ModelSpec, TransformerDefaults) {
  ModelSpec s = parse_model_spec("transformer");
  EXPECT_EQ(s.kind, "transformer");
  EXPECT_EQ(s.get("seq"), 64);
  EXPECT_EQ(s.get("d"), 256);
  EXPECT_EQ(s.get("heads"), 4);
  EXPECT_EQ(s.get("ffn"), 1024);
  EXPECT_EQ(s.get("batch"), 1);
  EXPECT_EQ(s.options.size(), 5u);
  EXPECT_EQ(s.canonical(), "transformer:seq=64,d=256,heads=4,ffn=1024,batch=1");
}

TEST(ModelSpec, StackDefaults) {
  ModelSpec s = parse_model_spec("stack");
  EXPECT_EQ(s.get("layers"), 4);
  EXPECT_EQ(s.get("seq"), 128);
  EXPECT_EQ(s.get("d"), 256);
  EXPECT_EQ(s.get("heads"), 4);
  EXPECT_EQ(s.get("ffn"), 1024);
  EXPECT_EQ(s.get("batch"), 1);
}

TEST(ModelSpec, Options) {
  ModelSpec s = parse_model_spec("transformer:seq=128,d=512,heads=8,ffn=2048,batch=2");
  EXPECT_EQ(s.get("seq"), 128);
  EXPECT_EQ(s.get("d"), 512);
  EXPECT_EQ(s.get("heads"), 8);
  EXPECT_EQ(s.get("ffn"), 2048);
  EXPECT_EQ(s.get("batch"), 2);

  ModelSpec partial = parse_model_spec("stack:layers=2,heads=8");
  EXPECT_EQ(partial.get("layers"), 2);
  EXPECT_EQ(partial.get("heads"), 8);
  EXPECT_EQ(partial.get("seq"), 128);  // default kept

  ModelSpec m = parse_model_spec("mlp:dims=10-20-5,batch=3");
  EXPECT_EQ(m.list_options.at("dims"), (std::vector<int64_t>{10, 20, 5}));
  EXPECT_EQ(m.get("batch"), 3);
  EXPECT_EQ(m.canonical(), "mlp:dims=10-20-5,batch=3");
}

TEST(ModelSpec, ToleratesWhitespace) {
  ModelSpec s = parse_model_spec("  transformer : seq = 32 , d=64 ");
  EXPECT_EQ(s.text, "transformer : seq = 32 , d=64");
  EXPECT_EQ(s.get("seq"), 32);
  EXPECT_EQ(s.get("d"), 64);
}

TEST(ModelSpec, CanonicalRoundTrips) {
  for (const char* text : {"mlp:batch=4,dims=3-7", "transformer:heads=2,d=32", "stack:layers=3"}) {
    ModelSpec s = parse_model_spec(text);
    ModelSpec again = parse_model_spec(s.canonical());
    EXPECT_EQ(again.options, s.options) << text;
    EXPECT_EQ(again.list_options, s.list_options) << text;
  }
}

TEST(ModelSpec, GetUnknownOptionThrows) {
  ModelSpec s = parse_model_spec("mlp");
  EXPECT_THROW(s.get("seq"), Error);
}

TEST(ModelSpecErrors, EmptySpec) {
  expect_error("  ", {"empty model spec", "mlp, transformer, stack"});
}

TEST(ModelSpecErrors, UnknownKindListsValidOnes) {
  expect_error("resnet", {"unknown model 'resnet'", "mlp, transformer, stack"});
  expect_error("Transformer:seq=8", {"unknown model 'Transformer'", "transformer"});
}

TEST(ModelSpecErrors, UnknownOptionListsValidOnes) {
  expect_error("transformer:seq=8,foo=1", {"transformer:seq=8,foo=1", "unknown option 'foo'",
                                           "model 'transformer'", "seq, d, heads, ffn, batch"});
  expect_error("mlp:seq=4", {"unknown option 'seq'", "model 'mlp'", "dims, batch"});
  expect_error("transformer:layers=2", {"unknown option 'layers'"});  // only stack has layers
  expect_error("stack:depth=2", {"unknown option 'depth'", "layers, seq, d, heads, ffn, batch"});
}

TEST(ModelSpecErrors, NonIntegerValues) {
  expect_error("transformer:seq=abc", {"option 'seq'", "expected an integer", "'abc'"});
  expect_error("transformer:d=12.5", {"option 'd'", "expected an integer", "'12.5'"});
  expect_error("transformer:seq=", {"option 'seq'", "expected an integer"});
  expect_error("transformer:seq=99999999999999999999999", {"option 'seq'", "expected an integer"});
  expect_error("mlp:dims=784-x-10", {"option 'dims'", "'x'"});
  expect_error("mlp:dims=784--10", {"option 'dims'", "784--10"});
}

TEST(ModelSpecErrors, MissingValueAndSyntax) {
  expect_error("transformer:seq", {"option 'seq' has no value", "seq=<integer>"});
  expect_error("transformer:seq=8,,d=8", {"empty option"});
  expect_error("transformer:seq=8,", {"empty option"});
  expect_error("transformer:", {"nothing after ':'", "seq, d, heads, ffn, batch"});
  expect_error("transformer:seq=8,seq=16", {"option 'seq' given twice"});
}

TEST(ModelSpecErrors, ZeroOrNegative) {
  expect_error("transformer:seq=0", {"option 'seq' must be >= 1, got 0"});
  expect_error("transformer:d=-8", {"option 'd' must be >= 1, got -8"});
  expect_error("stack:layers=0", {"option 'layers' must be >= 1, got 0"});
  expect_error("mlp:batch=0", {"option 'batch' must be >= 1, got 0"});
  expect_error("mlp:dims=784-0-10", {"option 'dims' must be >= 1, got 0"});
}

TEST(ModelSpecErrors, MlpNeedsTwoWidths) {
  expect_error("mlp:dims=784", {"option 'dims'", "at least 2"});
}

TEST(ModelSpecErrors, HeadsMustDivideD) {
  expect_error("transformer:d=250,heads=4", {"d=250", "heads=4", "divisible"});
  expect_error("stack:d=10,heads=3", {"d=10", "heads=3", "divisible"});
}

TEST(ModelSpecErrors, AbsurdSizes) {
  expect_error("transformer:d=2000000", {"option 'd'", "2000000", "too large", "1048576"});
  expect_error("mlp:dims=784-2000000", {"option 'dims'", "2000000", "too large"});
  expect_error("stack:layers=100000", {"option 'layers'", "too large"});
  expect_error("stack:layers=1000,d=8,heads=1,ffn=8,seq=1", {"option 'layers'", "1000", "256"});
  // Fine dim by dim, but 3 score matrices of 65536^2 floats each: far over 4 GiB.
  expect_error("transformer:seq=65536",
               {"transformer:seq=65536", "too large", "GiB", "4.00 GiB", "activations"});
  expect_error("mlp:dims=1000000-1000000", {"too large", "weights"});
}

TEST(ModelSpecErrors, JustUnderTheLimitIsAccepted) {
  // 12 layers of a BERT-base sized block: ~1.2 GiB without reuse.
  ModelSpec s = parse_model_spec("stack:layers=12,d=768,heads=12,ffn=3072,seq=128");
  EXPECT_LT(model_footprint(s).total(), kMaxModelBytes);
}

TEST(ModelSpec, NamesAndHelp) {
  EXPECT_EQ(builtin_model_names(), (std::vector<std::string>{"mlp", "transformer", "stack"}));
  const std::string help = builtin_model_help();
  for (const char* part :
       {"mlp", "transformer", "stack", "dims=784-512-512-10", "batch=1", "seq=64", "seq=128",
        "d=256", "heads=4", "ffn=1024", "layers=4", "1048576"})
    EXPECT_NE(help.find(part), std::string::npos) << "help lacks '" << part << "':\n" << help;
}

TEST(ModelSpec, RecognizesSpecsVersusPaths) {
  EXPECT_TRUE(is_builtin_model_spec("mlp"));
  EXPECT_TRUE(is_builtin_model_spec("transformer:seq=8"));
  EXPECT_TRUE(is_builtin_model_spec(" stack:layers=2"));
  EXPECT_FALSE(is_builtin_model_spec("assets/mlp.onnx"));
  EXPECT_FALSE(is_builtin_model_spec("C:/models/x.onnx"));
  EXPECT_FALSE(is_builtin_model_spec(""));
}

TEST(ModelSpec, BuildRevalidatesHandMadeSpecs) {
  ModelSpec s = parse_model_spec("transformer:d=64,heads=4,seq=8,ffn=32");
  s.options["heads"] = 3;
  EXPECT_THROW(build_model(s, 1), Error);
  s.options["heads"] = 4;
  s.options["bogus"] = 1;
  EXPECT_THROW(build_model(s, 1), Error);

  ModelSpec bare;  // no options at all: an Error naming the missing one, never std::out_of_range
  bare.kind = "mlp";
  EXPECT_THROW(model_footprint(bare), Error);
  EXPECT_THROW(build_model(bare, 1), Error);
  EXPECT_THROW(bare.get_list("dims"), Error);
  bare.kind = "alexnet";
  EXPECT_THROW(build_model(bare, 1), Error);
}

TEST(ModelSpec, HandMadeSpecBuildsUnderItsCanonicalName) {
  ModelSpec s = parse_model_spec("mlp:dims=4-2");
  s.text.clear();
  EXPECT_EQ(build_model(s, 0).name, "mlp:dims=4-2,batch=1");
}

}  // namespace
}  // namespace fusebox::models
