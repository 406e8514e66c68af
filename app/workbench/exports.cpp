#include "app/workbench/exports.h"

#include <set>

#include "app/workbench/graph_layout.h"
#include "app/workbench/refused_model.h"
#include "core/base/atomic_file.h"

namespace fusebox::workbench {

bool is_profile_file(const std::string& name) {
  static const std::set<std::string> kFiles = {"profile.json", "analysis.json", "trace.json",
                                               "trace.nvtxt", "trace.sqlite"};
  return kFiles.count(name) > 0;
}

void check_profile_folder(const std::string& dir) { check_directory_replaceable(dir, is_profile_file); }

void write_profile_folder(const std::string& dir, const profiler::Recording& recording,
                          const profiler::Analysis& analysis, const ProfileFormats& formats,
                          profiler::NvtxtTimeBase time_base) {
  write_directory_atomically(
      dir,
      [&](const std::string& tmp) {
        const std::string t = tmp + "/";
        recording.save(t + "profile.json");
        write_file_atomically(
            t + "analysis.json",
            analysis.to_json().dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
        if (formats.chrome) profiler::write_chrome_trace(recording, t + "trace.json");
        if (formats.nvtxt) profiler::write_nvtxt(recording, t + "trace.nvtxt", time_base);
        if (formats.sqlite) profiler::write_nsys_sqlite(recording, t + "trace.sqlite");
      },
      is_profile_file);
}

GraphSvg graph_svg(const RunResult& result, const std::string& pass, bool before, bool edge_labels) {
  const Settings& s = result.settings;
  SvgOptions options;
  options.layout.edge_labels = edge_labels;
  const ir::Graph* g = &result.graph();
  if (pass.empty()) {
    options.title = s.model + "\nafter passes " + s.passes_text() + ": " +
                    std::to_string(g->nodes.size()) + " nodes";
  } else {
    PassView view = pass_view(result, pass, before);
    g = view.graph;
    options.highlight = std::move(view.highlight);
    options.title = s.model + "\n" + view.caption;
  }
  return {render_svg(*g, options), options.title};
}

GraphSvg refused_graph_svg(const RefusedModel& refused, bool edge_labels) {
  SvgOptions options;
  options.layout.edge_labels = edge_labels;
  options.unsupported = refused.unsupported;
  options.title = refused.drawing->settings.model + "\n" + refused.caption;
  return {render_svg(refused.drawing->model->graph, options), options.title};
}

void write_graph_svg(const std::string& path, const GraphSvg& svg) { write_file_atomically(path, svg.svg); }

}  // namespace fusebox::workbench
