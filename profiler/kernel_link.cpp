#include "profiler/kernel_link.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <tuple>

namespace fusebox::profiler {

namespace {

// "(80, 1, 1)" as ncu writes a grid or block; "" for a trace record without one.
std::string geometry(const int32_t (&v)[3]) {
  if (v[0] <= 0) return "";
  return "(" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) + ")";
}

std::string squeeze_spaces(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
    out += c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

int rank_of(const std::string& match) {
  return match == "exact" ? 3 : match == "name and launch" ? 2 : match == "name" ? 1 : 0;
}

std::string pct_or(const std::optional<double>& v) {
  if (!v) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", *v);
  return buf;
}

// One line of an ncu launch's figures: the limiter, Speed Of Light, occupancy, DRAM.
std::string figures_line(const KernelFigures& f) {
  std::string s = "limiter " + (f.limiter.empty() ? std::string("not in the report") : f.limiter) + "; SOL SM " +
                  pct_or(f.sm_throughput_pct) + ", memory " + pct_or(f.memory_throughput_pct) + "; occupancy " +
                  pct_or(f.achieved_occupancy_pct) + " of " + pct_or(f.theoretical_occupancy_pct);
  if (!f.occupancy_limiter.empty()) s += " (" + f.occupancy_limiter + ")";
  if (f.dram_gbytes_per_s) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "; DRAM %.1f GB/s", *f.dram_gbytes_per_s);
    s += buf;
  }
  if (f.duration_ns) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "; %.2f us", *f.duration_ns / 1000);
    s += buf;
  }
  return s;
}

}  // namespace

namespace {

// An anonymous namespace as GCC's demangler writes it, and as ncu does ("<unnamed>", or in some
// exports "unnamed>" without its '<'), as one word, so the brackets stay balanced. A '<' right
// after a name ("f<unnamed>::T>") opens template arguments and stays.
std::string anonymous_as_word(std::string s) {
  for (size_t at; (at = s.find("(anonymous namespace)")) != std::string::npos;) s.replace(at, 21, "anonymous");
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at; (at = s.find("unnamed>")) != std::string::npos;) {
    const bool own_bracket = at > 0 && s[at - 1] == '<' && (at < 2 || !ident(s[at - 2]));
    if (own_bracket)
      s.replace(at - 1, 9, "anonymous");
    else
      s.replace(at, 8, "anonymous");
  }
  return s;
}

}  // namespace

std::string kernel_full_name(const std::string& name) {
  std::string s = anonymous_as_word(squeeze_spaces(name));
  if (s.rfind("void ", 0) == 0) s = s.substr(5);
  // Qualifiers ("at::native::", "c10::") and spaces dropped: ncu prints names without them.
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (ident(s[i])) {
      size_t j = i;
      while (j < s.size() && ident(s[j])) ++j;
      if (s.compare(j, 2, "::") != 0) out.append(s, i, j - i);
      i = s.compare(j, 2, "::") == 0 ? j + 2 : j;
      continue;
    }
    if (s[i] != ' ') out += s[i];
    ++i;
  }
  return out;
}

std::string kernel_base_name(const std::string& name) {
  std::string s = anonymous_as_word(name);
  // Up to the parameter list (the first '(' outside template arguments), template arguments dropped.
  std::string head;
  int depth = 0;
  for (char c : s) {
    if (c == '<') {
      ++depth;
      continue;
    }
    if (c == '>' && depth > 0) {
      --depth;
      continue;
    }
    if (depth > 0) continue;
    if (c == '(') break;
    head += c;
  }
  head = squeeze_spaces(head);
  const size_t space = head.rfind(' ');
  if (space != std::string::npos) head = head.substr(space + 1);
  const size_t colons = head.rfind("::");
  if (colons != std::string::npos) head = head.substr(colons + 2);
  return head.empty() ? squeeze_spaces(name) : head;
}

KernelLinks link_kernels(const std::vector<exec::DeviceActivity>& device, const NcuReport& ncu) {
  KernelLinks out;
  std::map<std::tuple<std::string, std::string, std::string>, size_t> index;
  for (const exec::DeviceActivity& a : device) {
    if (a.kind != exec::ActivityKind::Kernel) continue;
    const int64_t d = std::max<int64_t>(0, a.end_ns - a.start_ns);
    const auto key = std::make_tuple(a.name, geometry(a.grid), geometry(a.block));
    auto [it, fresh] = index.emplace(key, out.groups.size());
    if (fresh) {
      KernelLink g;
      g.name = a.name;
      g.grid = std::get<1>(key);
      g.block = std::get<2>(key);
      out.groups.push_back(std::move(g));
    }
    KernelLink& g = out.groups[it->second];
    ++g.launches;
    g.total_ns += d;
    out.trace_kernel_ns += d;
  }
  std::stable_sort(out.groups.begin(), out.groups.end(),
                   [](const KernelLink& a, const KernelLink& b) { return a.total_ns > b.total_ns; });
  // The groups' names, computed once: full and base.
  std::vector<std::string> full, base;
  for (const KernelLink& g : out.groups) {
    full.push_back(kernel_full_name(g.name));
    base.push_back(kernel_base_name(g.name));
  }
  std::vector<std::vector<std::pair<int, size_t>>> ranked(out.groups.size());  // (match rank, launch)
  out.ncu_launches = ncu.kernels.size();
  for (size_t k = 0; k < ncu.kernels.size(); ++k) {
    const NcuKernel& n = ncu.kernels[k];
    const std::string n_full = kernel_full_name(n.name), n_base = kernel_base_name(n.name);
    size_t best = out.groups.size();
    int best_rank = 0;
    for (size_t i = 0; i < out.groups.size(); ++i) {  // the groups are by time: the first of a rank wins
      const KernelLink& g = out.groups[i];
      const bool launch = !g.grid.empty() && g.grid == n.grid && g.block == n.block;
      const int r = launch && full[i] == n_full ? 3 : launch && base[i] == n_base ? 2 : base[i] == n_base ? 1 : 0;
      if (r > best_rank) {
        best = i;
        best_rank = r;
      }
      if (best_rank == 3) break;
    }
    if (best == out.groups.size()) {
      out.unmatched.push_back(n.name);
      continue;
    }
    ++out.ncu_matched;
    KernelLink& g = out.groups[best];
    ranked[best].emplace_back(best_rank, k);
    const char* kinds[] = {"", "name", "name and launch", "exact"};
    if (best_rank > rank_of(g.match)) g.match = kinds[best_rank];
  }
  // Each group's launches, the best match first (its figures are the ones shown), then in order.
  for (size_t i = 0; i < out.groups.size(); ++i) {
    std::stable_sort(ranked[i].begin(), ranked[i].end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& [rank, k] : ranked[i]) out.groups[i].ncu.push_back(k);
    if (!ranked[i].empty()) out.linked_ns += out.groups[i].total_ns;
  }
  for (KernelLink& g : out.groups)
    g.share = out.trace_kernel_ns > 0 ? static_cast<double>(g.total_ns) / static_cast<double>(out.trace_kernel_ns) : 0;
  return out;
}

std::string kernel_links_text(const KernelLinks& links, const NcuReport& ncu, size_t max_groups) {
  std::string s = "kernel level (Nsight Compute): " + std::to_string(links.ncu_matched) + " of " +
                  std::to_string(links.ncu_launches) + " profiled launch" + (links.ncu_launches == 1 ? "" : "es") +
                  " matched to the trace's kernels";
  if (!links.unmatched.empty()) {
    std::vector<std::string> names;  // distinct base names, in order
    for (const std::string& n : links.unmatched)
      if (std::find(names.begin(), names.end(), kernel_base_name(n)) == names.end()) names.push_back(kernel_base_name(n));
    s += "; " + std::to_string(links.unmatched.size()) + " matched none (";
    for (size_t i = 0; i < names.size() && i < 4; ++i) s += (i ? ", " : "") + names[i];
    s += names.size() > 4 ? ", ...)" : ")";
  }
  char buf[256];
  std::snprintf(buf, sizeof buf, "\n  the kernels with a profiled launch are %.1f%% of the trace's kernel time\n",
                links.trace_kernel_ns > 0 ? 100.0 * static_cast<double>(links.linked_ns) / static_cast<double>(links.trace_kernel_ns) : 0.0);
  s += buf;
  s += "  top kernels by GPU time, each with its limiter where ncu profiled it (match rules: profiler/kernel_link.h):\n";
  for (size_t i = 0; i < links.groups.size() && i < max_groups; ++i) {
    const KernelLink& g = links.groups[i];
    std::string name = kernel_base_name(g.name);
    std::snprintf(buf, sizeof buf, "  %5.1f%%  %6lld launch%s  ", 100 * g.share, static_cast<long long>(g.launches),
                  g.launches == 1 ? "  " : "es");
    s += buf + name;
    if (!g.grid.empty()) s += "  grid " + g.grid + ", block " + g.block;
    s += "\n";
    if (g.ncu.empty()) {
      s += "          no profiled launch of this kernel\n";
      continue;
    }
    const KernelFigures f = kernel_figures(ncu.kernels[g.ncu.front()]);
    s += "          ncu (" + g.match + ", " + std::to_string(g.ncu.size()) + " launch" + (g.ncu.size() == 1 ? "" : "es") +
         (g.match == "name" ? ", profiled at grid " + f.grid + ", block " + f.block : std::string()) +
         "): " + figures_line(f) + "\n";
  }
  return s;
}

nlohmann::json kernel_links_json(const KernelLinks& links, const NcuReport& ncu) {
  nlohmann::json groups = nlohmann::json::array();
  for (const KernelLink& g : links.groups) {
    nlohmann::json ids = nlohmann::json::array();
    for (size_t k : g.ncu) ids.push_back({{"file", ncu.kernels[k].file}, {"id", ncu.kernels[k].id}});
    nlohmann::json j = {{"name", g.name},       {"base_name", kernel_base_name(g.name)},
                        {"grid", g.grid},       {"block", g.block},
                        {"launches", g.launches}, {"total_ns", g.total_ns},
                        {"share", g.share},     {"match", g.match},
                        {"ncu", ids}};
    if (!g.ncu.empty()) {
      // The kernel's figures as `fusebox kernels --json` gives them: its limiters flat on the
      // group, with the roofline and the fine-grained list.
      const nlohmann::json f = kernel_figures_json(kernel_figures(ncu.kernels[g.ncu.front()]));
      for (const char* key : {"limiter", "sm_throughput_pct", "memory_throughput_pct", "achieved_occupancy_pct",
                              "theoretical_occupancy_pct", "occupancy_limiter", "dram_gbytes_per_s", "roofline",
                              "findings"})
        j[key] = f[key];
    }
    groups.push_back(std::move(j));
  }
  return {{"ncu_launches", links.ncu_launches}, {"ncu_matched", links.ncu_matched},
          {"unmatched", links.unmatched},       {"trace_kernel_ns", links.trace_kernel_ns},
          {"linked_ns", links.linked_ns},       {"groups", groups}};
}

}  // namespace fusebox::profiler
