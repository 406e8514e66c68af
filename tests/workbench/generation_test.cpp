// Generation with a KV cache (app/workbench/generation.h) against PyTorch's greedy loop over the
// same module: assets/models/gpt_small_opset17.onnx with the tokens and per-step logits PyTorch
// made for its prompt (export_models.py's export_gpt_small), and the same weights with a stacked
// cache (gpt_small_stacked_opset17.onnx). The same check at GPT-2's vocabulary
// is tests/onnx/generate_test.py (CTest generate_gpt, where python3-torch is installed).
#include "app/workbench/generation.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/ir/npy.h"
#include "profiler/exporters.h"
#include "profiler/phases.h"
#include "profiler/trace_import.h"
#include "tests/support/onnx_values.h"
#include "tests/support/temp_dir.h"

namespace fusebox::workbench {
namespace {

const std::string kDir = std::string(FUSEBOX_SOURCE_DIR) + "/assets/models/";

std::vector<int64_t> ids_of(const std::string& file) {
  const ir::Tensor t = ir::read_npy(kDir + file);
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel());
}

GenerateOptions small(int threads) {
  GenerateOptions o;
  o.settings.model = kDir + "gpt_small_opset17.onnx";
  o.settings.threads = threads;
  o.prompt = ids_of("gpt_small.prompt.npy");
  o.tokens = 16;
  return o;
}

TEST(Generation, MatchesPyTorchsGreedyLoopTokenForTokenAndStepForStep) {
  const std::vector<int64_t> want = ids_of("gpt_small.tokens.npy");
  const ir::Tensor want_logits = ir::read_npy(kDir + "gpt_small.logits.npy");
  for (int threads : {1, 2}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    std::vector<std::string> seen;
    const Generation g = generate(small(threads), [&](const GenerationStep& s) { seen.push_back(s.phase); });
    EXPECT_EQ(g.tokens, want);
    EXPECT_EQ(g.mapping.how, "Hugging Face / Optimum names (past_key_values.* -> present.*)");
    ASSERT_EQ(g.mapping.pairs.size(), 4u);
    EXPECT_EQ(g.mapping.pairs[3], std::make_pair(std::string("past_key_values.1.value"), std::string("present.1.value")));
    EXPECT_EQ(g.mapping.axis, std::vector<int>(4, 2));
    ASSERT_EQ(g.vocab, 512);
    ASSERT_EQ(g.logits.size(), static_cast<size_t>(want_logits.numel()));
    double worst = 0;
    for (size_t i = 0; i < g.logits.size(); ++i)
      worst = std::max(worst, static_cast<double>(std::fabs(g.logits[i] - want_logits.data<float>()[i])));
    EXPECT_LE(worst, 1e-4);
    // One prefill over the 6 prompt tokens, then one decode step per token from cache length 6.
    ASSERT_EQ(g.steps.size(), 16u);
    std::vector<std::string> phases(16, "decode");
    phases[0] = "prefill";
    EXPECT_EQ(seen, phases);  // the callback saw each step as it ended
    EXPECT_EQ(g.steps[0].phase, "prefill");
    EXPECT_EQ(g.steps[0].seq, 6);
    for (size_t i = 1; i < g.steps.size(); ++i) {
      EXPECT_EQ(g.steps[i].phase, "decode");
      EXPECT_EQ(g.steps[i].past, static_cast<int64_t>(5 + i));
      EXPECT_EQ(g.steps[i].seq, 1);
      // 2 layers x (key, value) x 2 heads x 16 floats a position.
      EXPECT_EQ(g.steps[i].kv_bytes, (g.steps[i].past + 1) * 2 * 2 * 2 * 16 * 4);
    }
    EXPECT_GT(g.tokens_per_s, 0);
    EXPECT_LE(g.decode_p10_ms, g.decode_median_ms);
    EXPECT_LE(g.decode_median_ms, g.decode_p90_ms);
  }
}

// The same weights with the cache as one tensor [2 * layers, batch, heads, past, head_dim]: found
// by its names, its cache length on axis 3, and the same tokens.
TEST(Generation, AStackedCacheTensorIsFoundAndGivesTheSameTokens) {
  GenerateOptions o = small(1);
  o.settings.model = kDir + "gpt_small_stacked_opset17.onnx";
  const Generation g = generate(o);
  EXPECT_EQ(g.mapping.how, "one stacked cache tensor ('past' -> 'present')");
  EXPECT_EQ(g.mapping.axis, std::vector<int>{3});
  EXPECT_EQ(g.tokens, ids_of("gpt_small.tokens.npy"));
  EXPECT_EQ(g.steps.back().kv_bytes, (g.steps.back().past + 1) * 2 * 2 * 2 * 16 * 4);
}

// The same weights with Hugging Face's static cache (gpt_small_static_opset17.onnx: a
// cache_position input, each step's keys and values scattered into a cache of the caller's
// length). Preallocated, the cache is allocated once at 6 + 16 - 1 = 21 positions, one plan
// serves every decode step, and the planner writes present over past, so after the first decode
// step (which takes the prefill's cache into the decode plan) no step copies it. Grown, every step
// is a new plan and copies it. Both give PyTorch's tokens and logits.
TEST(Generation, AStaticCacheIsPreallocatedOnceAndWrittenInPlaceWithTheSameTokens) {
  const ir::Tensor want_logits = ir::read_npy(kDir + "gpt_small.logits.npy");
  const int64_t per_position = 2 * 2 * 2 * 16 * 4;  // layers x (key, value) x heads x head_dim x 4 bytes
  for (const char* how : {"auto", "preallocate", "grow"}) {
    for (int threads : {1, 2}) {
      SCOPED_TRACE(std::string(how) + " threads " + std::to_string(threads));
      GenerateOptions o = small(threads);
      o.settings.model = kDir + "gpt_small_static_opset17.onnx";
      o.kv_cache = how;
      const Generation g = generate(o);
      EXPECT_TRUE(g.mapping.static_cache);
      EXPECT_EQ(g.mapping.cache_position, "cache_position");
      EXPECT_EQ(g.tokens, ids_of("gpt_small.tokens.npy"));
      double worst = 0;
      for (size_t i = 0; i < g.logits.size(); ++i)
        worst = std::max(worst, static_cast<double>(std::fabs(g.logits[i] - want_logits.data<float>()[i])));
      EXPECT_LE(worst, 1e-4);
      ASSERT_EQ(g.steps.size(), 16u);
      const bool prealloc = std::string(how) != "grow";
      EXPECT_EQ(g.kv_cache, prealloc ? "preallocate" : "grow");
      EXPECT_EQ(g.in_place, prealloc);
      EXPECT_EQ(g.cache_length, prealloc ? 21 : 0);
      for (size_t i = 0; i < g.steps.size(); ++i) {
        const GenerationStep& st = g.steps[i];
        const int64_t written = st.past + st.seq;
        EXPECT_EQ(st.kv_bytes, written * per_position) << i;
        EXPECT_EQ(st.kv_held_bytes, (prealloc ? 21 : written) * per_position) << i;
        EXPECT_EQ(st.new_plan, !prealloc || i < 2) << i;
        EXPECT_EQ(st.setup_ms > 0, st.new_plan) << i;
        int64_t copied;
        if (prealloc)  // the prefill copies the zeros in and its cache out; the first decode step copies it in
          copied = i == 0 ? 2 * 21 * per_position : i == 1 ? 21 * per_position : 0;
        else  // the host grows the past by a copy, then copies it in and the present out
          copied = (st.past + 2 * written) * per_position;
        EXPECT_EQ(st.kv_copied_bytes, copied) << i;
      }
    }
  }
  GenerateOptions growing = small(1);
  growing.kv_cache = "preallocate";
  try {
    generate(growing);
    ADD_FAILURE() << "a growing export was preallocated";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--kv-cache preallocate: " + kDir + "gpt_small_opset17.onnx returns a "
                                         "longer cache each step"),
              std::string::npos)
        << e.what();
  }
  growing.kv_cache = "stretch";
  EXPECT_THROW(generate(growing), Error);
}

// A recorded generation is one trace: each step's run inside a range named for its phase and
// tokens, its ops inside the run, and profiler/phases.h splits it back into a prefill of the
// prompt's tokens and a decode step a token, the ops of each step its work. The same after a
// round trip through the Chrome trace `fusebox generate --out` writes.
TEST(Generation, ARecordedGenerationIsOneTraceThatSplitsIntoPrefillAndDecode) {
  GenerateOptions o = small(2);
  o.tokens = 5;
  o.record = true;
  const Generation g = generate(o);
  const std::vector<int64_t> want = ids_of("gpt_small.tokens.npy");
  EXPECT_EQ(g.tokens, std::vector<int64_t>(want.begin(), want.begin() + 5));
  ASSERT_TRUE(g.recording.has_value());
  const profiler::Recording& r = *g.recording;
  EXPECT_EQ(profiler::check_recording(r), "");
  EXPECT_EQ(r.run_count(), 5);
  std::vector<std::string> ranges;
  int64_t ops = 0, setups = 0, op_ns[2] = {0, 0};  // prefill, decode
  int64_t kv_ops[2] = {0, 0}, kv_ns[2] = {0, 0};     // the ops making the presents (Concat here)
  std::string phase;
  int32_t step_first = -1,
          previous_last = -1;  // each step's ops name its own nodes, after the last step's
  for (const profiler::Span& s : r.spans) {
    if (s.kind == profiler::SpanKind::Stage) {  // each step's setup, before its range
      EXPECT_EQ(s.name.str(), kSetupStage);
      EXPECT_EQ(s.depth, 0);
      ++setups;
    }
    if (s.kind == profiler::SpanKind::Range) {
      EXPECT_EQ(setups, static_cast<int64_t>(ranges.size()) + 1);
      ranges.push_back(phase = s.name.str());
      EXPECT_EQ(s.depth, 0);
      step_first = -1;
    }
    if (s.kind != profiler::SpanKind::Op) continue;
    ++ops;
    EXPECT_EQ(s.depth, 2);  // range > run > op
    ASSERT_LT(static_cast<size_t>(s.node), r.nodes.size());
    if (step_first < 0) {
      EXPECT_GT(s.node, previous_last) << r.nodes[static_cast<size_t>(s.node)].name;
      step_first = s.node;
    }
    EXPECT_GE(s.node, step_first);
    previous_last = std::max(previous_last, s.node);
    op_ns[phase.starts_with("decode")] += s.end_ns - s.start_ns;
    const profiler::NodeInfo& node = r.nodes[static_cast<size_t>(s.node)];
    const bool makes_present = std::any_of(node.outputs.begin(), node.outputs.end(),
                                           [](const std::string& t) { return t.starts_with("present."); });
    EXPECT_EQ(node.kv_cache_write, makes_present) << node.name;
    if (makes_present) {
      EXPECT_EQ(node.op, "Concat") << node.name;
      kv_ops[phase.starts_with("decode")] += 1;
      kv_ns[phase.starts_with("decode")] += s.end_ns - s.start_ns;
    }
  }
  EXPECT_EQ(kv_ops[0], 4) << "k and v of 2 layers, once in the prefill";
  EXPECT_EQ(kv_ops[1], 4 * 4) << "and once each decode step";
  EXPECT_EQ(ranges, (std::vector<std::string>{"prefill toks=6", "decode toks=1", "decode toks=1",
                                              "decode toks=1", "decode toks=1"}));
  EXPECT_GT(ops, 5 * 10);
  // The last decode step's nodes carry its own shapes: the cache grew to 6 + 3 positions before it.
  bool saw_cache = false;
  for (size_t n = r.nodes.size() - r.node_count; n < r.nodes.size(); ++n)
    for (size_t i = 0; i < r.nodes[n].inputs.size(); ++i)
      if (r.nodes[n].inputs[i] == "past_key_values.0.key") {
        EXPECT_EQ(r.nodes[n].input_shapes[i], (std::vector<int64_t>{1, 2, 9, 16}));
        saw_cache = true;
      }
  EXPECT_TRUE(saw_cache);

  const std::string file =
      ::testing::TempDir() + "generation_trace_" + std::to_string(getpid()) + ".json";
  profiler::write_chrome_trace(r, file);
  const profiler::Recording back = profiler::import_trace(file);
  std::filesystem::remove(file);
  for (const profiler::Recording* rec : {&r, &back}) {
    // Every span from the origin exports count from on: the first setup too, and it reads back.
    int64_t stages = 0;
    for (const profiler::Span& s : rec->spans) {
      EXPECT_GE(s.start_ns, rec->origin_ns) << s.name.str();
      stages += s.kind == profiler::SpanKind::Stage && s.name.str() == kSetupStage;
    }
    EXPECT_EQ(stages, 5);
    const profiler::Phases p = profiler::analyze_phases(*rec);
    EXPECT_EQ(p.rule, "ranges named prefill*/decode*");
    EXPECT_EQ(p.work, "cpu");
    ASSERT_EQ(p.phases.size(), 2u);
    EXPECT_EQ(p.phases[0].name, "prefill");
    EXPECT_EQ(p.phases[0].steps, 1);
    EXPECT_EQ(p.phases[0].tokens, 6);
    EXPECT_EQ(p.phases[1].name, "decode");
    EXPECT_EQ(p.phases[1].steps, 4);
    EXPECT_EQ(p.phases[1].tokens, 4);
    EXPECT_EQ(p.phases[0].kernel_count + p.phases[1].kernel_count, ops);
    // The ops' time, to the microsecond the Chrome trace keeps of each.
    EXPECT_NEAR(static_cast<double>(p.phases[0].kernel_ns), static_cast<double>(op_ns[0]),
                1e3 * ops);
    EXPECT_NEAR(static_cast<double>(p.phases[1].kernel_ns), static_cast<double>(op_ns[1]),
                1e3 * ops);
    EXPECT_GT(p.phases[1].tokens_per_s, 0);
    // The KV-cache writes: the ops that make the presents, told apart on the CPU too.
    EXPECT_TRUE(p.kv_writes_told);
    for (int i : {0, 1}) {
      EXPECT_EQ(p.phases[static_cast<size_t>(i)].kv_write_count, kv_ops[i]);
      EXPECT_NEAR(static_cast<double>(p.phases[static_cast<size_t>(i)].kv_write_ns), static_cast<double>(kv_ns[i]),
                  1e3 * static_cast<double>(kv_ops[i]));
    }
    EXPECT_NE(profiler::phases_text(p).find("KV writes"), std::string::npos);
    ASSERT_FALSE(p.phases[1].kernels.empty());
    EXPECT_EQ(p.phases[1].kernels[0].count, 4);  // one node, once a decode step
    // The KV cache's track: nothing at the prefill's start, then each step's present from its
    // end, growing by a position's bytes a decode step; beside the arena's live bytes.
    std::vector<double> kv;
    int32_t arena = 0;
    for (const profiler::CounterSample& c : rec->counters) {
      const std::string& name = rec->counter_tracks[static_cast<size_t>(c.track)].name;
      if (name == kKvCacheCounter) kv.push_back(c.value);
      arena += name == profiler::kArenaCounter;
    }
    std::vector<double> want_kv = {0};
    for (const GenerationStep& step : g.steps)
      want_kv.push_back(static_cast<double>(step.kv_bytes));
    EXPECT_EQ(kv, want_kv);
    EXPECT_EQ(want_kv[2] - want_kv[1], 2 * 2 * 2 * 16 * 4.0)
        << "k and v, 2 layers, 2 heads of 16 floats";
    EXPECT_GT(arena, ops);
  }
}

TEST(Generation, CachePairsGivenByHandMustNameTheModelsInputsAndOutputs) {
  const std::string model = kDir + "gpt_small_opset17.onnx";
  const KvMapping k = find_kv_mapping(model, {{"past_key_values.0.key", "present.0.key"},
                                              {"past_key_values.0.value", "present.0.value"},
                                              {"past_key_values.1.key", "present.1.key"},
                                              {"past_key_values.1.value", "present.1.value"}});
  EXPECT_EQ(k.how, "given by --kv");
  EXPECT_EQ(k.ids, "input_ids");
  EXPECT_EQ(k.logits, "logits");
  try {
    find_kv_mapping(model, {{"past_key_values.0.key", "present.9.key"}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has no output 'present.9.key'"), std::string::npos) << e.what();
  }
  // Half the cache given by hand leaves the other half unfed: an input generate cannot fill.
  try {
    find_kv_mapping(model, {{"past_key_values.0.key", "present.0.key"}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not know what to feed inputs 'past_key_values.0.value'"),
              std::string::npos)
        << e.what();
  }
}

// A toy decoder with one input besides its cache, as Silero VAD has `sr` and Optimum's merged
// decoders `use_cache_branch`: logits = W[ids] * scale, present = past ++ each position's mean of
// W[id], with W[i][j] = (i + 2j) mod 5 (each row a permutation of 0..4, so no ties). A positive
// and a negative scale make different greedy tokens, so a constant that did not reach the graph
// shows.
float scaled_lm_weight(int64_t i, int64_t j) {
  return static_cast<float>((i + 2 * j) % 5);
}

std::string write_scaled_lm() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("scaled_lm");
  auto value = fusebox::test::onnx_tensor_value;
  value(g->add_input(), "input_ids", onnx::TensorProto::INT64, {"batch", "seq"});
  value(g->add_input(), "past", onnx::TensorProto::FLOAT, {"batch", "past_len", "1"});
  value(g->add_input(), "scale", onnx::TensorProto::FLOAT, {"1"});
  value(g->add_output(), "logits", onnx::TensorProto::FLOAT, {"batch", "seq", "5"});
  value(g->add_output(), "present", onnx::TensorProto::FLOAT, {"batch", "total", "1"});
  auto* w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(5);
  w->add_dims(5);
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 5; ++j) w->add_float_data(scaled_lm_weight(i, j));
  auto node = [&](const std::string& op, const std::vector<std::string>& in,
                  const std::string& out) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(out);
    for (const std::string& i : in) n->add_input(i);
    n->add_output(out);
    return n;
  };
  auto int_attr = [](onnx::NodeProto* n, const std::string& name, int64_t v, bool list) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(list ? onnx::AttributeProto::INTS : onnx::AttributeProto::INT);
    if (list)
      a->add_ints(v);
    else
      a->set_i(v);
  };
  node("Gather", {"W", "input_ids"}, "emb");
  node("Mul", {"emb", "scale"}, "logits");
  auto* mean = node("ReduceMean", {"emb"}, "mean");
  int_attr(mean, "axes", 2, true);
  int_attr(mean, "keepdims", 1, false);
  int_attr(node("Concat", {"past", "mean"}, "present"), "axis", 1, false);
  const std::string path = fusebox::test::process_temp_dir() + "/scaled_lm.onnx";
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
  return path;
}

// The greedy tokens of the toy decoder, from its definition: argmax_j W[last][j] * scale.
std::vector<int64_t> scaled_lm_tokens(int64_t last, int n, double scale) {
  std::vector<int64_t> out;
  for (int t = 0; t < n; ++t) {
    int64_t best = 0;
    for (int64_t j = 1; j < 5; ++j)
      if (scaled_lm_weight(last, j) * scale > scaled_lm_weight(last, best) * scale) best = j;
    out.push_back(last = best);
  }
  return out;
}

std::string generate_error(const GenerateOptions& o) {
  try {
    generate(o);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// An input generate does not feed is refused, pointing at consts; given as a constant, it is
// folded into every step's graph, and the tokens are the ones its value makes.
TEST(Generation, AConstantFixesAnInputGenerateDoesNotFeed) {
  GenerateOptions o;
  o.settings.model = write_scaled_lm();
  o.settings.threads = 1;
  o.prompt = {1, 3};
  o.tokens = 5;
  const std::string refused = generate_error(o);
  EXPECT_NE(refused.find("does not know what to feed input 'scale'"), std::string::npos) << refused;
  EXPECT_NE(refused.find("--const NAME=VALUE"), std::string::npos) << refused;

  const std::vector<int64_t> up = scaled_lm_tokens(3, 5, 1.0), down = scaled_lm_tokens(3, 5, -1.0);
  ASSERT_NE(up, down);  // the check below tells the two values apart
  for (const auto& [value, want] : {std::pair{"1", up}, std::pair{"-1", down}}) {
    SCOPED_TRACE(std::string("scale ") + value);
    o.settings.consts = {{"scale", value}};
    const Generation g = generate(o);
    EXPECT_EQ(g.tokens, want);
    EXPECT_EQ(g.mapping.how, "one stacked cache tensor ('past' -> 'present')");
    ASSERT_EQ(g.steps.size(), 5u);
    // The prompt's 2 tokens, then the 3 tokens fed back before the last step; its present is
    // [1, 6, 1] f32.
    EXPECT_EQ(g.steps.back().past, 5);
    EXPECT_EQ(g.steps.back().kv_bytes, 6 * 4);
  }
}

// A constant for an input generate feeds every step, or for no input, is refused by name.
TEST(Generation, AConstantForAnInputGenerateFeedsOrForNoInputIsRefused) {
  GenerateOptions o;
  o.settings.model = write_scaled_lm();
  o.prompt = {1};
  o.tokens = 2;
  o.settings.consts = {{"scale", "1"}, {"input_ids", "0"}};
  std::string e = generate_error(o);
  EXPECT_NE(e.find("consts.input_ids: generate feeds input 'input_ids' itself at every step (the "
                   "token ids)"),
            std::string::npos)
      << e;
  o.settings.consts = {{"scale", "1"}, {"past", "0"}};
  e = generate_error(o);
  EXPECT_NE(e.find("consts.past: generate feeds input 'past' itself at every step (a cache input)"),
            std::string::npos)
      << e;
  o.settings.consts = {{"scale", "1"}, {"nope", "0"}};
  e = generate_error(o);
  EXPECT_NE(e.find("consts.nope: "), std::string::npos) << e;
  EXPECT_NE(e.find("has no input 'nope'"), std::string::npos) << e;
}

}  // namespace
}  // namespace fusebox::workbench
