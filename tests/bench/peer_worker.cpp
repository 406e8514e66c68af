// fusebox worker for tests/bench/peers/race.py: the same line protocol as ort_worker.js.
// Loads a model once (compiled executor, all passes, greedy_by_size planner unless told
// otherwise), then answers on stdin, one JSON line per command on stdout:
//   run N      -> {"samples_us": [...]}   N timed calls through the allocation-free path
//   save PATH  -> {"saved": PATH}         first output as .npy
//   quit
// Usage: fusebox_bench_worker MODEL THREADS [NAME=INPUT.npy ...] [--passes P] [--planner S]
//        [--executor E]
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/workbench/model_source.h"
#include "core/base/error.h"
#include "core/exec/session.h"
#include "core/ir/npy.h"
#include "ops/cpu/cpu_backend.h"

int main(int argc, char** argv) {
  using namespace fusebox;
  try {
    if (argc < 3) throw Error("usage: fusebox_bench_worker MODEL THREADS [NAME=INPUT.npy ...]");
    cpu::register_backend();
    exec::SessionOptions opt;
    opt.threads = std::stoi(argv[2]);
    std::map<std::string, std::string> input_files;
    for (int i = 3; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--passes" && i + 1 < argc) opt.passes = argv[++i];
      else if (a == "--planner" && i + 1 < argc) opt.planner = argv[++i];
      else if (a == "--executor" && i + 1 < argc) opt.executor = argv[++i];
      else if (auto eq = a.find('='); eq != std::string::npos) input_files[a.substr(0, eq)] = a.substr(eq + 1);
      else throw Error("unexpected argument '" + a + "'");
    }
    exec::Session session(workbench::load_model(argv[1], 1), opt);
    const ir::Graph& g = session.graph();
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
    std::cout << nlohmann::json{{"ready", true}, {"nodes", g.nodes.size()}, {"arena_bytes", session.plan().arena_bytes}}.dump()
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
