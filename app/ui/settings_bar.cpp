#include "app/ui/settings_bar.h"

#include <imgui.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "app/ui/widgets.h"
#include "core/backend/backend.h"
#include "core/exec/executor.h"
#include "core/models/builtin_models.h"
#include "core/planner/plan.h"
#include "core/planner/strategies.h"
#include "ops/cpu/isa.h"

namespace fusebox::ui {
namespace {

// A combo over `values`; picking one sends "key=value". Values with a reason are listed greyed
// out with the reason as their tooltip.
void combo(const Frame& frame, const char* label, const char* key, const std::string& current,
           const std::vector<std::pair<std::string, std::string>>& values, const std::string& help,
           float width) {
  ImGui::SetNextItemWidth(width);
  if (ImGui::BeginCombo(label, current.c_str())) {
    for (const auto& [value, unavailable] : values) {
      ImGui::BeginDisabled(!unavailable.empty());
      const std::string shown = unavailable.empty() ? value : value + " (unavailable)";
      if (ImGui::Selectable(shown.c_str(), value == current) && value != current) {
        frame.command(std::string(key) + "=" + value);
      }
      ImGui::EndDisabled();
      item_tooltip(unavailable);
    }
    ImGui::EndCombo();
  }
  item_tooltip(help);
}

std::vector<std::pair<std::string, std::string>> available(const std::vector<std::string>& names) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& n : names) out.emplace_back(n, "");
  return out;
}

}  // namespace

void SettingsBar::draw(const Frame& frame) {
  const workbench::Settings& s = frame.settings;
  const float em = ImGui::GetFontSize();

  // Model: the builtin specs, or the file that is open.
  std::vector<std::pair<std::string, std::string>> models = available(models::builtin_model_names());
  if (std::none_of(models.begin(), models.end(), [&](const auto& m) { return m.first == s.model; })) {
    models.insert(models.begin(), {s.model, ""});
  }
  combo(frame, "##model", "model", s.model, models,
        "The model: a builtin one (built in code from primitive ops, seeded weights) or an .onnx "
        "file (File > Open, Ctrl+O, or drop it on the window).",
        em * 11);
  ImGui::SameLine();
  if (ImGui::Button("Open...")) frame.command("open");
  item_tooltip("Open an .onnx model (Ctrl+O); dropping a file on the window works too.");

  ImGui::SameLine();
  std::vector<std::pair<std::string, std::string>> backends;
  for (const auto& [name, reason] : exec::BackendRegistry::instance().status()) backends.emplace_back(name, reason);
  combo(frame, "backend", "backend", s.backend, backends,
        "The device the kernels run on. A backend that cannot run here is listed with the reason.",
        em * 5);

  ImGui::SameLine();
  combo(frame, "executor", "executor", s.executor, available(exec::executors().names()),
        "eager: allocates every output per op and dispatches by op name, like PyTorch eager.\n"
        "interpreted: walks the graph over the planned arena, looking kernels up per op.\n"
        "compiled: a flat list of prepared kernel calls over the arena, no lookups.",
        em * 7);

  ImGui::SameLine();
  ImGui::SetNextItemWidth(em * 5);
  int threads = s.threads;
  const int max_threads = std::max(2, static_cast<int>(std::thread::hardware_concurrency()));
  if (ImGui::SliderInt("threads", &threads, 1, max_threads) && threads != s.threads) {
    frame.command("threads=" + std::to_string(threads));
  }
  item_tooltip("Intra-op threads for the kernels and BLAS (OpenMP), applied to each run on the "
               "thread that runs it. Only the measuring is redone.");

  // The CPU's instruction-set level: the levels this CPU lacks are listed greyed out, saying so.
  ImGui::SameLine();
  const std::vector<std::string> runs = cpu::isa_levels();
  std::vector<std::pair<std::string, std::string>> levels = {{"auto", ""}};
  for (const std::string& level : cpu::isa_names()) {
    const bool here = std::find(runs.begin(), runs.end(), level) != runs.end();
    levels.emplace_back(level, here ? "" : "this CPU cannot run " + level);
  }
  const workbench::RunResult* shown = frame.result();
  const std::string isa_text =
      s.isa == "auto" && shown && !shown->isa.empty() ? "auto (" + shown->isa + ")" : s.isa;
  combo(frame, "isa", "isa", isa_text, levels,
        "The CPU kernels' instruction-set level: avx512 (16 floats a register), avx2 (8), or "
        "portable (plain C++, OpenBLAS for GEMMs). auto takes the best this CPU runs. Kernels are "
        "prepared again (weights repacked); the op table and the roofline follow the level.",
        em * 7.5f);

  ImGui::SameLine();
  std::vector<std::string> planners = planner::strategies().names();
  planners.emplace_back(planner::kBestPlanner);
  combo(frame, "planner", "planner", s.planner, available(planners),
        "How buffers are placed in the arena: naive gives every tensor its own bytes; the others "
        "reuse memory whose tensor is dead; best tries them all and keeps the smallest arena.",
        em * 8);

  ImGui::SameLine();
  ImGui::SetNextItemWidth(em * 4);
  int iters = s.iters;
  if (ImGui::InputInt("iters", &iters, 0, 0, ImGuiInputTextFlags_EnterReturnsTrue) && iters != s.iters) {
    frame.command("iters=" + std::to_string(std::clamp(iters, 1, 1000000)));
  }
  item_tooltip("Measured calls per run (after the warm-up); the latency is their median.");

  ImGui::SameLine();
  const bool busy = frame.snap.busy;
  if (ImGui::Button(busy ? "running..." : "run")) frame.command("run");
  item_tooltip("Run the current settings again (space). Only the measuring is redone.");
  ImGui::SameLine();
  ImGui::BeginDisabled(!frame.result());
  if (ImGui::Button("pin baseline")) frame.command("pin");
  ImGui::EndDisabled();
  item_tooltip("Keep the current result as the baseline the compare panel measures against.");
  if (frame.baseline) {
    ImGui::SameLine();
    ImGui::TextDisabled("baseline: %s", frame.baseline->settings.label().c_str());
    item_tooltip(frame.baseline->settings.label());
  }
}

}  // namespace fusebox::ui
