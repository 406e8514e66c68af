// fusebox-ui: the workbench. Opens a window with the settings bar, passes, graph, arena, trace,
// op table and compare panels over one model, every switch live. Without a display it says so
// in one sentence and prints the CLI's report instead.
//
//   fusebox-ui                                  the transformer block
//   fusebox-ui stack --planner naive            any builtin model or .onnx file, any setting
//   fusebox-ui mlp --do "passes.fuse_patterns=off; select=Gemm_0; panel=arena"
//   fusebox-ui transformer --screenshot view.png --frames 3
//   fusebox-ui scenarios/interview.json          a scenario: the walkthrough plays its steps
//   fusebox-ui trace.json.gz | report.sqlite     a GPU trace (PyTorch profiler, Nsight Systems)
#include <GLFW/glfw3.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <new>
#include <thread>

#include "app/ui/app.h"
#include "app/ui/window.h"
#include "app/workbench/backends.h"
#include "app/workbench/opened_trace.h"
#include "app/workbench/pipeline.h"
#include "app/workbench/report.h"
#include "app/workbench/scenario.h"
#include "core/base/address_space.h"
#include "core/base/error.h"
#include "core/base/huge_pages.h"
#include "core/base/utf8.h"

namespace {

using namespace fusebox;

// Before any shared library's constructor (core/base/address_space.h says why).
void preinit(int, char** argv, char** envp) {
  check_address_space("fusebox-ui");
  use_huge_pages(argv, envp);  // core/base/huge_pages.h: re-executes once
}
[[gnu::used, gnu::section(".preinit_array")]] void (*preinit_entry)(int, char**, char**) = &preinit;

// With no display: the report `fusebox run` prints for the same settings, or for a scenario
// what `fusebox check` prints.
int headless(const workbench::Settings& settings, const std::string& scenario,
             const std::string& why) {
  std::cout << "fusebox-ui: " << why << "; printing the report instead.\n\n";
  workbench::Pipeline pipeline;
  if (!scenario.empty()) {
    const workbench::Scenario sc = workbench::load_scenario(scenario);
    std::cout << workbench::run_scenario(sc, pipeline).to_text();
    return 0;
  }
  auto result = pipeline.run(settings);
  std::cout << workbench::report_text(*result);
  return 0;
}

int run_window(const workbench::Settings& settings, const std::string& scenario,
               std::shared_ptr<const workbench::OpenedTrace> trace, const std::string& script,
               const std::string& screenshot, int frames, int width, int height) {
  ui::Window window("fusebox", width, height);
  ui::App app(settings, {}, scenario);
  if (trace) app.show_trace(std::move(trace));
  app.script(script);
  if (!screenshot.empty()) app.script("screenshot=" + screenshot + "; quit");
  const bool scripted = !script.empty() || !screenshot.empty();
  // Nobody holds the mouse in a scripted run: park the pointer in the bottom-right corner so no
  // hover effect (a lit split, a tooltip) shows up in the screenshots.
  if (scripted) glfwSetCursorPos(window.handle(), width - 1, height - 1);

  int shot_frames = 0;  // frames drawn since the screenshot was asked for
  auto shot_deadline = std::chrono::steady_clock::now();
  while (!window.should_close() && !app.quit_requested()) {
    const auto& shot = app.pending_screenshot();
    // Idle: wait for input (or the runner) instead of spinning; while anything moves, poll.
    const bool moving = !app.idle() || shot || ImGui::IsAnyMouseDown();
    window.begin_frame(moving ? 0 : 0.05);
    app.drop_files(window.take_dropped_files());
    app.draw();
    window.set_title(app.title());
    if (!shot) {
      window.end_frame();
      shot_frames = 0;
    } else {
      if (shot_frames++ == 0)
        shot_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      // The graph is laid out off the UI thread: wait for it, then let the panels fit.
      const bool ready = shot_frames >= frames && !app.layouts().busy();
      window.end_frame(ready);
      if (ready) {
        // A screenshot of a model that failed to load would show an empty or stale window. A
        // refused model's is taken (the graph panel draws its outline), and it still exits 2.
        if (const auto failed = app.runner().snapshot().error) {
          if (failed->refused) {
            window.save_png(*shot);
            std::cout << "fusebox-ui: wrote " << *shot << " (the refused model's outline)\n";
          }
          // The message names the model where it is a file (the pipeline sees to it).
          // A value from --settings is named by its file and JSON pointer, as the CLI does.
          const std::string& model = failed->settings.model;
          const std::string message = workbench::SettingsFlags::in_flag_terms(failed->message);
          const bool named = message.find(model) != std::string::npos;
          throw Error("screenshot " + *shot + (failed->refused ? ": " : ": not taken: ") +
                      (named ? "" : model + ": ") + message);
        }
        window.save_png(*shot);
        std::cout << "fusebox-ui: wrote " << *shot << "\n";
        app.screenshot_taken();
      } else if (std::chrono::steady_clock::now() > shot_deadline) {
        throw Error("screenshot " + *shot + ": the graph layout did not finish within 60 s");
      }
    }
    if (scripted && !app.script_error().empty()) {
      // A script is a command line: a bad command is bad input, exit 2 (the commands after it,
      // a `quit` among them, would never run, and the window would wait for nobody).
      std::cerr << "fusebox-ui: --do: " << valid_utf8(app.script_error()) << "\n";
      return 2;
    }
  }
  return 0;
}

// MODEL (a model, a scenario or a GPU trace) with the settings of the command line: the window,
// or without a display the report.
int open_and_run(const workbench::SettingsFlags& flags, std::string script,
                 const std::string& screenshot, int frames, const std::string& size) {
  int width = 0, height = 0;
  char x = 0;
  if (std::sscanf(size.c_str(), "%d%c%d", &width, &x, &height) != 3 || x != 'x' || width < 320 ||
      height < 240 || width > 16384 || height > 16384) {
    throw Error("--size: expected WIDTHxHEIGHT between 320x240 and 16384x16384, got \"" + size +
                "\"");
  }
  workbench::Settings settings = flags.resolve();
  // MODEL may be a GPU trace another tool recorded: the window opens it (headless: its
  // analysis, as `fusebox trace` prints it), or a scenario file: the window plays it (its
  // settings replace the flags').
  std::string scenario;
  std::shared_ptr<const workbench::OpenedTrace> trace;  // MODEL named a trace
  const std::string& m = settings.model;
  std::error_code ec;
  const bool folder = std::filesystem::is_directory(m, ec);  // the rank traces of one job
  if (folder || profiler::looks_like_trace(m) || m.ends_with(".json.gz") || m.ends_with(".sqlite")) {
    // A bad file: exit 2 now, naming it.
    trace = workbench::open_path(m);
    if (auto why = ui::Window::why_no_display(); why && screenshot.empty()) {
      std::cout << "fusebox-ui: " << *why << "; the trace's analysis instead:\n"
                << m << ": " << trace->summary() << "\n"
                << (trace->ranks ? profiler::rank_analysis_text(*trace->ranks) : "")
                << profiler::gpu_analysis_text(trace->analysis);
      return 0;
    }
    settings.model = workbench::Settings{}.model;
  } else if (settings.model.ends_with(".json")) {
    scenario = settings.model;
    workbench::load_scenario(scenario);  // a bad file: exit 2 now, naming it
    settings.model = workbench::Settings{}.model;
  }
  if (auto why = ui::Window::why_no_display()) {
    if (!screenshot.empty()) {
      std::cerr << "fusebox-ui: " << *why << ": cannot take a screenshot (run it under xvfb-run)\n";
      return 2;
    }
    return headless(settings, scenario, *why);
  }
  return run_window(settings, scenario, std::move(trace), script, screenshot, frames, width, height);
}

// The window's boundary: bad input, wherever it shows up, exits 2 with a message.
int guarded(const std::function<int()>& body) {
  try {
    return body();
  } catch (const Error& e) {
    // Values from --settings named by the file and JSON pointer, values from flags by the flag.
    std::cerr << "fusebox-ui: " << valid_utf8(workbench::SettingsFlags::in_flag_terms(e.what()))
              << "\n";
  } catch (const nlohmann::json::exception& e) {
    std::cerr << "fusebox-ui: invalid JSON: " << valid_utf8(e.what()) << "\n";
  } catch (const std::bad_alloc&) {
    std::cerr << "fusebox-ui: out of memory while opening or running the model\n";
  }
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace fusebox;
  std::signal(SIGXFSZ, SIG_IGN);  // past ulimit -f: a located EFBIG error, not a dead window
  workbench::register_backends();
  CLI::App cli(
      "fusebox-ui: the workbench. Flip passes, fusion patterns, the planner, the executor and the "
      "threads, and watch the graph, the arena and the trace change, measured.\n"
      "MODEL may also be a scenario file (scenarios/interview.json): the walkthrough plays it; or "
      "a GPU trace (PyTorch profiler .json/.json.gz, nsys .sqlite): the trace and op panels show "
      "it; or a folder of one job's rank traces: the ranks side by side.\n"
      "Keys: space re-runs, ctrl+o opens a model, scenario or trace, 1-8 focus graph, arena, "
      "trace, ops, compare, passes, walkthrough, details; esc clears the selection; F1 lists every key and "
      "command (Help > Keys and commands).");
  workbench::Settings defaults;
  workbench::SettingsFlags flags(&cli, {}, defaults, /*model_optional=*/true);
  std::string script, screenshot, size = "1600x1000";
  int frames = 3;
  cli.add_option(
      "--do", script,
      "commands to run once the window is up, as a user would: "
      "\"passes.fuse_patterns=off; select=Attention_0; panel=arena\" (see app/ui/app.h)");
  cli.add_option(
         "--screenshot", screenshot,
         "wait for the run (and the --do commands), render --frames frames, save the window "
         "as PNG and exit")
      ->type_name("FILE.png");
  cli.add_option("--frames", frames, "frames to render before the screenshot")
      ->check(CLI::Range(1, 1000));
  cli.add_option("--size", size, "window size")->type_name("WIDTHxHEIGHT");
  try {
    cli.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help
    return cli.exit(e);
  } catch (const CLI::ParseError& e) {
    cli.exit(e);  // prints the message; CLI11's own codes (105, 109, ...) are not ours
    return 2;
  }
  return guarded([&] { return open_and_run(flags, script, screenshot, frames, size); });
}
