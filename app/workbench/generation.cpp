#include "app/workbench/generation.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "app/workbench/backends.h"
#include "app/workbench/model_source.h"
#include "core/base/error.h"
#include "core/base/strings.h"
#include "core/exec/executor.h"
#include "core/exec/session.h"
#include "core/ir/op_schema.h"
#include "core/models/onnx_import.h"
#include "profiler/recorder.h"
#include "profiler/stats.h"

namespace fusebox::workbench {

namespace {

double elapsed_ms(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

const models::OnnxValueInfo* find_value(const std::vector<models::OnnxValueInfo>& values, const std::string& name) {
  for (const auto& v : values)
    if (v.name == name) return &v;
  return nullptr;
}

std::string dims_text(const std::vector<std::string>& dims) { return "[" + join(dims, ", ") + "]"; }

// Optimum's names first, then past* -> present* with the same rest.
std::vector<std::pair<std::string, std::string>> pairs_by_name(const models::OnnxInspection& m, std::string* how) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& in : m.inputs)
    if (in.name.starts_with("past_key_values")) {
      const std::string present = "present" + in.name.substr(std::string("past_key_values").size());
      if (!find_value(m.outputs, present))
        throw Error(m.path + ": input '" + in.name + "' has no output '" + present +
                    "' to feed it from; give the pairs with --kv PAST=PRESENT");
      pairs.emplace_back(in.name, present);
    }
  if (!pairs.empty()) {
    *how = "Hugging Face / Optimum names (past_key_values.* -> present.*)";
    return pairs;
  }
  for (const auto& in : m.inputs)
    if (in.name.starts_with("past")) {
      const std::string present = "present" + in.name.substr(4);
      if (find_value(m.outputs, present)) pairs.emplace_back(in.name, present);
    }
  if (pairs.size() == 1)
    *how = "one stacked cache tensor ('" + pairs[0].first + "' -> '" + pairs[0].second + "')";
  else if (!pairs.empty())
    *how = "past* -> present* names";
  return pairs;
}

void require_onnx(const std::string& model) {
  if (!is_model_file(model))
    throw Error("generate needs a decoder exported to ONNX (MODEL.onnx) with its KV cache as inputs and outputs; '" +
                model + "' is a builtin model");
}

KvMapping kv_mapping_of(const models::OnnxInspection& m, const std::vector<std::pair<std::string, std::string>>& given,
                        const std::set<std::string>& consts) {
  const std::string& model = m.path;
  KvMapping k;
  if (!given.empty()) {
    k.how = "given by --kv";
    for (const auto& [past, present] : given) {
      if (!find_value(m.inputs, past))
        throw Error("--kv " + past + "=" + present + ": " + model + " has no input '" + past + "'");
      if (!find_value(m.outputs, present))
        throw Error("--kv " + past + "=" + present + ": " + model + " has no output '" + present + "'");
      k.pairs.emplace_back(past, present);
    }
  } else {
    k.pairs = pairs_by_name(m, &k.how);
  }
  if (k.pairs.empty())
    throw Error(model + ": found no KV cache (no input named past_key_values.* or past* with a present* output "
                "of the same rest); give the pairs with --kv PAST=PRESENT");

  // The other inputs: the token ids, and optionally the mask and the positions; what `consts`
  // fixes (a flag such as Silero's `sr` or a merged decoder's branch switch) is the graph's.
  std::set<std::string> pasts;
  for (const auto& p : k.pairs) pasts.insert(p.first);
  for (const std::string& c : consts)  // a name the model lacks is refused with the value's checks
    if (find_value(m.inputs, c) &&
        (pasts.count(c) || c == "input_ids" || c == "attention_mask" || c == "position_ids" ||
         c == "cache_position"))
      throw Error("consts." + c + ": generate feeds input '" + c + "' itself at every step (" +
                  (pasts.count(c) ? "a cache input" : c == "input_ids" ? "the token ids" : "it changes with every step") +
                  "); a constant is for the model's other inputs");
  std::vector<std::string> others;
  for (const auto& in : m.inputs) {
    if (pasts.count(in.name) || consts.count(in.name)) continue;
    if (in.name == "attention_mask") k.attention_mask = in.name;
    else if (in.name == "position_ids") k.position_ids = in.name;
    else if (in.name == "cache_position") k.cache_position = in.name;
    else others.push_back(in.name);
  }
  const auto ids_it = std::find(others.begin(), others.end(), "input_ids");
  if (ids_it != others.end()) others.erase(ids_it), k.ids = "input_ids";
  else if (others.size() == 1 && find_value(m.inputs, others[0])->type == "INT64") k.ids = others[0], others.clear();
  if (k.ids.empty())
    throw Error(model + ": found no token input (an INT64 input named input_ids, or the one input besides the cache)");
  if (!others.empty())
    throw Error(model + ": generate does not know what to feed input" + (others.size() > 1 ? "s '" : " '") +
                join(others, "', '") + "' (it feeds input_ids, the cache, attention_mask, position_ids and cache_position; " +
                "fix the others with consts, --const NAME=VALUE)");
  const models::OnnxValueInfo& ids = *find_value(m.inputs, k.ids);
  if (ids.type != "INT64" || ids.dims.size() != 2)
    throw Error(model + ": token input '" + k.ids + "' is " + ids.type + " " + dims_text(ids.dims) +
                "; generate feeds INT64 [batch, seq]");

  // Each past's cache-length axis: its one named or unknown dim that is not the batch (ids' dim 0).
  for (const auto& [past, present] : k.pairs) {
    const models::OnnxValueInfo& p = *find_value(m.inputs, past);
    if (p.type != "FLOAT")
      throw Error(model + ": cache input '" + past + "' is " + p.type + "; generate feeds FLOAT caches");
    std::vector<int> axes;
    for (size_t a = 0; a < p.dims.size(); ++a)
      if (!fixed_dim(p.dims[a]) && !(p.dims[a] == ids.dims[0] && p.dims[a] != "?"))
        axes.push_back(static_cast<int>(a));
    if (axes.size() != 1)
      throw Error(model + ": cannot tell which axis of cache input '" + past + "' " + dims_text(p.dims) +
                  " is the cache length: it must be the one dynamic dim other than the batch ('" + ids.dims[0] + "')");
    k.axis.push_back(axes[0]);
  }
  k.static_cache = !k.cache_position.empty();
  for (size_t i = 0; i < k.pairs.size(); ++i) {
    const auto& past = find_value(m.inputs, k.pairs[i].first)->dims;
    const auto& present = find_value(m.outputs, k.pairs[i].second)->dims;
    const auto a = static_cast<size_t>(k.axis[i]);
    if (present.size() != past.size() || present[a] != past[a] || past[a] == "?") k.static_cache = false;
  }
  const models::OnnxValueInfo* logits = find_value(m.outputs, "logits");
  if (!logits)
    for (const auto& out : m.outputs)
      if (std::none_of(k.pairs.begin(), k.pairs.end(), [&](const auto& p) { return p.second == out.name; })) {
        logits = &out;
        break;
      }
  if (!logits) throw Error(model + ": found no logits output (named logits, or one besides the presents)");
  k.logits = logits->name;
  return k;
}

}  // namespace

KvMapping find_kv_mapping(const std::string& model, const std::vector<std::pair<std::string, std::string>>& given,
                          const std::set<std::string>& consts) {
  require_onnx(model);
  return kv_mapping_of(models::inspect_onnx_file(model), given, consts);
}

namespace {

// The dims a step's shapes bind: every dynamic dim of the file, by its name in the dims setting.
std::map<std::string, int64_t> step_dims(const std::string& model, const std::vector<OnnxDim>& file_dims,
                                         const std::map<std::string, ir::Shape>& shapes) {
  std::map<std::string, int64_t> dims;
  for (const OnnxDim& d : file_dims) {
    if (!d.dynamic) continue;
    const ir::Shape& s = shapes.at(d.input);
    if (d.index >= s.size()) throw Error(model + ": input '" + d.input + "' has more dims than generate feeds it");
    const auto [it, fresh] = dims.emplace(d.name, s[d.index]);
    if (!fresh && it->second != s[d.index])
      throw Error(model + ": dim '" + d.name + "' would be " + std::to_string(it->second) + " and " +
                  std::to_string(s[d.index]) + " in one step (input '" + d.input + "'); the inputs do not fit " +
                  "generate's reading of them (--kv sets the cache pairs by hand)");
  }
  return dims;
}

exec::SessionOptions session_options(const Settings& s) {
  exec::SessionOptions o;
  o.backend = s.backend;
  o.executor = s.executor;
  o.threads = s.threads;
  o.isa = s.isa;
  o.precision = s.precision;
  o.gemm = s.gemm;
  const std::vector<std::string> on = s.passes_on();
  o.passes = on.empty() ? "none" : join(on, ",");
  o.disabled_patterns = s.patterns_off;
  o.planner = s.planner;
  return o;
}

}  // namespace

namespace {

// How the cache is held: the option resolved against the export (the header).
std::string kv_strategy(const std::string& asked, const KvMapping& k, const std::string& model) {
  if (asked != "auto" && asked != "grow" && asked != "preallocate")
    throw Error("--kv-cache: expected grow, preallocate or auto, got \"" + asked + "\"");
  if (asked == "auto") return k.static_cache ? "preallocate" : "grow";
  if (asked == "preallocate" && !k.static_cache)
    throw Error("--kv-cache preallocate: " + model + " returns a longer cache each step (present '" +
                k.pairs[0].second + "' is past + seq long" +
                (k.cache_position.empty() ? ", and it has no cache_position input" : "") +
                "), so its cache cannot be allocated once; a static-cache export (a cache_position input, "
                "present of past's shape) can");
  return asked;
}

// A plan made for one step's shapes, kept for the steps with the same shapes.
struct PlannedStep {
  std::string key;  // the shapes it was made for
  std::unique_ptr<exec::Session> session;
  std::vector<ir::Tensor> outputs;  // allocated once, outside the runs
  bool in_place = false;            // every present is written over its past in the arena
};

std::string shapes_key(const std::map<std::string, ir::Shape>& shapes) {
  std::string key;
  for (const auto& [name, shape] : shapes) key += name + ir::shape_str(shape) + ";";
  return key;
}

// Why the cache cannot stay in the plan's arena between runs, or "" when it can: the plan writes
// each present over its past (core/planner/lifetimes.h: the scatter in place).
std::string cache_not_in_place(const exec::Session& s, const KvMapping& k) {
  if (!exec::keeps_to_plan(s.options().executor))
    return "the " + s.options().executor + " executor allocates per op and keeps nothing between runs";
  const auto& loc = s.plan().locations;
  for (const auto& [past, present] : k.pairs) {
    const auto p = loc.find(past), q = loc.find(present);
    if (p == loc.end() || q == loc.end() || p->second.root != q->second.root)
      return "the plan could not write '" + present + "' over '" + past + "' (the graph reads the past after " +
             "writing it)";
  }
  return "";
}

// Marks the nodes of a step's recording that write a present (NodeInfo::kv_cache_write): its
// producer, or where that is a view (a Reshape of the Concat), the node whose bytes it views.
void mark_kv_cache_writes(profiler::Recording& r, const KvMapping& k) {
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < r.nodes.size(); ++i)
    for (const std::string& out : r.nodes[i].outputs) producer[out] = i;
  for (const auto& [past, present] : k.pairs) {
    auto it = producer.find(present);
    for (size_t hops = 0; it != producer.end() && hops < r.nodes.size(); ++hops) {
      profiler::NodeInfo& n = r.nodes[it->second];
      if (!ir::OpRegistry::instance().get(n.op).view || n.inputs.empty()) {
        n.kv_cache_write = true;
        break;
      }
      it = producer.find(n.inputs[0]);
    }
  }
}

// `t` with its `axis` `length` long: the rows it has copied, the rest zeros (the host growing a
// static cache by one step).
ir::Tensor grown(const ir::Tensor& t, int axis, int64_t length) {
  ir::Shape shape = t.shape();
  const auto a = static_cast<size_t>(axis);
  const int64_t old = shape[a];
  shape[a] = length;
  ir::Tensor g(t.dtype(), shape);  // zeroed
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < a; ++d) outer *= shape[d];
  for (size_t d = a + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t rows = std::min(old, length);
  for (int64_t o = 0; o < outer; ++o)
    std::copy(t.data<float>() + o * old * inner, t.data<float>() + (o * old + rows) * inner,
              g.data<float>() + o * length * inner);
  return g;
}

}  // namespace

Generation generate(const GenerateOptions& opt, const std::function<void(const GenerationStep&)>& on_step) {
  const Settings& s = opt.settings;
  if (opt.tokens < 1) throw Error("--tokens must be at least 1, got " + std::to_string(opt.tokens));
  if (opt.prompt.empty()) throw Error("the prompt is empty: give at least one token");
  Generation g;
  g.model = s.model;
  g.prompt = opt.prompt;
  require_onnx(s.model);
  register_backends();
  const models::OnnxModel onnx(s.model);  // read and parsed once; each new shape imports it
  const models::OnnxInspection file = onnx.inspect();
  std::set<std::string> consts;
  for (const auto& [name, value] : s.consts) consts.insert(name);
  g.mapping = kv_mapping_of(file, opt.kv, consts);
  const KvMapping& k = g.mapping;
  g.kv_cache = kv_strategy(opt.kv_cache, k, s.model);
  const bool prealloc = g.kv_cache == "preallocate";
  // Positions the cache ever holds: the prompt and every generated token but the last, which no
  // step feeds back.
  if (prealloc) g.cache_length = static_cast<int64_t>(opt.prompt.size()) + opt.tokens - 1;
  const std::vector<OnnxDim> file_dims = onnx_dims(file);
  models::OnnxImportOptions import;
  import.evaluator = &constant_evaluator();  // folds the shape arithmetic, as load_model does
  // The same constants every step, folded into each step's graph as load_model folds them.
  import.constant_inputs = constant_inputs(s.model, file.inputs, s.consts);

  // Step 0's caches: the file's fixed dims, the batch 1 and the cache length (0, or the
  // preallocated length, zeros).
  std::map<std::string, ir::Tensor> cache;
  int64_t position_bytes = 0;  // cache bytes a position takes, over every pair
  for (size_t i = 0; i < k.pairs.size(); ++i) {
    const models::OnnxValueInfo& p = *find_value(file.inputs, k.pairs[i].first);
    ir::Shape shape;
    int64_t per_position = 4;
    for (size_t a = 0; a < p.dims.size(); ++a) {
      const bool axis = static_cast<int>(a) == k.axis[i];
      shape.push_back(axis ? g.cache_length : fixed_dim(p.dims[a]) ? parse_int(p.dims[a], "dim") : 1);
      if (!axis) per_position *= shape.back();
    }
    position_bytes += per_position;
    cache[k.pairs[i].first] = ir::Tensor(ir::DType::f32, shape);  // zeroed
  }

  std::vector<int64_t> ids = opt.prompt;
  int64_t past = 0;
  std::vector<double> setups, decodes;
  std::optional<PlannedStep> planned;  // the last plan made, kept while the shapes stay
  bool arena_holds_cache = false;      // planned's arena has the current cache (host `cache` may not)
  while (static_cast<int>(g.tokens.size()) < opt.tokens) {
    GenerationStep step;
    step.phase = g.steps.empty() ? "prefill" : "decode";
    step.past = past;
    step.seq = static_cast<int64_t>(ids.size());
    if (k.static_cache && !prealloc)  // grow a static cache by the host's copy to this step's length
      for (size_t i = 0; i < k.pairs.size(); ++i) {
        ir::Tensor& t = cache.at(k.pairs[i].first);
        step.kv_copied_bytes += static_cast<int64_t>(t.nbytes());
        t = grown(t, k.axis[i], past + step.seq);
      }
    std::map<std::string, ir::Shape> shapes;
    shapes[k.ids] = {1, step.seq};
    for (const auto& [name, t] : cache) shapes[name] = t.shape();
    const int64_t cache_len = k.static_cache ? cache.begin()->second.shape()[static_cast<size_t>(k.axis[0])]
                                             : past + step.seq;
    if (!k.attention_mask.empty()) shapes[k.attention_mask] = {1, cache_len};
    if (!k.position_ids.empty()) shapes[k.position_ids] = {1, step.seq};
    if (!k.cache_position.empty()) shapes[k.cache_position] = {step.seq};
    for (const auto& [name, t] : import.constant_inputs) shapes[name] = t.shape();  // binds their dims

    const auto t0 = std::chrono::steady_clock::now();
    const int64_t setup_start_ns = profiler::now_ns();  // the recording's clock
    const std::string key = shapes_key(shapes);
    step.new_plan = !planned || planned->key != key;
    if (step.new_plan) {
      import.dims = step_dims(s.model, file_dims, shapes);
      planned.reset();  // the last plan's arena first: only one is held at a time
      arena_holds_cache = false;
      PlannedStep p;
      p.key = key;
      p.session = std::make_unique<exec::Session>(onnx.import(import), session_options(s));
      const std::string why_not = cache_not_in_place(*p.session, k);
      p.in_place = why_not.empty();
      if (prealloc && step.phase == "decode" && !p.in_place) g.not_in_place = why_not;
      // The outputs are allocated once, outside the runs (a fresh 3 MB of logits page-faults its
      // way through 8 ms on this machine).
      for (const std::string& name : p.session->graph().outputs) {
        const ir::TensorInfo& info = p.session->graph().tensor(name);
        p.outputs.emplace_back(info.dtype, info.shape);
      }
      planned.emplace(std::move(p));
    }
    exec::Session& session = *planned->session;

    std::vector<ir::Tensor> inputs;  // the cache's are cache.at(name), borrowed
    std::vector<const void*> in_ptrs;
    std::vector<int64_t> in_bytes;  // per input: its bytes when it is a cache, else 0
    for (const std::string& name : session.original_graph().inputs) {
      const ir::TensorInfo& info = session.original_graph().tensor(name);
      if (cache.count(name)) {
        in_ptrs.push_back(cache.at(name).bytes());
        in_bytes.push_back(static_cast<int64_t>(cache.at(name).nbytes()));
        continue;
      }
      ir::Tensor t(info.dtype, shapes.at(name));
      for (int64_t i = 0; i < t.numel(); ++i) {
        const int64_t v = name == k.ids                               ? ids[static_cast<size_t>(i)]
                          : name == k.position_ids || name == k.cache_position ? past + i
                          : name == k.attention_mask                   ? (i < past + step.seq ? 1 : 0)
                                                                       : 1;
        if (info.dtype == ir::DType::i64) t.data<int64_t>()[i] = v;
        else t.data<float>()[i] = static_cast<float>(v);
      }
      inputs.push_back(std::move(t));
      in_ptrs.push_back(inputs.back().bytes());
      in_bytes.push_back(0);
    }
    std::vector<void*> out_ptrs;
    for (ir::Tensor& t : planned->outputs) out_ptrs.push_back(t.bytes());
    // A fresh plan's first runs are setup, so that the run timed is the engine's steady one. The
    // first first-touches the arena; the second still ran 1.27-2.13 ms where the plan's later runs
    // took 1.00-1.27 (a GPT export's decode step at 1 thread, this Intel Xeon, 2026-12-03), so two
    // go untimed. Run again with the same inputs, a scatter writes the same rows: the timed run
    // computes what the untimed ones did.
    if (step.new_plan) {
      for (int i = 0; i < kWarmUpRuns; ++i) session.run_raw(in_ptrs.data(), out_ptrs.data());
      step.setup_ms = elapsed_ms(t0);
    }
    const int64_t setup_end_ns = profiler::now_ns();
    // The cache stays in the arena where the plan writes it in place and the next step reuses
    // this plan (a decode step's shapes are the next one's): nothing copied in or out.
    const bool next_same_plan = prealloc && step.seq == 1;
    const std::vector<std::string>& names = session.original_graph().outputs;
    if (planned->in_place && arena_holds_cache)
      for (size_t i = 0; i < in_ptrs.size(); ++i)
        if (in_bytes[i] > 0) in_ptrs[i] = nullptr, in_bytes[i] = 0;
    for (int64_t b : in_bytes) step.kv_copied_bytes += b;
    for (size_t i = 0; i < names.size(); ++i)
      for (const auto& [past_name, present] : k.pairs)
        if (names[i] == present) {
          if (planned->in_place && next_same_plan) out_ptrs[i] = nullptr;
          else step.kv_copied_bytes += static_cast<int64_t>(planned->outputs[i].nbytes());
        }
    std::optional<profiler::Recorder> recorder;
    std::optional<exec::BackendRecording> noted;
    if (opt.record) {  // as Pipeline::record traces a run: its ops, and what the backend notes
      recorder.emplace(2 * session.graph().nodes.size() + 16);
      recorder->attach(session, s.model);
      session.set_observer(&*recorder);
      noted.emplace(session.backend());  // drops what the untimed run left
    }
    const auto t1 = std::chrono::steady_clock::now();
    session.run_raw(in_ptrs.data(), out_ptrs.data());
    step.run_ms = elapsed_ms(t1);
    arena_holds_cache = planned->in_place;
    std::optional<profiler::Recording> step_recording;
    if (recorder) {
      session.set_observer(nullptr);
      step_recording = recorder->finish(noted->finish());
      mark_kv_cache_writes(*step_recording, k);
    }

    std::map<std::string, const ir::Tensor*> out;
    for (size_t i = 0; i < names.size() && i < planned->outputs.size(); ++i) out[names[i]] = &planned->outputs[i];
    const ir::Tensor& logits = *out.at(k.logits);
    const ir::Shape& ls = logits.shape();
    if (ls.size() < 2 || ls.back() < 1 || logits.numel() % ls.back() != 0)
      throw Error(s.model + ": logits '" + k.logits + "' are " + ir::shape_str(ls) + "; expected [.., vocab]");
    g.vocab = ls.back();
    const float* last = logits.data<float>() + (logits.numel() - g.vocab);  // the last position's row
    g.logits.insert(g.logits.end(), last, last + g.vocab);
    step.token = std::max_element(last, last + g.vocab) - last;

    for (size_t i = 0; i < k.pairs.size(); ++i) {
      const ir::Tensor& present = *out.at(k.pairs[i].second);
      const int axis = k.axis[i];
      const int64_t want = k.static_cache ? cache_len : past + step.seq;
      if (present.shape().size() != cache.at(k.pairs[i].first).shape().size() ||
          present.shape()[static_cast<size_t>(axis)] != want)
        throw Error(s.model + ": present '" + k.pairs[i].second + "' is " + ir::shape_str(present.shape()) +
                    " after a step from cache length " + std::to_string(past) + " over " + std::to_string(step.seq) +
                    " tokens; expected its axis " + std::to_string(axis) + " to be " + std::to_string(want));
      step.kv_held_bytes += static_cast<int64_t>(present.nbytes());
      if (out_ptrs[static_cast<size_t>(std::find(names.begin(), names.end(), k.pairs[i].second) - names.begin())])
        cache[k.pairs[i].first] = present;  // the host's copy of the cache is the present now
    }
    past += step.seq;
    step.kv_bytes = past * position_bytes;
    ids = {step.token};
    g.tokens.push_back(step.token);
    if (step.new_plan) setups.push_back(step.setup_ms);
    if (step.phase == "decode") decodes.push_back(step.run_ms);
    g.steps.push_back(step);
    if (step_recording) {
      if (!g.recording) g.recording.emplace();
      append_step_recording(*g.recording, *step_recording, step,
                            static_cast<int64_t>(g.steps.size()) - 1,
                            {setup_start_ns, setup_end_ns});
    }
    if (on_step) on_step(g.steps.back());
  }
  g.in_place = prealloc && g.not_in_place.empty();

  g.ttft_ms = g.steps.front().run_ms;
  g.setup_median_ms = profiler::percentile(setups, 0.5);
  if (!decodes.empty()) {
    g.decode_median_ms = profiler::percentile(decodes, 0.5);
    g.decode_p10_ms = profiler::percentile(decodes, 0.1);
    g.decode_p90_ms = profiler::percentile(decodes, 0.9);
    double sum = 0;
    for (double d : decodes) sum += d;
    g.tokens_per_s = sum > 0 ? 1000.0 * static_cast<double>(decodes.size()) / sum : 0;
  }
  return g;
}

const int kWarmUpRuns = 2;
const char* const kSetupStage = "setup: import, plan, warm-up runs";
const char* const kKvCacheCounter = "kv cache bytes";

namespace {

// The index of the track named as `track` in `r`, added when it has none.
int32_t counter_track(profiler::Recording& r, const profiler::CounterTrack& track) {
  for (size_t i = 0; i < r.counter_tracks.size(); ++i)
    if (r.counter_tracks[i].name == track.name) return static_cast<int32_t>(i);
  r.counter_tracks.push_back(track);
  return static_cast<int32_t>(r.counter_tracks.size() - 1);
}

}  // namespace

std::string step_range_name(const GenerationStep& step) {
  return step.phase + " toks=" + std::to_string(step.seq);
}

void append_step_recording(profiler::Recording& all, const profiler::Recording& rec,
                           const GenerationStep& step, int64_t index,
                           std::pair<int64_t, int64_t> setup) {
  using profiler::Span;
  using profiler::SpanKind;
  if (index == 0) {  // the configuration, and the clock origin exports count from
    all = rec;
    all.label += " generate";
    all.spans.clear(), all.nodes.clear(), all.counters.clear(), all.device.clear(),
        all.collectives.clear();
  }
  const auto run = std::find_if(rec.spans.begin(), rec.spans.end(),
                                [](const Span& s) { return s.kind == SpanKind::Run; });
  if (run == rec.spans.end())
    throw Error("generate: step " + std::to_string(index) + "'s recording holds no run");
  if (setup.second > setup.first) {  // the untimed part of the step, shown, not hidden
    if (setup.first < all.origin_ns) {  // exports count from the origin: begin with the setup
      all.origin_utc_ns -= all.origin_ns - setup.first;
      all.origin_ns = setup.first;
    }
    Span stage;
    stage.name = kSetupStage;
    stage.kind = SpanKind::Stage;
    stage.start_ns = setup.first;
    stage.end_ns = std::min(setup.second, run->start_ns);
    stage.tid = run->tid;
    all.spans.push_back(stage);
  }
  Span range;
  range.name = step_range_name(step);
  range.kind = SpanKind::Range;
  range.start_ns = run->start_ns;
  range.end_ns = run->end_ns;
  range.tid = run->tid;
  all.spans.push_back(range);
  const auto offset = static_cast<int32_t>(all.nodes.size());
  for (Span s : rec.spans) {
    if (s.node >= 0) s.node += offset;
    if (s.run >= 0) s.run = index;
    if (s.kind == SpanKind::Run) s.name = profiler::run_range_name(index);
    if (s.tid == range.tid) s.depth += 1;
    all.spans.push_back(s);
  }
  all.nodes.insert(all.nodes.end(), rec.nodes.begin(), rec.nodes.end());
  for (const profiler::CounterSample& c : rec.counters) {
    profiler::CounterSample s = c;
    s.track = counter_track(all, rec.counter_tracks[static_cast<size_t>(c.track)]);
    all.counters.push_back(s);
  }
  // The cache the step returns (present) exists from its end: the KV cache track, a step up a
  // step, from nothing before the prefill.
  const int32_t kv = counter_track(all, {kKvCacheCounter, true});
  if (index == 0) all.counters.push_back({range.start_ns, range.tid, kv, 0.0});
  all.counters.push_back({range.end_ns, range.tid, kv, static_cast<double>(step.kv_bytes)});
  all.device.insert(all.device.end(), rec.device.begin(), rec.device.end());
  for (const auto& t : rec.thread_names)
    if (std::find(all.thread_names.begin(), all.thread_names.end(), t) == all.thread_names.end())
      all.thread_names.push_back(t);
  all.arena_bytes = std::max(all.arena_bytes, rec.arena_bytes);  // the longest step's
  all.node_count = rec.node_count;
}

std::string Generation::text() const {
  std::ostringstream o;
  char buf[256];
  o << "model      " << model << "\n";
  o << "kv cache   " << mapping.how << ": " << mapping.pairs.size() << " pair" << (mapping.pairs.size() == 1 ? "" : "s")
    << ", e.g. '" << mapping.pairs[0].first << "' -> '" << mapping.pairs[0].second << "' (cache length on axis "
    << mapping.axis[0] << ")\n";
  o << "tokens     " << prompt.size() << " in the prompt, " << tokens.size() << " generated (greedy), vocabulary "
    << vocab << "\n";
  std::snprintf(buf, sizeof buf, "prefill    %lld tokens in %.3f ms: time to first token %.3f ms\n",
                static_cast<long long>(steps.front().seq), steps.front().run_ms, ttft_ms);
  o << buf;
  if (steps.size() > 1) {
    std::snprintf(buf, sizeof buf,
                  "decode     %zu steps: per token median %.3f ms (p10 %.3f ms, p90 %.3f ms), %.1f tokens/s\n",
                  steps.size() - 1, decode_median_ms, decode_p10_ms, decode_p90_ms, tokens_per_s);
    o << buf;
  }
  const GenerationStep& lastep = steps.back();
  const int64_t positions = lastep.past + lastep.seq;
  o << "kv bytes   " << format_bytes(static_cast<double>(lastep.kv_bytes) / static_cast<double>(positions))
    << " per token; " << format_bytes(static_cast<double>(steps.front().kv_bytes)) << " after the prefill, "
    << format_bytes(static_cast<double>(lastep.kv_bytes)) << " at the end (" << positions << " positions)\n";
  // How the cache was held, against the lower bound (the positions written).
  std::vector<double> copied;
  for (size_t i = 1; i < steps.size(); ++i) copied.push_back(static_cast<double>(steps[i].kv_copied_bytes));
  const double copied_median = copied.empty() ? 0.0 : profiler::percentile(copied, 0.5);
  auto held_ratio = [](const GenerationStep& st) {  // "1.05"
    char r[32];
    std::snprintf(r, sizeof r, "%.2f",
                  st.kv_bytes > 0 ? static_cast<double>(st.kv_held_bytes) / static_cast<double>(st.kv_bytes) : 0.0);
    return std::string(r);
  };
  if (kv_cache == "preallocate")
    o << "kv cache   preallocated at " << cache_length << " positions ("
      << format_bytes(static_cast<double>(lastep.kv_held_bytes)) << "), "
      << (in_place ? "written in place in the decode plan's arena" : "but copied each step: " + not_in_place)
      << "; held " << held_ratio(steps.front()) << "x the lower bound after the prefill, "
      << held_ratio(lastep) << "x at the end; a decode step copies "
      << format_bytes(copied_median) << " of it (median)\n";
  else
    o << "kv cache   grown each step: held " << held_ratio(lastep)
      << "x the lower bound, but a decode step copies " << format_bytes(copied_median)
      << " of it in and out (median)" << (mapping.static_cache ? ", the host growing it by a copy" : "")
      << (mapping.static_cache ? "" : "; an export with a static cache (cache_position) could be preallocated")
      << "\n";
  int64_t plans = 0;
  double setup_total = 0;
  for (const GenerationStep& st : steps) plans += st.new_plan, setup_total += st.setup_ms;
  std::snprintf(buf, sizeof buf,
                "setup      %lld plan%s for %zu steps, %.1f ms in all (median %.1f ms), not in the figures above: "
                "fusebox imports, plans and runs each new shape twice before the run timed%s\n",
                static_cast<long long>(plans), plans == 1 ? "" : "s", steps.size(), setup_total, setup_median_ms,
                kv_cache == "grow" ? " (the cache length changes every step)" : "");
  o << buf;
  std::vector<std::string> ids;
  for (int64_t t : tokens) ids.push_back(std::to_string(t));
  o << "generated  " << join(ids, " ") << "\n";
  return o.str();
}

}  // namespace fusebox::workbench
