#include "app/ui/app.h"

#include <imgui.h>
#include <GLFW/glfw3.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "app/ui/model_title.h"
#include "app/ui/widgets.h"
#include "app/workbench/exports.h"
#include "app/workbench/refused_model.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/strings.h"

namespace fusebox::ui {
namespace {

std::vector<std::string> split_commands(const std::string& text) {
  std::vector<std::string> out;
  std::string current;
  for (char c : text) {
    if (c == ';' || c == '\n') {
      if (auto t = trim(current); !t.empty()) out.push_back(t);
      current.clear();
    } else {
      current += c;
    }
  }
  if (auto t = trim(current); !t.empty()) out.push_back(t);
  return out;
}

// A draggable split between two regions, `length` long: `fraction` of `total` goes to the first.
void splitter(const char* id, bool vertical, float* fraction, float total, float thickness, float length) {
  ImGui::InvisibleButton(id, vertical ? ImVec2(thickness, length) : ImVec2(length, thickness));
  if (ImGui::IsItemHovered() || ImGui::IsItemActive()) {
    ImGui::SetMouseCursor(vertical ? ImGuiMouseCursor_ResizeEW : ImGuiMouseCursor_ResizeNS);
    ImGui::GetWindowDrawList()->AddRectFilled(ImGui::GetItemRectMin(), ImGui::GetItemRectMax(),
                                              IM_COL32(90, 160, 255, 160));
  }
  if (ImGui::IsItemActive() && total > 0) {
    const float delta = vertical ? ImGui::GetIO().MouseDelta.x : ImGui::GetIO().MouseDelta.y;
    *fraction = std::clamp(*fraction + delta / total, 0.08f, 0.92f);
  }
}

// Why `path` cannot be opened from the window: something that is there but not a regular file.
// stat() opens nothing; open() of a FIFO blocks until a writer comes, and the UI thread (a
// scenario, a trace) or the runner (a model) would wait with it. A missing file passes: the
// reader names it.
std::string not_a_regular_file(const std::string& verb, const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return "";
  const char* what = S_ISDIR(st.st_mode)    ? "a directory"
                     : S_ISFIFO(st.st_mode) ? "a FIFO"
                                            : "a device or socket";
  return verb + ": '" + path + "' is not a regular file (" + what + ")";
}

}  // namespace

App::App(const workbench::Settings& settings, workbench::Pipeline::RooflineSource roofline,
         const std::string& scenario)
    : verbs_(make_verbs()), panels_(make_panels()), runner_(std::move(roofline)), settings_(settings) {
  if (scenario.empty() || !command("scenario=" + scenario).empty()) request_run();
}

std::string App::enter_step(size_t step) {
  if (!walkthrough_) return "step: no scenario loaded (File > Open a scenario .json)";
  if (walkthrough_->scenario().is_trace()) {
    // Nothing to run: the step points into the trace (shown again if the settings were run).
    walkthrough_->enter(step);
    trace_ = walkthrough_->trace();
    focus_ = PanelId::Walkthrough;
    if (const PanelRow* row = panels_.find(walkthrough_->current().look_at.panel)) focus_ = row->id;
    bring_tab_ = PanelId::Walkthrough;
    look_at_pending_ = true;
    look_at_gap_tries_ = 0;
    return "";
  }
  const workbench::Settings& next = walkthrough_->enter(step);
  const bool changed = !(next == settings_);
  settings_ = next;
  if (changed || !walkthrough_->has_result(step)) request_run();
  focus_ = PanelId::Walkthrough;
  if (const PanelRow* row = panels_.find(walkthrough_->current().look_at.panel)) focus_ = row->id;
  bring_tab_ = PanelId::Walkthrough;
  look_at_pending_ = true;
  return "";
}

void App::apply_look_at() {
  if (!look_at_pending_ || !walkthrough_) return;
  if (walkthrough_->scenario().is_trace()) {
    if (!trace_) return;
    const workbench::LookAt& l = walkthrough_->current().look_at;
    try {
      workbench::validate_look_at(walkthrough_->scenario(), walkthrough_->step(), *trace_);
    } catch (const Error& e) {
      look_at_pending_ = false;
      command_error_ = e.what();
      return;
    }
    if (!l.kernel.empty() && look_at_gap_tries_ == 0) {
      const std::string error = run_command("kernel=" + workbench::trace_kernel_named(*trace_, l.kernel));
      if (!error.empty()) command_error_ = error;
    }
    if (!l.group.empty() && look_at_gap_tries_ == 0) {
      const std::string error = run_command(std::string("ops.group=") + (l.group == "name" ? "type" : "node"));
      if (!error.empty()) command_error_ = error;
    }
    if (!l.phase.empty() && look_at_gap_tries_ == 0) {
      const std::string error = run_command("ops.phase=" + l.phase);
      if (!error.empty()) command_error_ = error;
    }
    if (l.gap >= 0) {
      // The trace panel lists the gaps once it has drawn the trace: wait a few frames for it.
      const std::string error = run_command("trace.gap=" + std::to_string(l.gap));
      if (!error.empty() && ++look_at_gap_tries_ < 5) return;
      if (!error.empty()) command_error_ = error;
    }
    look_at_pending_ = false;
    return;
  }
  const auto result = runner_.result();
  if (!result || !(result->settings == settings_)) return;
  look_at_pending_ = false;
  const workbench::LookAt& l = walkthrough_->current().look_at;
  try {
    workbench::validate_look_at(walkthrough_->scenario(), walkthrough_->step(), *result);
  } catch (const Error& e) {
    command_error_ = e.what();
    return;
  }
  if (!l.node.empty()) {
    selection_.node = l.node;
  } else if (!l.op.empty()) {
    for (const auto& n : result->graph().nodes) {
      if (n.op == l.op) {
        selection_.node = n.name;
        break;
      }
    }
  }
}

void App::request_run() {
  trace_.reset();  // running the settings leaves an opened trace
  kernel_level_.reset();
  runner_.request(settings_);
}

bool App::idle_drawing() const {
  const workbench::Runner::Snapshot snap = runner_.snapshot();
  return !snap.busy && snap.result == drawn_result_ && !layouts_.busy() && !graph.settling();
}

bool App::idle() const { return queue_.empty() && idle_drawing(); }

// The last run's error, once, above the panels (they say only that there is nothing to show).
void App::draw_error_banner(const workbench::Runner::Snapshot& snap) {
  banner_.clear();
  if (!snap.error || trace_) return;
  banner_ = (snap.result ? "last run failed (showing the last good result): " : "the run failed: ") +
            snap.error->message;
  ImGui::PushStyleColor(ImGuiCol_Text, kErrorColor);
  ImGui::TextWrapped("%s", banner_.c_str());
  ImGui::PopStyleColor();
}

// A run of what the controls ask for failed (a model that does not open, a backend refused):
// the controls go back to the settings of the result still on screen, so they describe it, and
// the next flip starts from there instead of re-running the broken settings. The error stays
// above the panels. Not while a scenario plays: its steps say what to run.
void App::revert_failed_settings(const workbench::Runner::Snapshot& snap) {
  if (!snap.error || snap.error == seen_error_ || snap.busy) return;
  seen_error_ = snap.error;
  if (walkthrough_ || !snap.result || !(snap.error->settings == settings_)) return;
  if (snap.result->settings.model != settings_.model) selection_ = {};
  settings_ = snap.result->settings;
}

std::string App::title() const {
  if (trace_) return "fusebox - " + model_title(trace_->path);
  const auto result = runner_.result();  // the model on screen, else the one being opened
  return "fusebox - " + model_title(result ? result->settings.model : settings_.model);
}

std::string App::command(const std::string& text) {
  std::string error;
  for (const std::string& one : split_commands(text)) {
    error = run_command(one);
    if (!error.empty()) break;
  }
  command_error_ = error;
  return error;
}

Registry<App::Verb> App::make_verbs() {
  Registry<Verb> v("command");
  auto verb = [&](const char* name, std::string usage, std::string help, bool reads, auto run) {
    v.add(name, Verb{std::move(usage), std::move(help), reads, false,
                     std::function<std::string(const std::string&)>(run)});
  };
  verb("open",
       "open=",
       "open=PATH loads a model file, a scenario (.json), a GPU trace (PyTorch profiler "
       ".json/.json.gz, nsys .sqlite) or a folder of one job's rank traces; open alone shows File > Open",
       false, [this](const std::string& value) {
         std::error_code ec;
         // An Nsight Compute export while a trace is open: the kernel level beside it.
         if (trace_ && workbench::is_ncu_export(value)) return open_kernels(value);
         if (std::filesystem::is_directory(value, ec)) return open_trace(value);  // ranks of a job
         if (std::string refused = not_a_regular_file("open", value); !refused.empty())
           return refused;
         // A trace by its content, or by a trace's name (so a missing one says so as a trace).
         if (profiler::looks_like_trace(value) || value.ends_with(".json.gz") || value.ends_with(".sqlite"))
           return open_trace(value);
         return value.ends_with(".json") ? open_scenario(value) : open_model(value);
       });
  verb("browse", "browse=",
       "browse=DIR shows File > Open at folder DIR (relative to the working directory)", false,
       [this](const std::string& value) {
         open_dialog.show(value.empty() ? "." : value);
         return "";
       });
  verb("scenario", "scenario=", "scenario=PATH loads a scenario and enters its first step", true,
       [this](const std::string& value) {
         if (std::string refused = not_a_regular_file("scenario", value); !refused.empty())
           return refused;
         return open_scenario(value);
       });
  verb("step",
       "step=", "step=N enters step N of the scenario (0-based): its settings, then its look_at",
       true, [this](const std::string& value) -> std::string {
         size_t n = 0;
         try {
           n = static_cast<size_t>(parse_int(value, "step"));
         } catch (const Error&) {
           return "step: expected a step number, got '" + value + "'";
         }
         return enter_step(n);
       });
  verb("save",
       "save=", "save=PATH writes the current settings as a one-step scenario (File > Save)", true,
       [this](const std::string& value) {
         if (value.empty()) {
           save_dialog_ = true;
           return "";
         }
         const std::string name = std::filesystem::path(value).stem().string();
         write_file_atomically(
             value, workbench::scenario_json(name, settings_)
                            .dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
                        "\n");
         return "";
       });
  verb("select", "select=", "select=NODE selects a node in every panel; select= clears", true,
       [this](const std::string& value) { return select(value); });
  verb("kernels", "kernels=",
       "kernels=PATH opens an Nsight Compute CSV export (or a folder of them) beside the open trace: "
       "each profiled launch matched to the trace's kernels, whose rows then carry its limiter",
       false, [this](const std::string& value) { return open_kernels(value); });
  verb("kernel", "kernel=",
       "kernel=NAME selects an open trace's kernel by name: the op table shows its Nsight Compute "
       "figures (kernels=PATH); kernel= clears",
       false, [this](const std::string& value) -> std::string {
         if (value.empty()) {
           selection_.kernel.clear();
           return "";
         }
         if (!trace_) return "kernel: no trace is open (open=TRACE first)";
         for (const profiler::KernelGroup& g : trace_->analysis.kernels_by_name)
           if (g.key == value) {
             selection_.kernel = value;
             return "";
           }
         return "kernel: no kernel named '" + value + "' in the open trace";
       });
  verb("panel", "panel=", "panel=NAME focuses a panel (keys 1-8)", true,
       [this](const std::string& value) { return focus_panel(value); });
  verb("run", "run", "runs the current settings again (space)", false, [this](const std::string&) {
    request_run();
    return "";
  });
  verb("pin", "pin", "pins the current result (or the open trace) as the compare baseline", true,
       [this](const std::string&) -> std::string {
         if (trace_) {  // a recording: compared with the next trace opened
           baseline_trace_ = trace_;
           bring_tab_ = PanelId::Compare;
           return "";
         }
         if (!runner_.result()) return "pin: no result to pin yet";
         runner_.pin_baseline();
         bring_tab_ = PanelId::Compare;
         return "";
       });
  verb("unpin", "unpin", "drops the compare baseline", false, [this](const std::string&) {
    runner_.clear_baseline();
    baseline_trace_.reset();
    return "";
  });
  // Nothing to do when it runs: in a script it has already waited for the runs and layouts.
  verb("wait", "wait", "in a script: waits for the runs requested so far and the graph's layout",
       true, [](const std::string&) { return ""; });
  verb("screenshot",
       "screenshot=", "in a script: saves the window as PNG once the runs before it finished", true,
       [this](const std::string& value) -> std::string {
         if (value.empty()) return "screenshot: give a path (screenshot=view.png)";
         screenshot_ = value;
         return "";
       });
  verb("quit", "quit", "closes the window", false, [this](const std::string&) {
    quit_ = true;
    return "";
  });
  verb("options", "options",
       "shows Run > Options: the model's options (transformer's seq, a .onnx file's dims), "
       "warmup, iters, profile runs and seed",
       false, [this](const std::string&) {
         run_options.open = true;
         return "";
       });
  for (const char* kind : ExportDialog::kKinds) {
    const std::string k = kind;
    const std::string what = k == "trace"
                                 ? "export.trace=PATH writes the recorded runs as a Chrome trace "
                                   "(trace.json: Perfetto, chrome://tracing)"
                             : k == "svg"
                                 ? "export.svg=PATH writes the graph as SVG, as `fusebox graph "
                                   "--out` draws it"
                                 : "export.profile=DIR writes a profile folder as `fusebox profile "
                                   "--out` does (profile.json, analysis.json, trace.json, "
                                   ".nvtxt, .sqlite)";
    verb(("export." + k).c_str(), "export." + k + "=", what + "; alone asks for the path", true,
         [this, k](const std::string& value) { return export_to(k, value); });
  }
  verb("help", "help", "shows Help > Keys and commands (F1): every key and command", false,
       [this](const std::string&) {
         help.open = true;
         return "";
       });
  for (const char* name : {"wait", "screenshot"}) {
    Verb again = v.get(name);
    again.waits_for_layouts = true;
    v.add(name, std::move(again));
  }
  return v;
}

Registry<App::PanelRow> App::make_panels() {
  Registry<PanelRow> p("panel");
  auto row = [&](PanelRow r) { p.add(panel_name(r.id), std::move(r)); };
  // In the order the keys 1-8 and the View menu list them.
  row({PanelId::Graph, Place::TopCenter, [this](const Frame& f) { graph.draw(f); },
       [this] { return graph.switches(); }});
  row({PanelId::Arena, Place::TopRight, [this](const Frame& f) { arena.draw(f); },
       [this] { return arena.switches(); }});
  row({PanelId::Trace, Place::Middle, [this](const Frame& f) { trace.draw(f); },
       [this] { return trace.switches(); }});
  row({PanelId::Ops, Place::BottomLeft, [this](const Frame& f) { ops.draw(f); },
       [this] { return ops.switches(); }});
  row({PanelId::Compare, Place::BottomRight, [this](const Frame& f) { compare.draw(f); },
       [this] { return compare.switches(); }});
  // passes.<pass>=on|off is a setting.
  row({PanelId::Passes, Place::TopLeft, [this](const Frame& f) { passes.draw(f); },
       [this] { return passes.switches(); }, false});
  row({PanelId::Walkthrough, Place::BottomRight, [this](const Frame& f) { walkthrough.draw(f); },
       [this] { return walkthrough.switches(); }, false, true});
  // The selected node's details, a tab beside the arena (the column with the height for it).
  row({PanelId::Details, Place::TopRight, [this](const Frame& f) { details.draw(f); },
       [this] { return details.switches(); }, false});
  return p;
}

std::string App::run_command(const std::string& text) {
  const size_t eq = text.find('=');
  const std::string verb = trim(text.substr(0, eq));
  const std::string value = eq == std::string::npos ? "" : trim(text.substr(eq + 1));
  try {
    if (const Verb* v = verbs_.find(verb)) return v->run(value);
    if (const PanelRow* row = panel_for(verb)) return run_panel_switch(*row, verb, value);
    if (eq == std::string::npos) return unknown_command(text);
    return apply_setting(text);
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {  // nlohmann's, bad_alloc: the command fails, not the window
    return verb + ": " + e.what();
  }
}

const App::PanelRow* App::panel_for(const std::string& verb) const {
  const size_t dot = verb.find('.');
  if (dot == std::string::npos) return nullptr;
  const PanelRow* row = panels_.find(verb.substr(0, dot));
  if (!row || row->switches().empty()) return nullptr;
  return row;
}

std::string App::run_panel_switch(const PanelRow& row, const std::string& verb,
                                  const std::string& value) {
  const std::string key = verb.substr(verb.find('.') + 1);
  const auto result = runner_.result();
  return run_switch(panel_name(row.id), row.switches(), key, value, result.get());
}

bool App::reads_result(const std::string& verb) const {
  if (const Verb* v = verbs_.find(verb)) return v->reads_result;
  const size_t dot = verb.find('.');
  const PanelRow* row = dot == std::string::npos ? nullptr : panels_.find(verb.substr(0, dot));
  if (!row) return false;
  const auto table = row->switches();
  if (const PanelSwitch* s = find_switch(table, verb.substr(dot + 1))) return s->reads_result;
  return row->reads_result;
}

bool App::waits_for_layouts(const std::string& verb) const {
  const Verb* v = verbs_.find(verb);
  return v && v->waits_for_layouts;
}

std::string App::unknown_command(const std::string& text) const {
  std::vector<std::string> known = {"KEY=VALUE settings"};
  for (const Verb& verb : verbs_.entries()) known.push_back(verb.usage);
  for (const auto& [name, row] : panels_.items())
    if (!row.switches().empty()) known.push_back(name + ".*=");
  return "unknown command '" + text + "' (commands: " + join(known, ", ") + ")";
}

std::string App::open_scenario(const std::string& path) {
  if (path.empty()) return "scenario: give a scenario file (scenario=scenarios/interview.json)";
  auto scenario = std::make_shared<const workbench::Scenario>(workbench::load_scenario(path));
  if (scenario->is_trace()) {
    // A trace scenario opens its trace as open= does (a failed open keeps what was on screen),
    // then plays over it: the one Walkthrough, holding the trace its checks read.
    if (std::string error = open_trace(scenario->trace); !error.empty()) return error;
    if (!scenario->kernels.empty()) {  // its Nsight Compute export, beside the trace as kernels= puts it
      if (std::string error = open_kernels(scenario->kernels); !error.empty())
        return scenario->path + ": /kernels: " + error;
    }
    walkthrough_.emplace(std::move(scenario));
    walkthrough_->attach(trace_);
    walkthrough_->attach_kernels(kernel_level_);
    bottom_split_ = std::min(bottom_split_, 0.45f);
    return enter_step(0);
  }
  walkthrough_.emplace(std::move(scenario));
  // Room for the step's text and checks: the bottom-right grows, the trace gives a little.
  bottom_split_ = std::min(bottom_split_, 0.45f);
  trace_height_ = std::min(trace_height_, 0.2f);
  selection_ = {};
  return enter_step(0);
}

// A failed open keeps what was on screen: the error is the command's.
std::string App::open_trace(const std::string& path) {
  try {
    show_trace(workbench::open_path(path));  // a folder: the ranks of one job
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string App::open_kernels(const std::string& path) {
  if (!trace_) return "kernels: open a GPU trace first (open=TRACE), then its Nsight Compute export";
  try {
    kernel_level_ = workbench::open_kernel_level(path, *trace_);
  } catch (const Error& e) {
    return e.what();
  }
  // The kernel level is read in the op table: it gets the room the trace and compare had.
  recording_trace_height_ = std::min(recording_trace_height_, 0.35f);
  bottom_split_ = std::max(bottom_split_, 0.7f);
  return "";
}

void App::show_trace(std::shared_ptr<const workbench::OpenedTrace> trace) {
  trace_ = std::move(trace);
  kernel_level_.reset();  // another trace: its kernels are not the export's
  walkthrough_.reset();
  selection_ = {};
  // The trace takes the top row's place (draw_panels: a recording has no graph).
}

std::string App::open_model(const std::string& path) {
  if (path.empty()) {  // the dialog
    open_dialog.show();
    return "";
  }
  settings_.model = path;
  settings_.dims.clear();
  settings_.inputs.clear();
  selection_ = {};
  request_run();
  return "";
}

// File > Export: the result on screen (or the GPU trace opened) written by the CLI's writers.
std::string App::export_to(const std::string& kind, const std::string& path) {
  if (path.empty()) {
    export_outcome_.clear();
    export_dialog.show(kind);
    return "";
  }
  const std::string verb = "export." + kind;
  const auto result = runner_.result();
  std::string error;
  try {
    if (kind == "svg") {
      if (trace_) throw Error("a recorded trace has no graph to draw");
      if (!result) throw Error("no result yet");
      workbench::write_graph_svg(path, workbench::graph_svg(*result));
      export_outcome_ = "wrote " + path + " (the graph of " + result->settings.model + ")";
      return "";
    }
    // The recording: the opened GPU trace's, else the run's recorded runs.
    const profiler::Recording* recording = trace_ ? &trace_->recording : nullptr;
    if (!recording) {
      if (!result) throw Error("no result yet");
      if (!result->measured()) throw Error("the run is still being measured");
      if (!result->recording || result->recording->run_count() == 0)
        throw Error("no recorded runs (profile_runs=0): set profile runs in Run > Options");
      recording = &*result->recording;
    }
    if (kind == "trace") {
      profiler::write_chrome_trace(*recording, path);
      export_outcome_ = "wrote " + path + " (Chrome trace: ui.perfetto.dev or chrome://tracing)";
      return "";
    }
    if (trace_) throw Error("a recorded trace has no run analysis: export.trace writes its trace");
    if (!result->analysis) throw Error("the run has no analysis");
    workbench::write_profile_folder(path, *recording, *result->analysis);
    export_outcome_ = "wrote " + path +
                      "/: profile.json, analysis.json, trace.json, trace.nvtxt, trace.sqlite";
    return "";
  } catch (const Error& e) {
    error = verb + ": " + e.what();
  }
  export_outcome_ = error;
  return error;
}

std::string App::select(const std::string& node) {
  const workbench::Runner::Snapshot snap = runner_.snapshot();
  const auto& result = snap.result;
  // A refused model's outline, which the graph panel draws while its refusal is the error.
  const workbench::RefusedModel* refused = snap.error ? snap.error->refused.get() : nullptr;
  if (!node.empty() && (result || refused)) {
    // Any graph of the run: the one that ran, the model as loaded and every pass's snapshot
    // (the graph panel's before/after views show nodes a later pass removed).
    std::vector<std::string> names;
    auto add = [&](const ir::Graph& g) {
      for (const auto& n : g.nodes) names.push_back(n.name);
    };
    if (result) {
      add(result->graph());
      if (result->model) add(result->model->graph);
      for (const auto& e : result->optimized->log.entries) {
        if (e.snapshot) add(*e.snapshot);
      }
    }
    if (refused) add(refused->drawing->model->graph);
    if (std::find(names.begin(), names.end(), node) == names.end()) {
      std::string msg = "select: no node '" + node + "' in the graph";
      if (auto near = closest(node, names); !near.empty()) msg += " (did you mean '" + near + "'?)";
      return msg;
    }
  }
  selection_.node = node;
  return "";
}

std::string App::focus_panel(const std::string& name) {
  const PanelRow* row = panels_.find(name);
  if (!row)
    return "panel: unknown panel '" + name + "' (valid: " + join(panels_.names(), ", ") + ")";
  focus_ = row->id;
  bring_tab_ = focus_;  // a panel that shares its place with others comes to the front
  return "";
}

std::string App::apply_setting(const std::string& text) {
  workbench::Settings next = settings_;
  workbench::apply(next, text, "command");
  if (next.model != settings_.model) selection_ = {};
  const bool changed = !(next == settings_);
  settings_ = std::move(next);
  if (changed) request_run();
  return "";
}

void App::script(const std::string& text) {
  for (auto& c : split_commands(text)) queue_.push_back(std::move(c));
}

void App::drop_files(const std::vector<std::string>& paths) {
  if (!paths.empty()) command("open=" + paths.back());
}

std::vector<App::KeyBinding> App::key_bindings() const {
  std::vector<KeyBinding> keys = {
      {"Space", GLFW_KEY_SPACE, false, "run", "runs the current settings again"},
      {"Esc", GLFW_KEY_ESCAPE, false, "select=", "clears the selection"},
      {"Ctrl+O", GLFW_KEY_O, true, "open", "File > Open: a model, a scenario or a GPU trace"},
      {"F1", GLFW_KEY_F1, false, "help", "Help > Keys and commands (this list)"},
  };
  int key = GLFW_KEY_1;
  for (const auto& [name, row] : panels_.items()) {
    if (key > GLFW_KEY_9) break;
    keys.push_back({std::string(1, static_cast<char>('1' + (key - GLFW_KEY_1))), key, false,
                    "panel=" + name, "focuses the " + name + " panel"});
    ++key;
  }
  return keys;
}

std::vector<std::string> App::panel_switch_names() const {
  std::vector<std::string> names;
  for (const auto& [name, row] : panels_.items())
    for (const PanelSwitch& s : row.switches()) names.push_back(name + "." + s.key);
  return names;
}

std::vector<HelpEntry> App::help_entries() const {
  std::vector<HelpEntry> out;
  for (const KeyBinding& k : key_bindings())
    out.push_back({"Keys", k.keys, k.help + " (" + k.command + ")"});
  for (const Verb& v : verbs_.entries()) out.push_back({"Commands", v.usage, v.help});
  const std::string settings = "Settings: KEY=VALUE re-runs the pipeline (also flags, JSON)";
  for (const workbench::SettingField& f : workbench::setting_fields()) {
    std::string help = f.help + ". Value: " + f.hint;
    if (!f.sub_hint.empty()) help += "; one at a time: " + f.sub_hint;
    if (f.kind == workbench::SettingField::Kind::Switches) help += " (" + join(f.choices, ", ") + ")";
    out.push_back({settings, f.key + "=", help + (f.flag == "model" ? "" : " [" + f.flag + "]")});
  }
  for (const auto& [name, row] : panels_.items()) {
    for (const PanelSwitch& s : row.switches()) {
      const std::string values = s.values.empty() ? s.values_help : join(s.values, " | ");
      out.push_back({"Panel switches", name + "." + s.key + "=" + values, s.help});
    }
  }
  return out;
}

void App::handle_keys() {
  ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput) return;
  for (const KeyBinding& k : key_bindings())
    if (k.ctrl == io.KeyCtrl && ImGui::IsKeyPressed(k.key, false)) command(k.command);
}

void App::draw_menu() {
  if (!ImGui::BeginMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Open model, scenario or trace...", "Ctrl+O")) clicked_.push_back("open");
    if (ImGui::MenuItem("Save settings as scenario...")) save_dialog_ = true;
    if (ImGui::BeginMenu("Export")) {
      if (ImGui::MenuItem("trace.json (Chrome trace)...")) clicked_.push_back("export.trace");
      if (ImGui::MenuItem("Graph as SVG...")) clicked_.push_back("export.svg");
      if (ImGui::MenuItem("Profile folder...")) clicked_.push_back("export.profile");
      ImGui::EndMenu();
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Pin baseline")) clicked_.push_back("pin");
    if (ImGui::MenuItem("Clear baseline")) clicked_.push_back("unpin");
    ImGui::Separator();
    if (ImGui::MenuItem("Quit")) clicked_.push_back("quit");
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Run")) {
    if (ImGui::MenuItem("Run again", "Space")) clicked_.push_back("run");
    if (ImGui::MenuItem("Options: model, warmup, profile runs...")) clicked_.push_back("options");
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    int shortcut = 1;
    for (const auto& [name, row] : panels_.items()) {
      const std::string keys = shortcut <= 9 ? std::to_string(shortcut) : "";
      if (ImGui::MenuItem(name.c_str(), keys.c_str(), focus_ == row.id)) clicked_.push_back("panel=" + name);
      ++shortcut;
    }
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    if (ImGui::MenuItem("Keys and commands", "F1")) clicked_.push_back("help");
    ImGui::Separator();
    // The keys, straight from the table handle_keys() dispatches on.
    for (const KeyBinding& k : key_bindings())
      if (ImGui::MenuItem(k.help.c_str(), k.keys.c_str())) clicked_.push_back(k.command);
    ImGui::EndMenu();
  }
  ImGui::EndMenuBar();
}

void App::draw_open_dialog() {
  open_dialog.draw([this](const std::string& c) { clicked_.push_back(c); });
}

void App::draw_save_dialog() {
  if (save_dialog_) {
    ImGui::OpenPopup("Save scenario");
    save_dialog_ = false;
  }
  if (!ImGui::BeginPopupModal("Save scenario", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
  ImGui::TextUnformatted("Writes the current settings as a scenario file (one step; add steps by hand).");
  char buf[1024];
  std::snprintf(buf, sizeof buf, "%s", save_path_.c_str());
  if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
  const bool enter = ImGui::InputText("path", buf, sizeof buf, ImGuiInputTextFlags_EnterReturnsTrue);
  save_path_ = buf;
  if (ImGui::Button("Save") || enter) {
    clicked_.push_back("save=" + save_path_);
    ImGui::CloseCurrentPopup();
  }
  ImGui::SameLine();
  if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
  ImGui::EndPopup();
}

void App::draw() {
  const workbench::Runner::Snapshot snap = runner_.snapshot();
  if (walkthrough_) walkthrough_->observe(snap.result);
  revert_failed_settings(snap);
  apply_look_at();
  const auto baseline = runner_.baseline();
  Frame frame{snap, settings_, baseline, selection_, focus_,
              [this](const std::string& c) { clicked_.push_back(c); }, playing(), &layouts_,
              trace_.get(), baseline_trace_.get(), kernel_level_.get()};
  drawn_result_ = snap.result;

  handle_keys();
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 0);
  ImGui::Begin("fusebox", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_MenuBar |
                   ImGuiWindowFlags_NoBackground |  // glClear paints it: one full-window blend less
                   ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoSavedSettings);
  ImGui::PopStyleVar();
  draw_menu();
  settings_bar.draw(frame);
  draw_error_banner(snap);
  draw_panels(frame);
  status.draw(frame, command_error_);
  draw_open_dialog();
  draw_save_dialog();
  export_dialog.draw([this](const std::string& c) { clicked_.push_back(c); }, export_outcome_);
  ImGui::End();
  run_options.draw(frame);
  help.draw(help.open ? help_entries() : std::vector<HelpEntry>{});  // the tables, when shown
  run_clicked_and_script();
}

// The panels in their rows, with the splits between them: passes | graph | arena, then the
// trace, then ops | the compare and walkthrough tabs.
void App::draw_panels(const Frame& frame) {
  const float gap = 6;
  const float status_h = ImGui::GetFrameHeightWithSpacing();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float body_h = std::max(100.0f, avail.y - status_h);
  const ImGuiWindowFlags child_flags = ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse;
  // A recorded trace has no graph, passes or arena: the window is the recording's, the trace
  // above the op table and compare panels, the top row's share given to the trace.
  if (frame.trace) {
    const float trace_h = std::floor(body_h * recording_trace_height_);
    const float bottom_h = std::max(40.0f, body_h - trace_h - gap);
    ImGui::BeginChild("trace", ImVec2(0, trace_h), true, child_flags);
    draw_place(Place::Middle, frame);
    ImGui::EndChild();
    splitter("##split_trace", false, &recording_trace_height_, body_h, gap, avail.x);
    recording_trace_height_ = std::clamp(recording_trace_height_, 0.15f, 0.9f);
    draw_bottom_row(frame, avail.x, bottom_h, gap);
    return;
  }
  const float top_h = std::floor(body_h * top_height_);
  const float trace_h = std::floor(body_h * trace_height_);
  const float bottom_h = std::max(40.0f, body_h - top_h - trace_h - 2 * gap);

  // Top row: passes | graph | arena.
  const float left_w = std::floor(avail.x * left_width_);
  const float right_w = std::floor(avail.x * right_width_);
  const float mid_w = std::max(40.0f, avail.x - left_w - right_w - 2 * gap);
  ImGui::BeginChild("passes", ImVec2(left_w, top_h), true);
  draw_place(Place::TopLeft, frame);
  ImGui::EndChild();
  ImGui::SameLine(0, 0);
  splitter("##split_left", true, &left_width_, avail.x, gap, top_h);
  ImGui::SameLine(0, 0);
  ImGui::BeginChild("graph", ImVec2(mid_w, top_h), true, child_flags);
  draw_place(Place::TopCenter, frame);
  ImGui::EndChild();
  ImGui::SameLine(0, 0);
  {
    // Dragging this split moves the arena's left edge: the arena grows as the graph shrinks.
    float mid_fraction = 1 - right_width_;
    splitter("##split_right", true, &mid_fraction, avail.x, gap, top_h);
    right_width_ = 1 - mid_fraction;
  }
  ImGui::SameLine(0, 0);
  ImGui::BeginChild("arena", ImVec2(0, top_h), true, child_flags);
  draw_place(Place::TopRight, frame);
  ImGui::EndChild();

  splitter("##split_top", false, &top_height_, body_h, gap, avail.x);
  ImGui::BeginChild("trace", ImVec2(0, trace_h), true, child_flags);
  draw_place(Place::Middle, frame);
  ImGui::EndChild();
  {
    float upper = top_height_ + trace_height_;
    splitter("##split_trace", false, &upper, body_h, gap, avail.x);
    trace_height_ = std::max(0.08f, upper - top_height_);
  }

  draw_bottom_row(frame, avail.x, bottom_h, gap);
}

// Bottom row: ops | compare and walkthrough.
void App::draw_bottom_row(const Frame& frame, float width, float height, float gap) {
  const float ops_w = std::floor(width * bottom_split_);
  ImGui::BeginChild("ops", ImVec2(ops_w, height), true);
  draw_place(Place::BottomLeft, frame);
  ImGui::EndChild();
  ImGui::SameLine(0, 0);
  splitter("##split_bottom", true, &bottom_split_, width, gap, height);
  ImGui::SameLine(0, 0);
  ImGui::BeginChild("compare", ImVec2(0, height), true);
  draw_place(Place::BottomRight, frame);
  ImGui::EndChild();
}

// The panels at one place: the one, or its tabs. The tab a command asked for comes forward;
// otherwise the first leads: the walkthrough's while a scenario plays (leads_while_playing),
// else the first row's (compare at the bottom right).
void App::draw_place(Place place, const Frame& frame) {
  std::vector<const PanelRow*> rows;
  for (const PanelRow& row : panels_.entries())
    if (row.place == place) rows.push_back(&row);
  if (rows.size() == 1) return rows.front()->draw(frame);
  if (walkthrough_)
    std::stable_partition(rows.begin(), rows.end(), [](const PanelRow* r) { return r->leads_while_playing; });
  ImGui::PushID(static_cast<int>(place));
  const bool open = ImGui::BeginTabBar("tabs");
  ImGui::PopID();
  if (!open) return;
  std::optional<PanelId> bring;
  auto here = [&](PanelId id) { return std::any_of(rows.begin(), rows.end(), [&](auto* r) { return r->id == id; }); };
  if (bring_tab_ && here(*bring_tab_)) bring = std::exchange(bring_tab_, std::nullopt);
  for (const PanelRow* row : rows) {
    const ImGuiTabItemFlags flags = bring == row->id ? ImGuiTabItemFlags_SetSelected : 0;
    if (ImGui::BeginTabItem(panel_name(row->id), nullptr, flags)) {
      row->draw(frame);
      ImGui::EndTabItem();
    }
  }
  ImGui::EndTabBar();
}

// What this frame's clicks asked for, then the next step of the script: a command that reads the
// result waits until the runs requested before it finished (busy from the moment of a request),
// and wait and screenshot also for the graph's layouts.
void App::run_clicked_and_script() {
  for (const std::string& c : std::exchange(clicked_, {})) command(c);
  if (queue_.empty() || screenshot_) return;
  const std::string& next = queue_.front();
  const std::string verb = trim(next.substr(0, next.find('=')));
  const bool waiting =
      reads_result(verb) && (runner_.snapshot().busy || (waits_for_layouts(verb) && !idle_drawing()));
  if (waiting) return;
  const std::string error = command(next);
  queue_.pop_front();
  if (!error.empty()) {
    script_error_ = error;
    queue_.clear();
  }
}

}  // namespace fusebox::ui
