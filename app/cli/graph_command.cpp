// fusebox graph MODEL --out g.svg: the optimized graph drawn by Graphviz (dot) as SVG; with
// --pass NAME the graph after that pass with what it added in red, with --before the graph it
// started from with what it removed. A model the importer refuses for its ops is drawn from the
// file with those nodes filled red, and still exits 2 with the refusal.
#include <algorithm>
#include <iostream>

#include "app/cli/commands.h"
#include "app/workbench/exports.h"
#include "app/workbench/graph_layout.h"
#include "app/workbench/pipeline.h"
#include "app/workbench/refused_model.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/strings.h"
#include "core/passes/pass_manager.h"

namespace fusebox::cli {

namespace {

struct GraphArgs {
  std::unique_ptr<workbench::SettingsFlags> settings;
  std::string out;
  std::string pass;
  bool before = false;
  bool no_edge_labels = false;
};

void graph(const GraphArgs& a) {
  if (a.before && a.pass.empty())
    throw Error("--before needs --pass NAME (the pass to draw the graph before)");
  if (!a.pass.empty() && !passes::PassRegistry::instance().find(a.pass))
    throw Error("--pass: unknown pass '" + a.pass +
                "' (valid: " + join(passes::PassRegistry::instance().names(), ", ") + ")");
  workbench::Settings s = a.settings->resolve();
  workbench::Pipeline pipeline;
  std::shared_ptr<const workbench::RunResult> r;
  try {
    r = pipeline.run(s, nullptr, nullptr, workbench::Stage::Optimize);
  } catch (const Error&) {
    // A model refused for its ops is still drawn, as the window draws it: the file's outline with
    // the unsupported nodes filled red. The refusal stays the exit status (2): no passes ran, so
    // this is not the graph the command promises, and a script must not take it for one.
    const auto refused = workbench::refused_model(s);
    if (!refused || !a.pass.empty()) throw;  // no pass ran: nothing to draw around one
    workbench::write_graph_svg(a.out, workbench::refused_graph_svg(*refused, !a.no_edge_labels));
    std::cout << "wrote " << a.out << ": " << refused->caption << "\n";
    for (const auto& [node, why] : refused->unsupported) std::cout << "  " << node << ": " << why << "\n";
    throw;
  }

  // The window's File > Export > graph as SVG draws and writes it with the same functions.
  const workbench::GraphSvg svg = workbench::graph_svg(*r, a.pass, a.before, !a.no_edge_labels);
  workbench::write_graph_svg(a.out, svg);
  std::string summary = svg.title;
  std::replace(summary.begin(), summary.end(), '\n', ' ');
  std::cout << "wrote " << a.out << ": " << summary << "\n";
}

void graph_options(CLI::App& cmd, GraphArgs& a) {
  a.settings = std::make_unique<workbench::SettingsFlags>(
      &cmd, std::set<std::string>{"executor", "capture", "threads", "warmup", "iters",
                                 "profile_runs", "inputs"});
  cmd.add_option("--out", a.out, "the SVG file to write")->required();
  cmd.add_option("--pass", a.pass, "draw around this pass (see fusebox passes)");
  cmd.add_flag("--before", a.before,
               "with --pass: the graph before the pass, what it removed in red");
  cmd.add_flag("--no-edge-labels", a.no_edge_labels,
               "leave the shapes off the edges (faster for big graphs)");
}

}  // namespace

Command graph_command() {
  return make_command<GraphArgs>(
      "graph",
      "Draw a model's graph after the chosen passes as SVG (Graphviz dot layout, boxes coloured "
      "by\n"
      "kind, edges labelled with shapes). With --pass, the graph after that pass with the nodes "
      "it\n"
      "added in red; with --before too, the graph before it with the nodes it removed.\n"
      "Example: fusebox graph transformer --pass fuse_patterns --out fused.svg",
      graph_options, graph);
}

}  // namespace fusebox::cli
