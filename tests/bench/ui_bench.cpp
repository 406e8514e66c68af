// What a user of the window feels, measured in the real window (Xvfb + Mesa here):
//   flip:  from a pass flip on `transformer` (1 thread, default iterations) to the first frame
//          showing the new graph, and to the first frame showing its measured figures;
//          first = the settings never seen before, back = flipping back (caches answer);
//   pan:   frame time while panning the trace of `stack` (all recorded runs shown, zoomed 4x),
//          one pan step per frame.
//   fusebox_bench_ui [--reps N] [--frames N]      (needs a display: xvfb-run -a fusebox_bench_ui)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "app/ui/app.h"
#include "app/ui/window.h"
#include "ops/cpu/cpu_backend.h"

using namespace fusebox;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5))];
}

struct Bench {
  ui::Window& window;
  ui::App& app;

  void frame() {
    window.begin_frame();
    app.draw();
    window.end_frame();
  }
  void settle() {
    while (!app.idle()) frame();
    for (int i = 0; i < 3; ++i) frame();
  }
  // Whether the frame just drawn shows `passes_off`'s graph, laid out.
  bool graph_shown(const std::set<std::string>& passes_off) {
    auto r = app.runner().result();
    if (!r || r->settings.passes_off != passes_off || app.graph.drawn.layout_pending) return false;
    const auto& g = r->graph();
    return app.graph.drawn.boxes == g.nodes.size() + g.inputs.size() + g.outputs.size();
  }
  bool measured_shown(const std::set<std::string>& passes_off) {
    auto r = app.runner().result();
    return graph_shown(passes_off) && r->measured() && !app.runner().snapshot().busy;
  }
};

}  // namespace

int main(int argc, char** argv) {
  int reps = 10, frames = 300;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--frames") && i + 1 < argc) frames = std::max(10, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: fusebox_bench_ui [--reps N] [--frames N]\n");
      return 2;
    }
  }
  if (auto why = ui::Window::why_no_display()) {
    std::fprintf(stderr, "fusebox_bench_ui: %s (run it under xvfb-run -a)\n", why->c_str());
    return 2;
  }
  cpu::register_backend();
  ui::Window window("fusebox bench", 1600, 1000);

  {
    workbench::Settings s;  // the defaults: transformer, 1 thread, 10 warm-up, 100 calls, 10 recorded
    ui::App app(s);
    Bench b{window, app};
    b.settle();
    std::vector<double> idle_frame;
    for (int i = 0; i < 30; ++i) {
      const auto t0 = Clock::now();
      b.frame();
      idle_frame.push_back(ms_since(t0));
    }
    std::vector<double> empty_frame;  // the floor: clearing and presenting the window
    for (int i = 0; i < 30; ++i) {
      const auto t0 = Clock::now();
      window.begin_frame();
      window.end_frame();
      empty_frame.push_back(ms_since(t0));
    }
    b.frame();
    std::printf("one frame of transformer, nothing running: median %.2f ms, %d vertices (an empty frame: %.2f ms)\n",
                percentile(idle_frame, 0.5), ImGui::GetDrawData()->TotalVtxCount, percentile(empty_frame, 0.5));
    std::vector<double> first_graph, back_graph, first_figures, back_figures;
    for (int rep = 0; rep < reps; ++rep) {
      // Each rep flips a pass whose graph is new to the caches (a different seed makes the
      // settings new), then flips back.
      for (const bool back : {false, true}) {
        const std::string cmd = back ? "passes.fuse_patterns=on" : "passes.fuse_patterns=off";
        if (!back) {
          app.command("seed=" + std::to_string(100 + rep));
          b.settle();
        }
        const auto want = app.settings().passes_off.empty() ? std::set<std::string>{"fuse_patterns"}
                                                            : std::set<std::string>{};
        const auto t0 = Clock::now();
        app.command(cmd);
        double graph_ms = -1;
        while (true) {
          b.frame();
          if (graph_ms < 0 && b.graph_shown(want)) graph_ms = ms_since(t0);
          if (b.measured_shown(want)) break;
        }
        (back ? back_graph : first_graph).push_back(graph_ms);
        (back ? back_figures : first_figures).push_back(ms_since(t0));
      }
    }
    std::printf("flip transformer pass fuse_patterns, threads 1, iters %d (median of %d, ms):\n", s.iters, reps);
    std::printf("  new graph on screen:       first %7.1f   back %7.1f\n", percentile(first_graph, 0.5),
                percentile(back_graph, 0.5));
    std::printf("  measured figures on screen: first %7.1f   back %7.1f\n", percentile(first_figures, 0.5),
                percentile(back_figures, 0.5));
  }

  {
    workbench::Settings s;
    s.model = "stack";
    ui::App app(s);
    Bench b{window, app};
    b.settle();
    app.command("trace.run=all; trace.zoom=4");
    b.settle();
    std::vector<double> ms, draw_ms;
    size_t spans = 0;
    for (int i = 0; i < frames; ++i) {
      // Back and forth across the recording.
      app.command(std::string("trace.pan=") + ((i / 40) % 2 ? "-0.05" : "0.05"));
      const auto t0 = Clock::now();
      window.begin_frame();
      const auto t1 = Clock::now();
      app.draw();
      draw_ms.push_back(ms_since(t1));
      window.end_frame();
      ms.push_back(ms_since(t0));
      spans += app.trace.drawn.spans;
    }
    std::printf("pan stack trace (all %lld recorded runs, zoom 4x), %d frames: median %.2f ms, p90 %.2f ms, "
                "max %.2f ms (of which the panels' ImGui calls: median %.2f ms); %zu spans drawn per "
                "frame on average\n",
                static_cast<long long>(app.runner().result()->recording->run_count()), frames,
                percentile(ms, 0.5), percentile(ms, 0.9), percentile(ms, 1.0), percentile(draw_ms, 0.5),
                spans / frames);
  }
  return 0;
}
