// How long a flip takes to give a new result, measuring excluded: the pipeline run up to the
// bound executor (Stage::Bind), after the base settings ran once. For each kind of flip:
//   first: the flip made for the first time (its stages really run);
//   back:  flipping back to settings seen before (the stage caches answer).
// Median over repetitions, each on a fresh pipeline warmed with the base settings.
//   fusebox_bench_flip [--reps N] [--models transformer,stack]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "app/workbench/pipeline.h"
#include "core/base/strings.h"
#include "ops/cpu/cpu_backend.h"

using namespace fusebox;
using workbench::Settings;

namespace {

struct Flip {
  const char* name;
  std::function<void(Settings&)> apply;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double millis(const std::function<void()>& fn) {
  auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

profiler::Roofline no_roofline(const std::string&, const std::string&) { return {}; }

}  // namespace

int main(int argc, char** argv) {
  int reps = 7;
  std::string models = "transformer,stack";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--reps")) reps = std::max(1, std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--models")) models = argv[i + 1];
  }
  cpu::register_backend();
  const std::vector<Flip> flips = {
      {"pass (fuse_elementwise off)", [](Settings& s) { s.passes_off.insert("fuse_elementwise"); }},
      {"pattern (attention off)", [](Settings& s) { s.patterns_off.insert("attention"); }},
      {"planner (greedy_by_size -> first_fit)", [](Settings& s) { s.planner = "first_fit"; }},
      {"executor (compiled -> interpreted)", [](Settings& s) { s.executor = "interpreted"; }},
      {"threads (1 -> 2)", [](Settings& s) { s.threads = 2; }},
  };
  std::printf("flip -> new result, measuring excluded (median of %d; ms)\n", reps);
  std::printf("%-12s %-40s %10s %10s\n", "model", "flip", "first", "back");
  for (const std::string& model : split(models, ',')) {
    Settings base;
    base.model = model;
    base.profile_runs = 0;
    for (const Flip& f : flips) {
      Settings flipped = base;
      f.apply(flipped);
      std::vector<double> first, back;
      for (int r = 0; r < reps; ++r) {
        workbench::Pipeline p(no_roofline);
        p.run(base, nullptr, nullptr, workbench::Stage::Bind);
        first.push_back(millis([&] { p.run(flipped, nullptr, nullptr, workbench::Stage::Bind); }));
        back.push_back(millis([&] { p.run(base, nullptr, nullptr, workbench::Stage::Bind); }));
      }
      std::printf("%-12s %-40s %10.2f %10.2f\n", model.c_str(), f.name, median(first), median(back));
    }
  }
  return 0;
}
