// fusebox generate MODEL.onnx: greedy generation with a KV cache over a decoder export whose cache
// is inputs and outputs (app/workbench/generation.h): a prefill over the prompt, then one decode
// step per token; reports time to first token, per-token latency and KV bytes. With --out DIR,
// each step's run is recorded and DIR gets the recording (profile.json) and its Chrome trace
// (trace.json), each step inside a prefill or decode range that `fusebox trace` reads as phases.
#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>

#include "app/cli/commands.h"
#include "app/workbench/exports.h"
#include "app/workbench/generation.h"
#include "core/base/error.h"
#include "core/ir/npy.h"

namespace fusebox::cli {

namespace {

struct GenerateArgs {
  std::unique_ptr<workbench::SettingsFlags> settings;
  std::string prompt_file;
  int64_t prompt_len = 0;
  int tokens = 32;
  std::vector<std::string> kv;
  std::string kv_cache = "auto";
  std::string save_logits;
  std::string out;
  bool json = false;
};

// The prompt: a .npy of token ids (i64, [P] or [1, P]), or P seeded ids in [0, 256).
std::vector<int64_t> prompt_of(const GenerateArgs& a, uint64_t seed) {
  if (!a.prompt_file.empty() && a.prompt_len > 0) throw Error("give --prompt or --prompt-len, not both");
  if (!a.prompt_file.empty()) {
    const ir::Tensor t = ir::read_npy(a.prompt_file);
    const ir::Shape& s = t.shape();
    if (t.dtype() != ir::DType::i64 || !(s.size() == 1 || (s.size() == 2 && s[0] == 1)) || t.numel() < 1)
      throw Error("--prompt " + a.prompt_file + ": expected int64 token ids of shape [P] or [1, P], got " +
                  ir::dtype_name(t.dtype()) + " " + ir::shape_str(s));
    return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel());
  }
  if (a.prompt_len < 1) throw Error("give the prompt: --prompt IDS.npy or --prompt-len P");
  std::mt19937_64 rng(seed);
  std::vector<int64_t> ids(static_cast<size_t>(a.prompt_len));
  for (auto& id : ids) id = static_cast<int64_t>(rng() % 256);
  return ids;
}

nlohmann::json generation_json(const workbench::Generation& g) {
  nlohmann::json j;
  j["model"] = g.model;
  nlohmann::json pairs = nlohmann::json::array();
  for (size_t i = 0; i < g.mapping.pairs.size(); ++i)
    pairs.push_back({{"past", g.mapping.pairs[i].first},
                     {"present", g.mapping.pairs[i].second},
                     {"axis", g.mapping.axis[i]}});
  j["kv"] = {{"mapping", g.mapping.how}, {"pairs", pairs}, {"ids", g.mapping.ids}, {"logits", g.mapping.logits},
             {"cache", g.kv_cache}, {"static", g.mapping.static_cache}, {"cache_length", g.cache_length},
             {"in_place", g.in_place}};
  j["prompt"] = g.prompt;
  j["tokens"] = g.tokens;
  j["vocab"] = g.vocab;
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& s : g.steps)
    steps.push_back({{"phase", s.phase},
                     {"past", s.past},
                     {"seq", s.seq},
                     {"setup_ms", s.setup_ms},
                     {"run_ms", s.run_ms},
                     {"token", s.token},
                     {"kv_bytes", s.kv_bytes},
                     {"kv_held_bytes", s.kv_held_bytes},
                     {"kv_copied_bytes", s.kv_copied_bytes},
                     {"new_plan", s.new_plan}});
  j["steps"] = steps;
  j["ttft_ms"] = g.ttft_ms;
  j["decode_ms"] = {{"median", g.decode_median_ms}, {"p10", g.decode_p10_ms}, {"p90", g.decode_p90_ms}};
  j["tokens_per_s"] = g.tokens_per_s;
  j["setup_median_ms"] = g.setup_median_ms;
  return j;
}

void run(const GenerateArgs& a) {
  workbench::GenerateOptions o;
  o.settings = a.settings->resolve();
  o.prompt = prompt_of(a, o.settings.seed);
  o.tokens = a.tokens;
  o.kv_cache = a.kv_cache;
  for (const std::string& pair : a.kv) {
    const size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == pair.size())
      throw Error("--kv: expected PAST=PRESENT, got \"" + pair + "\"");
    o.kv.emplace_back(pair.substr(0, eq), pair.substr(eq + 1));
  }
  if (!a.save_logits.empty() && !a.save_logits.ends_with(".npy"))
    throw Error("--save-logits: expected a .npy file name, got \"" + a.save_logits + "\"");
  if (!a.out.empty())
    check_output_dir(a.out, "--out", workbench::is_profile_file);  // before the run
  o.record = !a.out.empty();
  const workbench::Generation g = workbench::generate(o);
  if (!a.out.empty())
    write_output_dir(a.out, "--out", workbench::is_profile_file, [&](const std::string& tmp) {
      g.recording->save(tmp + "/profile.json");
      profiler::write_chrome_trace(*g.recording, tmp + "/trace.json");
    });
  if (!a.save_logits.empty()) {
    ir::Tensor t(ir::DType::f32, {static_cast<int64_t>(g.steps.size()), g.vocab});
    std::copy(g.logits.begin(), g.logits.end(), t.data<float>());
    ir::write_npy(a.save_logits, t);
  }
  if (a.json)
    std::cout << generation_json(g).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  else
    std::cout << g.text();
  if (!a.out.empty() && !a.json)
    std::cout << "wrote " << a.out << "/profile.json (the recording) and " << a.out
              << "/trace.json (Chrome trace: fusebox trace, fusebox-ui open=, ui.perfetto.dev), "
                 "each step's "
                 "run inside its prefill or decode range; the run times above include the "
                 "recorder's hooks\n";
}

void generate_options(CLI::App& cmd, GenerateArgs& a) {
  // The dims and inputs are each step's (bound from the tensors it feeds); the run count is the
  // token count.
  a.settings = std::make_unique<workbench::SettingsFlags>(
      &cmd, std::set<std::string>{"dims", "inputs", "warmup", "iters", "profile_runs", "capture"});
  cmd.add_option("--prompt", a.prompt_file, "the prompt's token ids: an int64 .npy of shape [P] or [1, P]");
  cmd.add_option("--prompt-len", a.prompt_len, "a prompt of P seeded token ids in [0, 256) instead");
  cmd.add_option("--tokens", a.tokens, "tokens to generate")->capture_default_str();
  cmd.add_option("--kv", a.kv, "a cache pair PAST=PRESENT (repeatable): the input fed from the output");
  cmd.add_option("--kv-cache", a.kv_cache,
                 "grow | preallocate | auto: the cache allocated at each step's length and copied in and out "
                 "(grow), or once at its final length and written in place in the decode plan's arena "
                 "(preallocate: static-cache exports, with a cache_position input); auto: preallocate where "
                 "the export allows")
      ->capture_default_str();
  cmd.add_option("--save-logits", a.save_logits, "write each step's last-position logits, [steps, vocab], as .npy");
  cmd.add_option(
      "--out", a.out,
      "record each step's run: DIR gets profile.json and trace.json, the steps as prefill and "
      "decode ranges");
  cmd.add_flag("--json", a.json, "print the generation as one JSON object (generated ids under tokens)");
}

}  // namespace

Command generate_command() {
  return make_command<GenerateArgs>(
      "generate",
      "Generate tokens greedily with a KV cache from a decoder exported to ONNX with its cache as\n"
      "inputs and outputs: a prefill over the prompt, then one decode step per token.\n"
      "Example: fusebox generate gpt.onnx --prompt-len 16 --tokens 32 --threads 2",
      generate_options, run);
}

}  // namespace fusebox::cli
