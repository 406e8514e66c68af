#include "profiler/phases.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "core/base/strings.h"
#include "profiler/communication.h"
#include "profiler/steps.h"

namespace fusebox::profiler {

using exec::DeviceActivity;

namespace {

// The decimal number starting at s[i] (at most 15 digits), or nothing.
std::optional<int64_t> number_at(const std::string& s, size_t i) {
  size_t j = i;
  int64_t n = 0;
  while (j < s.size() && j - i < 15 && std::isdigit(static_cast<unsigned char>(s[j])))
    n = n * 10 + (s[j++] - '0');
  if (j == i) return std::nullopt;
  return n;
}
// The number right after `key` in s, or nothing.
std::optional<int64_t> number_after(const std::string& s, const std::string& key) {
  const size_t at = s.find(key);
  return at == std::string::npos ? std::nullopt : number_at(s, at + key.size());
}

struct Match {
  std::string phase;
  int64_t tokens = -1;
};

// Rule 1: "execute_<tokens>_context_<P>(...)_generation_<D>(...)".
std::optional<Match> execute_rule(const std::string& n) {
  if (n.rfind("execute_", 0) != 0) return std::nullopt;
  const auto tokens = number_at(n, 8);
  const auto p = number_after(n, "_context_");
  const auto d = number_after(n, "_generation_");
  if (!tokens || (!p && !d)) return std::nullopt;
  const int64_t pp = p.value_or(0), dd = d.value_or(0);
  if (pp == 0 && dd == 0) return std::nullopt;
  return Match{pp > 0 && dd > 0 ? "mixed" : pp > 0 ? "prefill" : "decode", *tokens};
}

// Rule 2: SGLang's "step[<MODE> bs=<B> toks=<T>]".
std::optional<Match> sglang_rule(const std::string& n) {
  if (n.rfind("step[", 0) != 0) return std::nullopt;
  const std::string mode = n.substr(5, n.find_first_of(" ]", 5) - 5);
  const int64_t toks = number_after(n, "toks=").value_or(-1);
  if (mode == "EXTEND" || mode == "PREFILL") return Match{"prefill", toks};
  if (mode == "DECODE") return Match{"decode", toks};
  if (mode == "MIXED") return Match{"mixed", toks};
  if (mode == "IDLE") return Match{"idle", toks};
  return std::nullopt;
}

// Rule 3: a range named prefill... or decode....
std::optional<Match> named_rule(const std::string& n) {
  const std::string l = to_lower(n);
  const int64_t toks = number_after(l, "toks=").value_or(-1);
  if (l.rfind("prefill", 0) == 0) return Match{"prefill", toks};
  if (l.rfind("decode", 0) == 0) return Match{"decode", toks};
  return std::nullopt;
}

// Rule 4: a causal LM's forward ("nn.Module: Qwen2ForCausalLM_0"); the phase is set by order.
std::optional<Match> causal_lm_rule(const std::string& n) {
  if (n.rfind("nn.Module: ", 0) != 0 || n.find("ForCausalLM") == std::string::npos)
    return std::nullopt;
  return Match{"decode", 1};
}

struct Rule {
  const char* name;
  std::optional<Match> (*match)(const std::string&);
};
const Rule kRules[] = {
    {"vLLM/SGLang execute_<tokens>_context_<P>_generation_<D> annotations", execute_rule},
    {"SGLang step[<MODE> bs= toks=] annotations", sglang_rule},
    {"ranges named prefill*/decode*", named_rule},
    {"Hugging Face generate: each causal-LM forward a step, the first over the prompt",
     causal_lm_rule},
};

int64_t dur(const DeviceActivity& a) {
  return std::max<int64_t>(0, a.end_ns - a.start_ns);
}

bool is_kv_write(const std::string& kernel) {
  const std::string f = to_lower(kernel_function_name(kernel));
  for (const char* p : {"reshape_and_cache", "store_kvcache", "set_kv_buffer", "kv_cache", "copy_blocks"})
    if (f.find(p) != std::string::npos) return true;
  return false;
}

// Rule 4's forwards are generate's only inside a call of it (a Python range "...: generate", as
// PyTorch's profiler names Python functions with_stack): a model's forward outside generate (a
// serving engine's, a graph capture's) says nothing of prompt and tokens.
std::vector<PhaseStep> inside_generate(const Recording& r, std::vector<PhaseStep> steps) {
  std::vector<std::pair<int64_t, int64_t>> calls;
  for (const Span& s : r.spans) {
    const size_t n = s.name.size();
    if (s.kind == SpanKind::Range && n >= 10 && s.name.compare(n - 10, 10, ": generate") == 0)
      calls.push_back({s.start_ns, s.end_ns});
  }
  std::sort(calls.begin(), calls.end());
  std::stable_sort(steps.begin(), steps.end(), [](const PhaseStep& a, const PhaseStep& b) {
    return a.start_ns < b.start_ns;
  });
  std::vector<PhaseStep> kept;
  std::vector<bool> seen(calls.size(), false);
  for (PhaseStep& st : steps)
    for (size_t i = 0; i < calls.size(); ++i)
      if (calls[i].first <= st.start_ns && st.end_ns <= calls[i].second) {
        if (!seen[i]) st.phase = "prefill", st.tokens = -1;  // each call's first: the prompt
        seen[i] = true;
        kept.push_back(std::move(st));
        break;
      }
  return kept;
}

// The steps by the first rule that matches a range: outermost matches, in time order.
std::vector<PhaseStep> find_steps(const Recording& r, std::string* rule) {
  for (size_t k = 0; k < std::size(kRules); ++k) {
    std::vector<PhaseStep> steps;
    for (const Span& s : r.spans) {
      if (s.kind != SpanKind::Range) continue;
      const auto m = kRules[k].match(s.name);
      if (m) steps.push_back({m->phase, s.name, s.start_ns, s.end_ns, m->tokens});
    }
    if (k == 3) steps = inside_generate(r, std::move(steps));
    if (steps.empty()) continue;
    std::stable_sort(steps.begin(), steps.end(), [](const PhaseStep& a, const PhaseStep& b) {
      return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;
    });
    std::vector<PhaseStep> outer;
    for (PhaseStep& s : steps)
      if (outer.empty() || s.start_ns >= outer.back().end_ns) outer.push_back(std::move(s));
    *rule = kRules[k].name;
    return outer;
  }
  *rule = "none";
  return {};
}

// A step's work on a recording without GPU work: the op spans starting in [start, end), in
// order. `spans` is ordered by start (Recording's invariant).
std::vector<const Span*> ops_in(const std::vector<Span>& spans, int64_t start, int64_t end) {
  std::vector<const Span*> ops;
  auto it = std::lower_bound(spans.begin(), spans.end(), start,
                             [](const Span& s, int64_t t) { return s.start_ns < t; });
  for (; it != spans.end() && it->start_ns < end; ++it)
    if (it->kind == SpanKind::Op) ops.push_back(&*it);
  return ops;
}

// Whether op span `s` is of a node that writes the KV cache (NodeInfo::kv_cache_write).
bool writes_kv_cache(const Recording& r, const Span& s) {
  return s.node >= 0 && static_cast<size_t>(s.node) < r.nodes.size() &&
         r.nodes[static_cast<size_t>(s.node)].kv_cache_write;
}

}  // namespace

Phases analyze_phases(const Recording& r) {
  Phases out;
  out.steps = find_steps(r, &out.rule);
  if (out.steps.empty()) return out;
  const StepIndex index(r);
  std::vector<StepWork> work;  // per step, once
  for (PhaseStep& s : out.steps) {
    work.push_back(index.in(s.start_ns, s.end_ns));
    s.gpu_end_ns = work.back().work.empty() ? s.start_ns : work.back().last_ns;
  }
  const bool cpu = r.device.empty();
  if (cpu) {
    out.work = "cpu";
    out.kv_writes_told =
        std::any_of(r.nodes.begin(), r.nodes.end(), [](const NodeInfo& n) { return n.kv_cache_write; });
  }
  static const char* const order[] = {"prefill", "decode", "mixed", "idle"};
  for (const char* name : order) {
    Phase p;
    p.name = name;
    p.tokens = 0;
    std::unordered_map<std::string, PhaseKernel> by;
    for (size_t i = 0; i < out.steps.size(); ++i) {
      const PhaseStep& s = out.steps[i];
      if (s.phase != name) continue;
      p.steps += 1;
      p.host_ns += s.end_ns - s.start_ns;
      if (p.tokens >= 0) p.tokens = s.tokens >= 0 ? p.tokens + s.tokens : -1;
      const StepWork& w = work[i];
      p.step_ns += std::max(s.end_ns, w.work.empty() ? s.end_ns : w.last_ns) - s.start_ns;
      auto add = [&](const std::string& name, int64_t ns) {
        p.kernel_count += 1;
        p.kernel_ns += ns;
        PhaseKernel& g = by[name];
        g.name = name;
        g.count += 1;
        g.total_ns += ns;
      };
      for (const DeviceActivity* k : w.kernels) {
        add(k->name, dur(*k));
        if (is_kv_write(k->name)) p.kv_write_count += 1, p.kv_write_ns += dur(*k);
      }
      if (cpu)
        for (const Span* op : ops_in(r.spans, s.start_ns, s.end_ns)) {
          const int64_t ns = std::max<int64_t>(0, op->end_ns - op->start_ns);
          add(op->name.str(), ns);
          if (writes_kv_cache(r, *op)) p.kv_write_count += 1, p.kv_write_ns += ns;
        }
    }
    if (p.steps == 0) continue;
    if (p.tokens >= 0 && p.step_ns > 0)
      p.tokens_per_s = static_cast<double>(p.tokens) * 1e9 / static_cast<double>(p.step_ns);
    for (auto& [n, g] : by) p.kernels.push_back(std::move(g));
    std::sort(p.kernels.begin(), p.kernels.end(), [](const PhaseKernel& a, const PhaseKernel& b) {
      return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
    });
    out.phases.push_back(std::move(p));
  }
  return out;
}

std::string phases_text(const Phases& p) {
  std::ostringstream os;
  if (p.steps.empty()) {
    os << "\nphases: none (no prefill/decode annotation: vLLM's and SGLang's execute_ or step[...] "
          "ranges, prefill*/decode* ranges, or a causal LM's module ranges)\n";
    return os.str();
  }
  char line[512];
  const bool cpu = p.work == "cpu";
  if (cpu)
    os << "\nphases (by " << p.rule
       << "; no GPU work: a step is its range, its work the ops in it, "
          "per step)\n";
  else
    os << "\nphases (by " << p.rule
       << "; step: its host range to the end of the GPU work it "
          "launched, per step)\n";
  std::snprintf(line, sizeof line, "%-8s %6s %11s %11s %11s %11s %9s %11s\n", "phase", "steps",
                "host", "step", cpu ? "ops" : "GPU", "KV writes", "tokens", "tokens/s");
  os << line;
  for (const Phase& ph : p.phases) {
    std::snprintf(
        line, sizeof line, "%-8s %6lld %11s %11s %11s %11s %9s %11s\n", ph.name.c_str(),
        static_cast<long long>(ph.steps),
        format_duration_ns(static_cast<double>(ph.host_ns)).c_str(),
        format_duration_ns(static_cast<double>(ph.step_ns) / static_cast<double>(ph.steps)).c_str(),
        format_duration_ns(static_cast<double>(ph.kernel_ns)).c_str(),
        p.kv_writes_told ? format_duration_ns(static_cast<double>(ph.kv_write_ns)).c_str() : "-",
        ph.tokens >= 0 ? std::to_string(ph.tokens).c_str() : "-",
        ph.tokens >= 0 ? std::to_string(static_cast<long long>(ph.tokens_per_s + 0.5)).c_str()
                       : "-");
    os << line;
    for (size_t i = 0; i < std::min<size_t>(3, ph.kernels.size()); ++i) {
      const PhaseKernel& k = ph.kernels[i];
      const std::string n = k.name.size() > 60 ? k.name.substr(0, 57) + "..." : k.name;
      std::snprintf(line, sizeof line, "           %-60s %6lld %11s\n", n.c_str(),
                    static_cast<long long>(k.count),
                    format_duration_ns(static_cast<double>(k.total_ns)).c_str());
      os << line;
    }
  }
  return os.str();
}

nlohmann::json phases_json(const Phases& p) {
  using nlohmann::json;
  json phases = json::array();
  for (const Phase& ph : p.phases) {
    json kernels = json::array();
    for (const PhaseKernel& k : ph.kernels)
      kernels.push_back({{"name", k.name}, {"count", k.count}, {"total_ns", k.total_ns}});
    phases.push_back({{"name", ph.name},
                      {"steps", ph.steps},
                      {"host_ns", ph.host_ns},
                      {"step_ns", ph.step_ns},
                      {"kernel_count", ph.kernel_count},
                      {"kernel_ns", ph.kernel_ns},
                      {"kv_write_count", ph.kv_write_count},
                      {"kv_write_ns", ph.kv_write_ns},
                      {"tokens", ph.tokens},
                      {"tokens_per_s", ph.tokens_per_s},
                      {"kernels", kernels}});
  }
  json steps = json::array();
  for (const PhaseStep& s : p.steps)
    steps.push_back({{"phase", s.phase}, {"annotation", s.annotation}, {"start_ns", s.start_ns},
                     {"end_ns", s.end_ns}, {"gpu_end_ns", s.gpu_end_ns}, {"tokens", s.tokens}});
  return {{"rule", p.rule}, {"work", p.work}, {"kv_writes_told", p.kv_writes_told}, {"phases", phases},
          {"steps", steps}};
}

}  // namespace fusebox::profiler
