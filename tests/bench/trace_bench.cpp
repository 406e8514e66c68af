// What a trace the size of a real job costs (issue 36), on a trace file given (make one with
// tests/traces/make_big_trace.py OUT N: steps, annotations, aten ops, launches, kernels on 4
// streams, flows, an NCCL kernel a step):
//   import    events a second (the importer alone) and resident bytes an event (VmRSS after the
//             import less before it; VmHWM, the peak, too)
//   analysis  the GPU analysis on the imported recording
//   saved     fusebox trace --save's form: its size and the time to read it back
//   window    (with a display) open to first frame: the import and analysis again, the timeline
//             model and one frame of the trace panel; then frame times while panning and zooming
//             (median and worst), and of them the time building the frame (the panels' code,
//             before Dear ImGui's renderer and Mesa's rasterizer draw it)
//   fusebox_bench_trace FILE [--frames N] [--no-window]     (xvfb-run -a for the window)
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "app/ui/app.h"
#include "app/ui/window.h"
#include "app/workbench/opened_trace.h"
#include "core/base/huge_pages.h"
#include "ops/cpu/cpu_backend.h"
#include "profiler/gpu_analysis.h"
#include "profiler/saved_trace.h"
#include "profiler/trace_import.h"

using namespace fusebox;
using Clock = std::chrono::steady_clock;

namespace {

// As fusebox and fusebox-ui do (core/base/huge_pages.h); FUSEBOX_HUGE_PAGES=0 measures without.
void preinit(int, char** argv, char** envp) {
  fusebox::use_huge_pages(argv, envp);
}
[[gnu::used, gnu::section(".preinit_array")]] void (*preinit_entry)(int, char**, char**) = &preinit;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// A line of /proc/self/status ("VmRSS", "VmHWM") in bytes.
double status_bytes(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) return std::stod(line.substr(line.find(':') + 1)) * 1024.0;
  return 0;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5))];
}

}  // namespace

int main(int argc, char** argv) {
  std::string path;
  int frames = 120;
  bool window = true;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--frames") && i + 1 < argc) frames = std::max(10, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--no-window")) window = false;
    else if (argv[i][0] != '-' && path.empty()) path = argv[i];
    else {
      std::fprintf(stderr, "usage: fusebox_bench_trace FILE [--frames N] [--no-window]\n");
      return 2;
    }
  }
  if (path.empty()) {
    std::fprintf(stderr, "usage: fusebox_bench_trace FILE [--frames N] [--no-window]\n");
    return 2;
  }
  try {
    const double rss0 = status_bytes("VmRSS");
    profiler::ImportReport report;
    auto t0 = Clock::now();
    profiler::Recording r = profiler::import_trace(path, &report);
    const double import_s = seconds_since(t0);
    const double rss1 = status_bytes("VmRSS"), hwm1 = status_bytes("VmHWM");
    const double events = static_cast<double>(report.events);
    std::printf("%s: %s, %zu events\n", path.c_str(), report.format.c_str(), report.events);
    std::printf("  import    %.2f s: %.0f events/s; resident %.0f B/event after (%.0f MB), peak %.0f B/event (%.0f MB)\n",
                import_s, events / import_s, (rss1 - rss0) / events, (rss1 - rss0) / 1e6, (hwm1 - rss0) / events,
                (hwm1 - rss0) / 1e6);
    const std::string saved = (std::filesystem::temp_directory_path() / "fusebox_bench_trace.fbx").string();
    profiler::save_trace(r, report, saved);
    t0 = Clock::now();
    profiler::GpuAnalysis a = profiler::analyze_gpu_aligning(r, {});
    const double analysis_s = seconds_since(t0);
    std::printf("  analysis  %.2f s (%zu kernels); import + analysis %.0f events/s\n", analysis_s,
                static_cast<size_t>(a.kernel_count), events / (import_s + analysis_s));
    r = {};
    t0 = Clock::now();
    const profiler::Recording back = profiler::import_trace(saved, nullptr);
    const double saved_s = seconds_since(t0);
    std::printf("  saved     %.1f MB (%.1f B/event), read back in %.2f s (%.0f events/s)\n",
                static_cast<double>(std::filesystem::file_size(saved)) / 1e6,
                static_cast<double>(std::filesystem::file_size(saved)) / events, saved_s, events / saved_s);
    std::filesystem::remove(saved);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fusebox_bench_trace: %s\n", e.what());
    return 2;
  }

  if (!window) return 0;
  if (auto why = ui::Window::why_no_display()) {
    std::fprintf(stderr, "fusebox_bench_trace: no window: %s (run it under xvfb-run -a)\n", why->c_str());
    return 0;
  }
  cpu::register_backend();
  ui::Window win("fusebox bench", 1600, 1000);
  workbench::Settings s;
  s.model = "mlp";
  ui::App app(s);
  auto frame = [&] {
    win.begin_frame();
    app.draw();
    win.end_frame();
  };
  while (!app.idle()) frame();
  const auto t0 = Clock::now();
  const std::string error = app.command("open=" + path);
  if (!error.empty()) {
    std::fprintf(stderr, "fusebox_bench_trace: %s\n", error.c_str());
    return 2;
  }
  frame();
  const double first_s = seconds_since(t0);
  std::vector<double> ms, build_ms;  // a whole frame; its building (ours, before rendering)
  for (int i = 0; i < frames; ++i) {
    // Fit, zoom in 2x five times, pan across: what a look around the recording does.
    app.command(i % 12 == 0 ? "trace.zoom=fit" : (i % 12 < 6 ? "trace.zoom=2" : "trace.pan=0.2"));
    const auto f0 = Clock::now();
    win.begin_frame();
    app.draw();
    const auto f1 = Clock::now();
    win.end_frame();  // Dear ImGui's OpenGL renderer, Mesa's rasterizer, the swap
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - f0).count());
    build_ms.push_back(std::chrono::duration<double, std::milli>(f1 - f0).count());
  }
  std::printf("  window    open to first frame %.2f s; %d frames panning and zooming: median %.1f ms, p90 %.1f ms, worst %.1f ms\n",
              first_s, frames, percentile(ms, 0.5), percentile(ms, 0.9), percentile(ms, 1.0));
  std::printf(
      "            of which building the frame (the panels' drawing, before rendering): median "
      "%.1f ms, worst %.1f ms\n",
      percentile(build_ms, 0.5), percentile(build_ms, 1.0));
  return 0;
}
