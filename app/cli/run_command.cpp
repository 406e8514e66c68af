// fusebox run MODEL: build, optimize, plan, run many times; print the report.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "app/cli/commands.h"
#include "app/workbench/model_source.h"
#include "app/workbench/run_report.h"
#include "core/base/error.h"
#include "core/ir/npy.h"

namespace fusebox::cli {

namespace {

struct RunArgs {
  SessionArgs session;
  int iters = 100;
  int warmup = 10;
  std::string save_outputs;
  bool json = false;
  bool explain = false;
  std::vector<std::string> inputs;  // NAME=FILE.npy
  std::vector<std::string> dims;    // NAME=VALUE
};

// Seeded random inputs, replaced by the --input files given: names, dtypes and shapes checked
// against the model.
std::vector<ir::Tensor> make_inputs(const ir::Graph& graph, const RunArgs& a) {
  std::vector<ir::Tensor> inputs = workbench::random_inputs(graph, a.session.seed);
  for (const auto& item : a.inputs) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw Error("--input '" + item + "': expected NAME=FILE.npy");
    std::string name = item.substr(0, eq), file = item.substr(eq + 1);
    auto it = std::find(graph.inputs.begin(), graph.inputs.end(), name);
    if (it == graph.inputs.end()) {
      std::string known;
      for (const auto& n : graph.inputs) known += (known.empty() ? "" : ", ") + n;
      throw Error("--input " + name + ": the model has no input '" + name + "' (its inputs: " + known + ")");
    }
    const ir::TensorInfo& info = graph.tensor(name);
    ir::Tensor t = ir::read_npy(file);
    if (t.dtype() != info.dtype || t.shape() != info.shape)
      throw Error("--input " + name + "=" + file + ": the file holds " + ir::dtype_name(t.dtype()) +
                  ir::shape_str(t.shape()) + ", the model expects " + ir::dtype_name(info.dtype) +
                  ir::shape_str(info.shape) + (a.dims.empty() ? "" : " (after --dim)"));
    inputs[static_cast<size_t>(it - graph.inputs.begin())] = std::move(t);
  }
  return inputs;
}

// A tensor name as a file name: path separators and colons become '_'.
std::string file_name_for(const std::string& tensor) {
  std::string s = tensor;
  for (char& c : s)
    if (c == '/' || c == ':' || c == '\\' || c == ' ') c = '_';
  return s + ".npy";
}

void run(const RunArgs& a) {
  if (a.iters < 1) throw Error("--iters must be >= 1, got " + std::to_string(a.iters));
  if (a.warmup < 0) throw Error("--warmup must be >= 0, got " + std::to_string(a.warmup));
  if (!a.save_outputs.empty()) ensure_writable_dir(a.save_outputs, "--save-outputs");
  ir::Graph model =
      workbench::load_model(a.session.model, a.session.seed, workbench::parse_dims(a.dims, "--dim"));
  exec::SessionOptions opt;
  opt.backend = a.session.backend;
  opt.executor = a.session.executor;
  opt.threads = a.session.threads;
  opt.passes = a.session.passes;
  opt.planner = a.session.planner;
  exec::Session session(std::move(model), opt);
  std::vector<ir::Tensor> inputs = make_inputs(session.graph(), a);
  std::vector<ir::Tensor> outputs = session.run(inputs);
  workbench::Latency latency = workbench::measure_latency(session, inputs, a.iters, a.warmup);
  workbench::RunReport report = workbench::make_report(a.session.model, session, latency, outputs);
  if (!a.save_outputs.empty())
    for (size_t i = 0; i < outputs.size(); ++i)
      ir::write_npy(a.save_outputs + "/" + file_name_for(session.graph().outputs[i]), outputs[i]);
  if (a.json) {
    std::cout << report.to_json().dump(2) << "\n";
  } else {
    std::cout << report.to_text();
    if (a.explain) std::cout << "\n" << session.pass_log().to_text();
  }
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Build a model, run it many times and report latency, memory and output checksums.\n"
      "Example: fusebox run transformer --executor eager --iters 50 --json");
  add_session_options(cmd, args->session);
  cmd->add_option("--iters", args->iters, "timed calls")->capture_default_str();
  cmd->add_option("--warmup", args->warmup, "untimed calls first")->capture_default_str();
  cmd->add_option("--save-outputs", args->save_outputs, "directory to write each output as <name>.npy");
  cmd->add_flag("--json", args->json, "print the report as one JSON object");
  cmd->add_option("--input", args->inputs,
                  "NAME=FILE.npy: feed input NAME from a .npy file (f32 or i64; repeatable); "
                  "other inputs are seeded random")
      ->take_all();
  cmd->add_option("--dim", args->dims, "NAME=VALUE: value of a dynamic dim of a .onnx model (repeatable)")
      ->take_all();
  cmd->add_flag("--explain", args->explain, "print what each pass rewrote and what almost matched");
  cmd->callback([args] { run(*args); });
}

}  // namespace fusebox::cli
