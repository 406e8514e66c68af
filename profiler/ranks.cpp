#include "profiler/ranks.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "core/base/error.h"
#include "core/base/strings.h"
#include "profiler/communication.h"
#include "profiler/intervals.h"
#include "profiler/steps.h"

namespace fusebox::profiler {

using exec::ActivityKind;
using exec::DeviceActivity;

namespace {

int64_t dur(const DeviceActivity& a) {
  return std::max<int64_t>(0, a.end_ns - a.start_ns);
}

std::string base_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The number after the last "rank" in a file name ("rank-3", "rank_3", "rank3"), or -1.
int64_t rank_in_name(const std::string& path) {
  const std::string name = to_lower(base_name(path));
  const size_t at = name.rfind("rank");
  if (at == std::string::npos) return -1;
  size_t i = at + 4;
  while (i < name.size() && (name[i] == '-' || name[i] == '_')) ++i;
  int64_t n = -1;
  for (; i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])) && n < (1 << 24); ++i)
    n = (n < 0 ? 0 : n * 10) + (name[i] - '0');
  return n < (1 << 24) ? n : -1;
}

// ProfilerStep#N ranges: N -> [start, end) on the host clock.
std::map<int64_t, std::pair<int64_t, int64_t>> profiler_steps(const Recording& r) {
  std::map<int64_t, std::pair<int64_t, int64_t>> steps;
  static const std::string prefix = "ProfilerStep#";
  for (const Span& s : r.spans) {
    if (s.kind != SpanKind::Range || s.name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string digits = s.name.substr(prefix.size());
    if (digits.empty() || digits.size() > 15 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      continue;
    steps.try_emplace(std::stoll(digits), std::make_pair(s.start_ns, s.end_ns));
  }
  return steps;
}

std::string step_list(const std::map<int64_t, std::pair<int64_t, int64_t>>& steps) {
  if (steps.empty()) return "none";
  std::string out = "#" + std::to_string(steps.begin()->first);
  if (steps.size() > 1) out += "-#" + std::to_string(steps.rbegin()->first);
  return out + " (" + std::to_string(steps.size()) + ")";
}


// The figures of one step [s, e) (or the whole window when whole) of a recording's index.
RankStep step_figures(int64_t step, int64_t s, int64_t e, bool whole,
                      const StepIndex& index) {
  RankStep out;
  out.step = step;
  const StepWork w = whole ? index.all() : index.in(s, e);
  std::vector<std::pair<int64_t, int64_t>> work;
  for (const DeviceActivity* x : w.work) work.push_back({x->start_ns, x->end_ns});
  for (const DeviceActivity* k : w.kernels)
    (is_communication_kernel(k->name) ? out.comm_ns : out.compute_ns) += dur(*k);
  out.step_ns = whole ? w.last_ns - w.first_ns : std::max<int64_t>(0, e - s);
  out.comm_exposed_ns = comm_split(w.kernels).exposed_ns;
  out.idle_ns = std::max<int64_t>(0, out.step_ns - union_length(std::move(work)));
  return out;
}

struct Given {
  const RankTrace* t;
  int32_t rank;
  std::string from;
  std::map<int64_t, std::pair<int64_t, int64_t>> steps;
};

// Ranks and world size, checked: one job, no rank twice.
std::vector<Given> ranks_of(const std::vector<RankTrace>& traces, int32_t* world) {
  std::vector<Given> given;
  const RankTrace* world_from = nullptr;
  for (const RankTrace& t : traces) {
    const Recording& r = *t.recording;
    Given g{&t, r.rank, "distributedInfo", profiler_steps(r)};
    if (g.rank < 0) {
      const int64_t n = rank_in_name(t.file);
      if (n < 0)
        throw Error(t.file + ": cannot tell its rank: the trace has no distributedInfo.rank and "
                    "its name no 'rank<N>'");
      g.rank = static_cast<int32_t>(n);
      g.from = "file name";
    }
    if (r.world_size > 0) {
      if (world_from && r.world_size != *world)
        throw Error(t.file + ": world_size " + std::to_string(r.world_size) + ", but " +
                    world_from->file + " says " + std::to_string(*world) +
                    ": these are not ranks of one job");
      *world = r.world_size;
      world_from = &t;
    }
    given.push_back(std::move(g));
  }
  std::sort(given.begin(), given.end(), [](const Given& a, const Given& b) { return a.rank < b.rank; });
  for (size_t i = 0; i < given.size(); ++i) {
    if (i > 0 && given[i].rank == given[i - 1].rank)
      throw Error(given[i].t->file + " and " + given[i - 1].t->file + " are both rank " +
                  std::to_string(given[i].rank) + ": not one job's ranks");
    if (*world > 0 && given[i].rank >= *world)
      throw Error(given[i].t->file + ": rank " + std::to_string(given[i].rank) +
                  " is not below the job's world_size " + std::to_string(*world));
  }
  return given;
}

// The step numbers every rank has; throws when some have steps and they cannot be aligned.
std::vector<int64_t> common_steps(const std::vector<Given>& given) {
  const Given* with = nullptr;
  const Given* without = nullptr;
  for (const Given& g : given) (g.steps.empty() ? without : with) = &g;
  if (!with) return {};
  if (without)
    throw Error(without->t->file + " has no ProfilerStep# annotation while " + with->t->file +
                " has " + step_list(with->steps) + ": the ranks cannot be aligned on steps");
  std::vector<int64_t> common;
  for (const auto& kv : given.front().steps) {
    bool all = true;
    for (const Given& g : given) all = all && g.steps.count(kv.first);
    if (all) common.push_back(kv.first);
  }
  if (common.empty()) {
    std::string each;
    for (const Given& g : given)
      each += (each.empty() ? "" : ", ") + g.t->file + " has " + step_list(g.steps);
    throw Error("the ranks have no ProfilerStep in common (" + each + "): they cannot be aligned");
  }
  return common;
}

std::string dur_text(int64_t ns) {
  return format_duration_ns(static_cast<double>(ns));
}

// Names the straggler and each rank's wait for it (step by step).
void find_straggler(RankAnalysis& a) {
  for (const RankSummary& r : a.ranks) a.communication = a.communication || r.comm_ns > 0;
  if (a.ranks.empty()) return;
  if (!a.communication) {
    const RankSummary* slow = &a.ranks.front();
    for (const RankSummary& r : a.ranks)
      if (r.step_ns > slow->step_ns) slow = &r;
    a.verdict = "no communication kernels in the steps, so no rank waits for another; the "
                "slowest is rank " + std::to_string(slow->rank) + " (" +
                dur_text(slow->step_ns / static_cast<int64_t>(std::max<size_t>(1, slow->steps.size()))) +
                " a step)";
    return;
  }
  const RankSummary* s = &a.ranks.front();
  for (const RankSummary& r : a.ranks)
    if (r.comm_ns < s->comm_ns) s = &r;
  a.straggler = s->rank;
  for (RankSummary& r : a.ranks) {
    if (r.rank == s->rank) continue;
    for (size_t k = 0; k < r.steps.size(); ++k) {
      r.steps[k].wait_ns = std::max<int64_t>(0, r.steps[k].comm_ns - s->steps[k].comm_ns);
      r.wait_ns += r.steps[k].wait_ns;
    }
    a.others_wait_ns += r.wait_ns;
  }
  const size_t n = std::max<size_t>(1, s->steps.size());
  a.verdict = "rank " + std::to_string(s->rank) + " is the straggler: it spends the least time "
              "in communication (" + dur_text(s->comm_ns / static_cast<int64_t>(n)) +
              " a step), so the others wait for it inside their collectives: " +
              dur_text(a.others_wait_ns) + " over " + std::to_string(a.ranks.size() - 1) +
              " ranks and " + std::to_string(s->steps.size()) +
              (s->steps.size() == 1 ? " step" : " steps") + ". Next: rank " +
              std::to_string(s->rank) + "'s own trace, its computation (" +
              dur_text(s->compute_ns / static_cast<int64_t>(n)) + " a step) and idle time";
  if (a.missing > 0)
    a.verdict += " (named among the " + std::to_string(a.ranks.size()) + " ranks given; " +
                 std::to_string(a.missing) + " of the job's " + std::to_string(a.world_size) +
                 " are not)";
}

}  // namespace

RankAnalysis analyze_ranks(const std::vector<RankTrace>& traces) {
  RankAnalysis a;
  const std::vector<Given> given = ranks_of(traces, &a.world_size);
  const std::vector<int64_t> common = common_steps(given);
  const bool whole = common.empty();
  a.steps = whole ? std::vector<int64_t>{-1} : common;
  a.step_source = whole ? "no ProfilerStep# annotation in any trace: each rank's GPU window is one step"
                        : "ProfilerStep# annotations, " + std::to_string(common.size()) +
                              " in common";
  for (const Given& g : given) {
    const Recording& r = *g.t->recording;
    const StepIndex index(r);
    RankSummary s;
    s.rank = g.rank;
    s.file = g.t->file;
    s.rank_from = g.from;
    s.world_size = r.world_size;
    for (int64_t n : a.steps) {
      const auto it = g.steps.find(n);
      const RankStep st = whole ? step_figures(-1, 0, 0, true, index)
                                : step_figures(n, it->second.first, it->second.second, false, index);
      s.step_ns += st.step_ns, s.compute_ns += st.compute_ns, s.comm_ns += st.comm_ns;
      s.comm_exposed_ns += st.comm_exposed_ns, s.idle_ns += st.idle_ns;
      s.steps.push_back(st);
    }
    a.ranks.push_back(std::move(s));
  }
  if (a.world_size > 0) {
    std::set<int32_t> have;
    for (const RankSummary& s : a.ranks) have.insert(s.rank);
    for (int32_t k = 0; k < a.world_size; ++k) {
      if (have.count(k)) continue;
      a.missing += 1;
      if (a.missing_first.size() < 8) a.missing_first.push_back(k);
    }
  }
  find_straggler(a);
  return a;
}

std::string rank_analysis_text(const RankAnalysis& a) {
  std::ostringstream os;
  char line[512];
  os << "ranks: " << a.ranks.size() << " given";
  if (a.world_size > 0) os << " of a world of " << a.world_size;
  if (a.missing > 0) {
    os << " (missing " << a.missing << ":";
    for (int32_t k : a.missing_first) os << " " << k;
    if (a.missing > static_cast<int64_t>(a.missing_first.size())) os << " ...";
    os << ")";
  }
  os << "; steps: " << a.step_source << "\n";
  std::snprintf(line, sizeof line, "%-5s %11s %11s %11s %11s %11s %11s  %s\n", "rank", "step",
                "compute", "comm", "exposed", "idle", "waits", "file");
  os << line;
  for (const RankSummary& r : a.ranks) {
    const int64_t n = static_cast<int64_t>(std::max<size_t>(1, r.steps.size()));
    std::snprintf(line, sizeof line, "%-5d %11s %11s %11s %11s %11s %11s  %s%s\n", r.rank,
                  dur_text(r.step_ns / n).c_str(), dur_text(r.compute_ns / n).c_str(),
                  dur_text(r.comm_ns / n).c_str(), dur_text(r.comm_exposed_ns / n).c_str(),
                  dur_text(r.idle_ns / n).c_str(),
                  r.rank == a.straggler ? "straggler" : dur_text(r.wait_ns / n).c_str(),
                  r.file.c_str(), r.rank_from == "file name" ? " (rank from its name)" : "");
    os << line;
  }
  os << "(per step, the mean over the common steps; waits: for the straggler)\n";
  os << "verdict: " << a.verdict << "\n";
  return os.str();
}

nlohmann::json rank_analysis_json(const RankAnalysis& a) {
  using nlohmann::json;
  json ranks = json::array();
  for (const RankSummary& r : a.ranks) {
    json steps = json::array();
    for (const RankStep& s : r.steps)
      steps.push_back({{"step", s.step}, {"step_ns", s.step_ns}, {"compute_ns", s.compute_ns},
                       {"comm_ns", s.comm_ns}, {"comm_exposed_ns", s.comm_exposed_ns},
                       {"idle_ns", s.idle_ns}, {"wait_ns", s.wait_ns}});
    ranks.push_back({{"rank", r.rank},         {"file", r.file},
                     {"rank_from", r.rank_from}, {"world_size", r.world_size},
                     {"step_ns", r.step_ns},   {"compute_ns", r.compute_ns},
                     {"comm_ns", r.comm_ns},   {"comm_exposed_ns", r.comm_exposed_ns},
                     {"idle_ns", r.idle_ns},   {"wait_ns", r.wait_ns},
                     {"steps", steps}});
  }
  return {{"world_size", a.world_size},
          {"missing", a.missing},
          {"missing_first", a.missing_first},
          {"steps", a.steps},
          {"step_source", a.step_source},
          {"communication", a.communication},
          {"straggler", a.straggler},
          {"others_wait_ns", a.others_wait_ns},
          {"verdict", a.verdict},
          {"ranks", ranks}};
}

}  // namespace fusebox::profiler
