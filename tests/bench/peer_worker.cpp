// fusebox worker for tests/bench/peers/race.py: the same line protocol as ort_worker.js.
// Loads a model once (compiled executor, all passes, greedy_by_size planner unless told
// otherwise), prints one ready line
//   {"ready": true, "nodes": N, "arena_bytes": B, "planner": S, "planner_arenas": {S: B, ...},
//    "flops": F, "flops_original": F0}
// (F: FLOPs of one call of the graph it runs, the sum of ir::node_cost over its nodes; F0 the
// same before the passes), then answers on stdin, one JSON line per command on stdout:
//   run N      -> {"samples_us": [...]}   N timed calls through the allocation-free path
//   save PATH  -> {"saved": PATH}         first output as .npy
//   quit
// Usage: fusebox_bench_worker MODEL THREADS [NAME=INPUT.npy ...] [--passes P] [--planner S]
//        [--executor E] [--dim NAME=VALUE ...]
// --dim gives values to an ONNX file's dynamic dims, as `fusebox run --dim` does.
// `--planner best` plans the optimized graph with every registered strategy
// (core/planner/strategies.h) and keeps the one with the smallest arena (ties: the first).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/workbench/model_source.h"
#include "core/base/error.h"
#include "core/exec/session.h"
#include "core/ir/npy.h"
#include "core/ir/op_schema.h"
#include "core/planner/plan.h"
#include "core/planner/strategies.h"
#include "ops/cpu/cpu_backend.h"

namespace {

using namespace fusebox;

// FLOPs of one call: ir::node_cost summed over the graph's nodes (as the profiler counts them).
double graph_flops(const ir::Graph& g) {
  double total = 0;
  for (const ir::Node& n : g.nodes) {
    std::vector<ir::TensorType> in, out;
    for (const auto& t : n.inputs) in.push_back({g.tensor(t).dtype, g.tensor(t).shape});
    for (const auto& t : n.outputs) out.push_back({g.tensor(t).dtype, g.tensor(t).shape});
    total += ir::node_cost(n, in, out).flops;
  }
  return total;
}

// Arena bytes of `graph` under every registered strategy, in registry order.
std::vector<std::pair<std::string, size_t>> arena_per_strategy(const ir::Graph& graph) {
  std::vector<std::pair<std::string, size_t>> arenas;
  for (const planner::Strategy& s : planner::strategies())
    arenas.emplace_back(s.name, planner::make_plan(graph, s.name).arena_bytes);
  return arenas;
}

// The strategy with the smallest arena; the first one on ties.
std::string smallest_arena(const std::vector<std::pair<std::string, size_t>>& arenas) {
  if (arenas.empty()) throw Error("no planner strategy is registered");
  size_t best = 0;
  for (size_t i = 1; i < arenas.size(); ++i)
    if (arenas[i].second < arenas[best].second) best = i;
  return arenas[best].first;
}

// "--dim NAME=VALUE": dims[NAME] = VALUE (the last one given wins).
void add_dim(std::map<std::string, int64_t>& dims, const std::string& d) {
  auto eq = d.find('=');
  size_t used = 0;
  int64_t value = 0;
  try {
    if (eq != std::string::npos && eq > 0) value = std::stoll(d.substr(eq + 1), &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (eq == std::string::npos || eq == 0 || used == 0 || used != d.size() - eq - 1)
    throw Error("--dim " + d + ": expected NAME=VALUE with an integer VALUE");
  dims[d.substr(0, eq)] = value;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc < 3) throw Error("usage: fusebox_bench_worker MODEL THREADS [NAME=INPUT.npy ...]");
    cpu::register_backend();
    exec::SessionOptions opt;
    opt.threads = std::stoi(argv[2]);
    std::map<std::string, std::string> input_files;
    std::map<std::string, int64_t> dims;
    for (int i = 3; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--passes" && i + 1 < argc)
        opt.passes = argv[++i];
      else if (a == "--planner" && i + 1 < argc)
        opt.planner = argv[++i];
      else if (a == "--executor" && i + 1 < argc)
        opt.executor = argv[++i];
      else if (a == "--dim" && i + 1 < argc)
        add_dim(dims, argv[++i]);
      else if (auto eq = a.find('='); eq != std::string::npos)
        input_files[a.substr(0, eq)] = a.substr(eq + 1);
      else
        throw Error("unexpected argument '" + a + "'");
    }
    ir::Graph model = workbench::load_model(argv[1], 1, dims);
    const double flops_original = graph_flops(model);
    std::vector<std::pair<std::string, size_t>> arenas;
    if (opt.planner == "best") {
      // The passes run inside the Session, so plan the graph a first Session optimized, then
      // build the real one with the winner (the pipeline is deterministic: same graph again).
      exec::SessionOptions probe = opt;
      probe.planner = planner::strategy_names().at(0);
      arenas = arena_per_strategy(exec::Session(model, probe).graph());
      opt.planner = smallest_arena(arenas);
    }
    exec::Session session(std::move(model), opt);
    const ir::Graph& g = session.graph();
    if (arenas.empty()) arenas = {{opt.planner, session.plan().arena_bytes}};
    nlohmann::json arena_json = nlohmann::json::object();
    for (const auto& [name, bytes] : arenas) arena_json[name] = bytes;
    std::vector<ir::Tensor> inputs = workbench::random_inputs(g, 1);
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      auto it = input_files.find(g.inputs[i]);
      if (it != input_files.end()) inputs[i] = ir::read_npy(it->second);
    }
    std::vector<ir::Tensor> outputs = session.run(inputs);  // checks shapes once
    std::vector<const void*> in;
    std::vector<void*> out;
    for (auto& t : inputs) in.push_back(t.bytes());
    for (auto& t : outputs) out.push_back(t.bytes());
    std::cout << nlohmann::json{{"ready", true},
                                {"nodes", g.nodes.size()},
                                {"arena_bytes", session.plan().arena_bytes},
                                {"planner", opt.planner},
                                {"planner_arenas", arena_json},
                                {"flops", graph_flops(g)},
                                {"flops_original", flops_original}}
                     .dump()
              << std::endl;
    std::string cmd;
    while (std::cin >> cmd) {
      if (cmd == "run") {
        int n = 0;
        std::cin >> n;
        std::vector<double> samples;
        samples.reserve(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i) {
          auto t0 = std::chrono::steady_clock::now();
          session.run_raw(in.data(), out.data());
          auto t1 = std::chrono::steady_clock::now();
          samples.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        }
        std::cout << nlohmann::json{{"samples_us", samples}}.dump() << std::endl;
      } else if (cmd == "save") {
        std::string path;
        std::cin >> path;
        ir::write_npy(path, outputs[0]);
        std::cout << nlohmann::json{{"saved", path}}.dump() << std::endl;
      } else if (cmd == "quit") {
        break;
      } else {
        std::cout << nlohmann::json{{"error", "unknown command " + cmd}}.dump() << std::endl;
      }
    }
  } catch (const std::exception& e) {
    std::cout << nlohmann::json{{"error", e.what()}}.dump() << std::endl;
    return 2;
  }
  return 0;
}
