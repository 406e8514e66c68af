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
// `--planner best` plans with every registered strategy and keeps the smallest arena
// (planner::make_plan; the ready line names the winner and every strategy's arena).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/workbench/model_source.h"
#include "app/workbench/settings.h"
#include "core/base/error.h"
#include "core/exec/session.h"
#include "core/ir/npy.h"
#include "core/ir/op_schema.h"
#include "core/planner/plan.h"
#include "ops/cpu/cpu_backend.h"

int main(int argc, char** argv) {
  using namespace fusebox;
  try {
    if (argc < 3) throw Error("usage: fusebox_bench_worker MODEL THREADS [NAME=INPUT.npy ...]");
    cpu::register_backend();
    exec::SessionOptions opt;
    opt.threads = std::stoi(argv[2]);
    std::map<std::string, std::string> input_files;
    workbench::Settings settings;  // only its dims, converted by the settings table
    for (int i = 3; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--passes" && i + 1 < argc)
        opt.passes = argv[++i];
      else if (a == "--planner" && i + 1 < argc)
        opt.planner = argv[++i];
      else if (a == "--executor" && i + 1 < argc)
        opt.executor = argv[++i];
      else if (a == "--dim" && i + 1 < argc)
        workbench::apply(settings, std::string("dims.") + argv[++i], "--dim");
      else if (auto eq = a.find('='); eq != std::string::npos)
        input_files[a.substr(0, eq)] = a.substr(eq + 1);
      else
        throw Error("unexpected argument '" + a + "'");
    }
    exec::Session session(workbench::load_model(argv[1], 1, settings.dims), opt);
    const ir::Graph& g = session.graph();
    const planner::ExecutionPlan& plan = session.plan();
    nlohmann::json arena_json = nlohmann::json::object();
    for (const auto& [name, bytes] : plan.tried) arena_json[name] = bytes;
    if (plan.tried.empty()) arena_json[plan.strategy] = plan.arena_bytes;
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
                                {"arena_bytes", plan.arena_bytes},
                                {"planner", plan.strategy},
                                {"planner_arenas", arena_json},
                                {"flops", ir::graph_cost(g).flops},
                                {"flops_original", ir::graph_cost(session.original_graph()).flops}}
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
