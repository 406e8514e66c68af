#pragma once
// The workbench window's contents: the Runner, the settings the user asked for, the shared
// selection, the panels and the splits between them, and the one command function every user
// action goes through (mouse, keyboard, menus, drag-and-drop, `--do`, the tests).
//
// Commands ("; " between several):
//   KEY=VALUE          a setting (`fusebox settings` lists them): passes.fuse_patterns=off,
//                      planner=first_fit, model=stack, threads=2 ... : re-runs the pipeline
//   open=PATH          loads a model file or a scenario (.json) (drag-and-drop); open alone
//                      shows File > Open
//   browse=DIR         shows File > Open at folder DIR
//   scenario=PATH      loads a scenario and enters its first step
//   step=N             enters step N of the scenario (0-based): its settings, then its look_at
//   save=PATH          writes the current settings as a one-step scenario (File > Save)
//   select=NODE        selects a node in every panel; select= clears
//   kernels=PATH       opens an Nsight Compute export beside the open trace (also a second open=
//                      of a .csv export or a folder of them): kernel rows get their limiter
//   kernel=NAME        selects a trace kernel (by name): the op table shows its ncu figures
//   panel=NAME         focuses a panel: graph, arena, trace, ops, compare, passes, walkthrough,
//                      details (keys 1-8)
//   run                runs the current settings again (space)
//   pin | unpin        pins the current result (or the open trace) as the compare baseline, or
//                      drops it
//   graph.K=V, arena.K=V, trace.K=V, ops.K=V
//                      a panel's own switches (graph.view=fuse_patterns:before, trace.run=median)
//
// The verbs are one table (App::verbs_: usage, help, whether a script waits for the run first,
// handler) and the panels another (App::panels_: id, and the panel's switch table or command),
// so dispatch, the script's waiting, the View menu, the keys 1-8 and the unknown-command message
// all come from them: a new verb is one row, a new panel its file, its row and its draw call.
//   wait               in a script: waits for the runs requested so far
//   screenshot=PATH    in a script: saves the window as PNG once the runs before it finished
//   quit               closes the window
//   options            shows Run > Options: the model's options (seq, dims, ...), warmup,
//                      iters, profile runs and seed, each edit a settings command
//   export.trace=PATH  writes the recorded runs as a Chrome trace (trace.json)
//   export.svg=PATH    writes the graph as SVG, as `fusebox graph --out` does
//   export.profile=DIR writes a profile folder, as `fusebox profile --out` does
//                      (export.KIND alone asks for the path: File > Export)
//   help               shows Help > Keys and commands (F1): this list, made from the tables
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/ui/arena_panel.h"
#include "app/ui/compare_panel.h"
#include "app/ui/details_panel.h"
#include "app/ui/export_dialog.h"
#include "app/ui/graph_panel.h"
#include "app/ui/help.h"
#include "app/ui/op_table_panel.h"
#include "app/ui/open_dialog.h"
#include "app/ui/panel.h"
#include "app/ui/panel_switch.h"
#include "app/ui/passes_panel.h"
#include "app/ui/run_options.h"
#include "app/ui/settings_bar.h"
#include "app/ui/status_line.h"
#include "app/ui/trace_panel.h"
#include "app/ui/walkthrough_panel.h"
#include "app/workbench/graph_layout.h"
#include "app/workbench/kernel_level.h"
#include "app/workbench/runner.h"
#include "app/workbench/walkthrough.h"
#include "core/base/registry.h"

namespace fusebox::ui {

class App {
 public:
  // The GPU trace opened instead of a model (open=FILE), or null.
  const workbench::OpenedTrace* opened_trace() const { return trace_.get(); }
  // The Nsight Compute export opened beside it (kernels=PATH), or null.
  const workbench::KernelLevel* kernel_level() const { return kernel_level_.get(); }
  // Starts running `settings`, or, with a scenario file, enters its first step (a scenario that
  // fails to load leaves `settings` running and the error on the status line).
  explicit App(const workbench::Settings& settings, workbench::Pipeline::RooflineSource roofline = {},
               const std::string& scenario = "");

  // Runs one command now (see the list above; `wait` and `screenshot` only make sense in a
  // script). Returns "" or the error, which the status line also shows.
  std::string command(const std::string& text);
  // Queues commands ("a; b; c") to run in order, one per frame: a command that reads the result
  // (select, panel switches, pin, screenshot, wait) waits until the runs requested before it
  // finished, so a script sees each step's result. Errors stop the script and are returned by
  // script_error().
  void script(const std::string& text);
  // Shows a trace opened already (what `open=PATH` does after opening it): main opens the file
  // on the command line first, to exit 2 on a bad one, and hands it over rather than read a
  // large recording twice.
  void show_trace(std::shared_ptr<const workbench::OpenedTrace> trace);
  bool script_done() const { return queue_.empty(); }
  const std::string& script_error() const { return script_error_; }

  // One frame's ImGui calls: the whole window. Runs the commands the frame's clicks produced and
  // then the next scripted one. `fb_scale` is unused by the panels (ImGui coordinates throughout).
  void draw();

  // A screenshot the script asked for: the main loop saves the window to this path once the
  // frames after it are drawn, then calls screenshot_taken(); the script waits until then.
  const std::optional<std::string>& pending_screenshot() const { return screenshot_; }
  void screenshot_taken() { screenshot_.reset(); }
  bool quit_requested() const { return quit_; }
  // "fusebox - transformer": the window's title, naming the model (or trace) on screen.
  std::string title() const;
  // The failed run's message as the banner above the panels drew it ("" when none).
  const std::string& error_banner() const { return banner_; }
  // Files dropped on the window: opened as models (the last one wins).
  void drop_files(const std::vector<std::string>& paths);

  // Nothing left to wait for: no script pending, the runner idle, the last frame drew its latest
  // result and no graph layout is running (scripts, screenshots and the tests wait on this).
  bool idle() const;
  // The graph layouts the graph panel asked for (busy while one runs).
  const workbench::LayoutCache& layouts() const { return layouts_; }

  // A key the window answers: the command it runs. handle_keys() dispatches on this table and
  // the Help lists it.
  struct KeyBinding {
    std::string keys;  // "Space", "Ctrl+O", "3"
    int key = 0;       // GLFW_KEY_*
    bool ctrl = false;
    std::string command;  // "run", "panel=trace"
    std::string help;
  };
  std::vector<KeyBinding> key_bindings() const;
  // Help > Keys and commands: the key bindings, the verbs, the settings (the field table) and
  // every panel's switches, one entry each.
  std::vector<HelpEntry> help_entries() const;
  // What dispatch knows, for tests that hold the Help to it: the verbs ("open", "step", ...)
  // and the panels' switches ("graph.view", "trace.run", ...).
  std::vector<std::string> verb_names() const { return verbs_.names(); }
  std::vector<std::string> panel_switch_names() const;

  workbench::Runner& runner() { return runner_; }
  const workbench::Settings& settings() const { return settings_; }
  const Selection& selection() const { return selection_; }
  PanelId focus() const { return focus_; }
  const std::string& last_command_error() const { return command_error_; }
  // The scenario being played (scenario=, step=), or null.
  const workbench::Walkthrough* playing() const { return walkthrough_ ? &*walkthrough_ : nullptr; }

  // The panels (public: tests read their Drawn records).
  SettingsBar settings_bar;
  PassesPanel passes;
  GraphPanel graph;
  ArenaPanel arena;
  TracePanel trace;
  OpTablePanel ops;
  ComparePanel compare;
  WalkthroughPanel walkthrough;
  DetailsPanel details;
  StatusLine status;
  HelpWindow help;
  RunOptions run_options;
  OpenDialog open_dialog;
  ExportDialog export_dialog;

 private:
  // A command verb: "step" in "step=2".
  struct Verb {
    std::string usage;  // "step=", "run": how the unknown-command message lists it
    std::string help;
    bool reads_result = false;       // a script runs it once the runs requested before it finished
    bool waits_for_layouts = false;  // ... and the graph's layouts (wait, screenshot)
    std::function<std::string(const std::string& value)> run;  // "" or the error
  };
  // Where a panel sits: the top row (passes | graph | arena), the trace across, then the bottom
  // row (ops | tabs). Panels that share a place are its tabs.
  enum class Place : uint8_t { TopLeft, TopCenter, TopRight, Middle, BottomLeft, BottomRight };
  // A panel: its id (its name is panel_name(id)), where it sits, how it draws, and its
  // "<name>.<key>=<value>" switches as a PanelSwitch table; an empty table: its prefix is a
  // settings key's (passes.fuse_patterns=off).
  struct PanelRow {
    PanelId id;
    Place place;
    std::function<void(const Frame&)> draw;
    std::function<std::vector<PanelSwitch>()> switches;  // "<panel>.<key>=<value>"
    bool reads_result = true;  // for "<panel>.*" verbs its table lacks (each switch says its own)
    bool leads_while_playing = false;  // its tab comes first while a scenario plays
  };
  Registry<Verb> make_verbs();
  Registry<PanelRow> make_panels();

  std::string run_command(const std::string& text);
  const PanelRow* panel_for(const std::string& verb) const;  // "graph.view" -> graph's row
  std::string run_panel_switch(const PanelRow& row, const std::string& verb, const std::string& value);
  bool reads_result(const std::string& verb) const;
  bool waits_for_layouts(const std::string& verb) const;
  std::string unknown_command(const std::string& text) const;
  // The verbs' handlers that are more than a line.
  std::string open_scenario(const std::string& path);
  std::string open_model(const std::string& path);
  std::string open_trace(const std::string& path);
  std::string open_kernels(const std::string& path);
  std::string select(const std::string& node);
  std::string focus_panel(const std::string& name);
  std::string apply_setting(const std::string& text);
  std::string export_to(const std::string& kind, const std::string& path);

  bool idle_drawing() const;  // idle() but for the script
  void request_run();
  void handle_keys();
  void draw_menu();
  void draw_open_dialog();
  void draw_save_dialog();
  void draw_error_banner(const workbench::Runner::Snapshot& snap);
  void revert_failed_settings(const workbench::Runner::Snapshot& snap);
  void draw_bottom_row(const Frame& frame, float width, float height, float gap);
  void draw_panels(const Frame& frame);
  void draw_place(Place place, const Frame& frame);
  void run_clicked_and_script();
  std::string enter_step(size_t step);
  void apply_look_at();

  Registry<Verb> verbs_;
  Registry<PanelRow> panels_;
  workbench::Runner runner_;
  std::optional<workbench::Walkthrough> walkthrough_;
  std::shared_ptr<const workbench::OpenedTrace> trace_;  // a GPU trace opened instead of a model
  std::shared_ptr<const workbench::OpenedTrace> baseline_trace_;  // a trace pinned to compare with
  std::shared_ptr<const workbench::KernelLevel> kernel_level_;  // an ncu export beside trace_, or null
  workbench::LayoutCache layouts_;  // the graph panel's layouts, running or done
  std::shared_ptr<const workbench::RunResult> drawn_result_;  // the result the last frame drew
  std::string banner_;
  std::shared_ptr<const workbench::RunError> seen_error_;  // the last failed run handled
  workbench::Settings settings_;
  Selection selection_;
  PanelId focus_ = PanelId::Graph;
  std::string command_error_;
  std::deque<std::string> queue_;
  std::string script_error_;
  std::vector<std::string> clicked_;  // commands the current frame's panels issued
  std::optional<std::string> screenshot_;
  bool quit_ = false;
  bool save_dialog_ = false;
  std::string save_path_ = "my_scenario.json";
  std::string export_outcome_;  // the last export's "wrote ..." or error, for File > Export
  bool look_at_pending_ = false;  // select what the step points at once its result is in
  int look_at_gap_tries_ = 0;     // a trace step's gap: frames waited for the trace panel's gaps
  std::optional<PanelId> bring_tab_;  // a tab to bring forward on the next frame

  // The splits, as fractions of the window (dragged with the mouse).
  float left_width_ = 0.17f;   // passes column
  float right_width_ = 0.36f;  // arena column
  float top_height_ = 0.48f;   // graph row
  float recording_trace_height_ = 0.58f;  // a recorded trace's layout: the trace, then ops | compare
  float trace_height_ = 0.26f; // trace row
  float bottom_split_ = 0.58f; // op table vs compare
};

}  // namespace fusebox::ui
