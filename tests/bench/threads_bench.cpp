// 1 thread against 2 (or any two counts), model by model, in interleaved rounds: is the second
// thread ever a loss? Every builtin model (at its defaults and at the small sizes where a
// fork/join costs more than the op it splits) and every .onnx file in assets/models with no
// dynamic dims; or the MODELs given (builtin specs or .onnx files).
//
//   build/tests/bench/fusebox_bench_threads [--rounds 15] [--ms 20] [--threads 1,2]
//       [--assets DIR] [--busy N] [--json] [--check] [MODEL...]
//
// --busy N starts N processes spinning for the whole benchmark (the contention a desktop always
// has: another process busy on a core); FUSEBOX_STEP_DOWN=0 turns off the step-down that keeps 2
// threads from collapsing there (ops/cpu/parallel.h), to see the collapse.
//
// Method: one Session for the model (compiled executor, all passes, greedy_by_size), run at each
// thread count in turn (Session::set_threads; the plan, the arena and the prepared kernels are the
// same, so only the threads differ; two Sessions would also differ in where their arenas and
// packed weights landed, worth +-5% on a 1.6 us model). A round runs each thread count for about
// --ms milliseconds of calls, alternating which goes first, and takes each side's median call; the
// ratio t_b / t_a is computed inside each round. The table gives the median over rounds of each
// side and of the ratio, and the ratio's 25th-75th percentile band over rounds. A model counts as
// slower at b threads only when even the band's low end is above 1 + 2% (three rounds in four
// slower): beyond noise. With --check the exit status is 1 when a model is slower.

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/busy_processes.h"
#include "app/workbench/model_source.h"
#include "core/base/error.h"
#include "core/base/strings.h"
#include "core/exec/session.h"
#include "ops/cpu/cpu_backend.h"
#include "ops/cpu/parallel.h"

namespace fusebox {
namespace {

constexpr double kNoise = 0.02;

const std::vector<std::string> kBuiltins = {
    "mlp",                                      // batch 1, 784-512-512-10
    "mlp:batch=64",                             //
    "mlp:batch=3,dims=128-256-256-10",          // a few microseconds
    "mlp:batch=3,dims=256-256-256-10",          //
    "transformer:seq=8,d=128,heads=2,ffn=512",  // small block: tens of microseconds
    "transformer:seq=16,d=64,heads=2,ffn=256",  //
    "transformer:seq=32,d=128,heads=4,ffn=512", //
    "transformer",                              // seq 64, d 256
    "stack",                                    // 4 layers, seq 128
};

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t i = static_cast<size_t>(pos);
  const double f = pos - static_cast<double>(i);
  return i + 1 < v.size() ? v[i] * (1 - f) + v[i + 1] * f : v[i];
}


struct Side {
  int threads = 1;
  std::vector<double> medians_us;  // one per round
};

// Median call time of `calls` calls at `threads`, in microseconds.
double median_call_us(exec::Session& session, const std::vector<const void*>& in,
                      const std::vector<void*>& out, int threads, int calls) {
  session.set_threads(threads);
  std::vector<double> t(static_cast<size_t>(calls));
  for (double& x : t) {
    const auto t0 = std::chrono::steady_clock::now();
    session.run_raw(in.data(), out.data());
    x = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  }
  return quantile(std::move(t), 0.5);
}

struct Row {
  std::string model;
  double a_us, b_us, ratio, ratio_p25, ratio_p75;
  bool slower;
};

Row race(const std::string& model, int a_threads, int b_threads, int rounds, double ms) {
  ir::Graph graph = workbench::load_model(model, 1);
  std::vector<ir::Tensor> inputs = workbench::random_inputs(graph, 1);
  exec::Session session(graph, exec::SessionOptions{});
  std::vector<ir::Tensor> outputs = session.run(inputs);  // checks shapes once
  std::vector<const void*> in;
  std::vector<void*> out;
  for (auto& t : inputs) in.push_back(t.bytes());
  for (auto& t : outputs) out.push_back(t.bytes());
  Side sides[2];
  sides[0].threads = a_threads;
  sides[1].threads = b_threads;
  // Warm-up (and the fork/join cost measured), then calls per round: about `ms` of the a side.
  for (const Side& s : sides) median_call_us(session, in, out, s.threads, 20);
  const double probe = median_call_us(session, in, out, a_threads, 20);
  const int calls = std::max(5, static_cast<int>(ms * 1000.0 / std::max(probe, 0.01)));
  std::vector<double> ratios;
  for (int r = 0; r < rounds; ++r) {
    const int first = r % 2;
    double m[2];
    m[first] = median_call_us(session, in, out, sides[first].threads, calls);
    m[1 - first] = median_call_us(session, in, out, sides[1 - first].threads, calls);
    sides[0].medians_us.push_back(m[0]);
    sides[1].medians_us.push_back(m[1]);
    ratios.push_back(m[1] / m[0]);
  }
  Row row{model,
          quantile(sides[0].medians_us, 0.5),
          quantile(sides[1].medians_us, 0.5),
          quantile(ratios, 0.5),
          quantile(ratios, 0.25),
          quantile(ratios, 0.75),
          false};
  row.slower = row.ratio_p25 > 1.0 + kNoise;
  return row;
}

int main_impl(int argc, char** argv) {
  int rounds = 15;
  double ms = 20;
  int a = 1, b = 2;
  std::vector<std::string> models;
  std::string assets = "assets/models";
  bool json = false, check = false;
  int busy = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw Error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--rounds") {
      rounds = std::stoi(value());
    } else if (arg == "--ms") {
      ms = std::stod(value());
    } else if (arg == "--threads") {
      const auto parts = split(value(), ',');
      if (parts.size() != 2) throw Error("--threads takes two counts, e.g. 1,2");
      a = std::stoi(parts[0]);
      b = std::stoi(parts[1]);
    } else if (arg == "--assets") {
      assets = value();
    } else if (arg == "--busy") {
      busy = std::stoi(value());
    } else if (arg == "--json") {
      json = true;
    } else if (arg == "--check") {
      check = true;
    } else if (!arg.empty() && arg[0] == '-') {
      throw Error("unknown option '" + arg +
                  "' (use --rounds N --ms MS --threads A,B --assets DIR --busy N --json --check MODEL...)");
    } else {
      models.push_back(arg);
    }
  }
  if (rounds < 1 || ms <= 0 || a < 1 || b < 1 || busy < 0) throw Error("--rounds, --ms and --threads must be positive");
  if (models.empty()) {
    models = kBuiltins;
    std::vector<std::string> files;
    if (std::filesystem::is_directory(assets))
      for (const auto& e : std::filesystem::directory_iterator(assets)) {
        if (e.path().extension() != ".onnx") continue;
        // A file with dynamic dims (the decoders with a KV cache) has no one shape to race.
        const auto dims = workbench::onnx_dims(e.path().string());
        if (std::any_of(dims.begin(), dims.end(),
                        [](const workbench::OnnxDim& d) { return d.dynamic; })) {
          std::cerr << "skipped " << e.path().filename().string()
                    << ": dynamic dims (give it with its dims)\n";
          continue;
        }
        files.push_back(e.path().string());
      }
    std::sort(files.begin(), files.end());
    models.insert(models.end(), files.begin(), files.end());
  }
  cpu::register_backend();
  // The fork/join cost is measured before the busy processes start (as a desktop app measures it
  // while its render thread idles): measured beside them it is a scheduler slice, and every op
  // would stay on one thread for that reason alone.
  if (busy > 0) cpu::fork_join_ns(b);
  testing::BusyProcesses spinning(busy, 600);
  std::vector<Row> rows;
  for (const auto& m : models) {
    rows.push_back(race(m, a, b, rounds, ms));
  }
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : rows)
      out.push_back({{"model", r.model},
                     {"a_threads", a},
                     {"b_threads", b},
                     {"a_us", r.a_us},
                     {"b_us", r.b_us},
                     {"ratio", r.ratio},
                     {"ratio_p25", r.ratio_p25},
                     {"ratio_p75", r.ratio_p75},
                     {"slower", r.slower}});
    std::cout << out.dump(2) << "\n";
  } else {
    std::printf("fork/join at %d threads: %.2f us (%s)\n", b, cpu::fork_join_ns(b) / 1000.0,
                std::getenv("FUSEBOX_FORK_JOIN_NS") ? "FUSEBOX_FORK_JOIN_NS"
                                                    : "measured: lowest of 5 bursts' 25th percentiles of back-to-back regions");
    std::printf("%d rounds of ~%.0f ms per side, interleaved; ratio = t%d / t%d inside each round\n",
                rounds, ms, b, a);
    const cpu::ContentionStats st = cpu::contention_stats();
    std::printf("%d busy processes; contention windows %lld, step-downs %lld%s\n\n", busy,
                static_cast<long long>(st.windows), static_cast<long long>(st.step_downs),
                std::getenv("FUSEBOX_STEP_DOWN") ? " (FUSEBOX_STEP_DOWN set)" : "");
    std::printf("| model | %d thread(s) median us | %d threads median us | t%d/t%d median | p25-p75 | verdict |\n",
                a, b, b, a);
    std::printf("|---|---|---|---|---|---|\n");
    for (const auto& r : rows)
      std::printf("| %s | %.2f | %.2f | %.3f | %.3f-%.3f | %s |\n", r.model.c_str(), r.a_us, r.b_us,
                  r.ratio, r.ratio_p25, r.ratio_p75,
                  r.slower ? "SLOWER" : (r.ratio_p75 < 1.0 - kNoise ? "faster" : "same"));
  }
  if (check)
    for (const auto& r : rows)
      if (r.slower) return 1;
  return 0;
}

}  // namespace
}  // namespace fusebox

int main(int argc, char** argv) {
  try {
    return fusebox::main_impl(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fusebox_bench_threads: %s\n", e.what());
    return 2;
  }
}
