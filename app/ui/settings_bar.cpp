#include "app/ui/settings_bar.h"

#include <imgui.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "app/ui/widgets.h"
#include "app/workbench/opened_trace.h"
#include "app/workbench/settings.h"
#include "core/backend/backend.h"
#include "core/models/builtin_models.h"
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

// A combo over the choices of the setting `key` (the field table's names); `unavailable` says
// why a choice cannot be picked here ("" when it can).
void field_combo(const Frame& frame, const char* label, const char* key, const std::string& current,
                 const std::function<std::string(const std::string&)>& unavailable,
                 const std::string& help, float width) {
  std::vector<std::pair<std::string, std::string>> values;
  for (const auto& name : workbench::setting_field(key).choices)
    values.emplace_back(name, unavailable ? unavailable(name) : "");
  combo(frame, label, key, current, values, help, width);
}

// An integer setting `key` in the field's range: a slider over min..suggested_max when the field
// suggests a span (ctrl+click types any value the field allows), else a box to type into. The
// value sent is brought into the field's range.
void integer_setting(const Frame& frame, const char* label, const char* key, int current,
                     const std::string& help, float width) {
  const workbench::SettingField field = workbench::setting_field(key);
  ImGui::SetNextItemWidth(width);
  int value = current;
  const bool changed =
      field.suggested_max
          ? ImGui::SliderInt(label, &value, static_cast<int>(field.min.value_or(0)),
                             static_cast<int>(*field.suggested_max))
          : ImGui::InputInt(label, &value, 0, 0, ImGuiInputTextFlags_EnterReturnsTrue);
  const int64_t sent = field.clamp(value);
  if (changed && sent != current) frame.command(std::string(key) + "=" + std::to_string(sent));
  item_tooltip(help);
}

}  // namespace

// With a recorded trace open nothing runs: the bar offers what applies to a recording (open
// another, pin it to compare) and the way back to the model, instead of backend, executor,
// threads and planner.
void SettingsBar::draw_for_trace(const Frame& frame) {
  if (ImGui::Button("Open...")) frame.command("open");
  item_tooltip("Open another trace, a folder of one job's rank traces, a model or a scenario (Ctrl+O).");
  ImGui::SameLine();
  if (ImGui::Button("pin baseline")) frame.command("pin");
  item_tooltip("Keep this trace as the baseline: open another and the compare panel sets the two side by side.");
  if (frame.baseline_trace) {
    ImGui::SameLine();
    if (ImGui::Button("unpin")) frame.command("unpin");
    ImGui::SameLine();
    ImGui::TextDisabled("baseline: %s", frame.baseline_trace->path.c_str());
  }
  ImGui::SameLine();
  if (ImGui::Button(("back to " + frame.settings.model).c_str())) frame.command("run");
  item_tooltip("Leave the trace and run the model with the current settings (space).");
  ImGui::SameLine();
  ImGui::TextDisabled("recorded trace: %s", frame.trace->path.c_str());
  drawn_for_trace = true;
}

void SettingsBar::draw(const Frame& frame) {
  drawn_for_trace = false;
  if (frame.trace) return draw_for_trace(frame);
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
  if (ImGui::Button("options")) frame.command("options");
  item_tooltip("Run > Options: the model's own options (seq, batch, d, ...; a .onnx file's dynamic "
               "dims) and how it is measured (warmup, iters, profile runs, seed).");

  ImGui::SameLine();
  const auto status = exec::BackendRegistry::instance().status();
  field_combo(frame, "backend", "backend", s.backend,
              [&](const std::string& name) {
                for (const auto& [known, reason] : status)
                  if (known == name) return reason;
                return std::string("not registered");
              },
              "The device the kernels run on. A backend that cannot run here is listed with the "
              "reason.",
              em * 5);

  ImGui::SameLine();
  field_combo(frame, "executor", "executor", s.executor, nullptr,
        "eager: allocates every output per op and dispatches by op name, like PyTorch eager.\n"
        "interpreted: walks the graph over the planned arena, looking kernels up per op.\n"
        "compiled: a flat list of prepared kernel calls over the arena, no lookups.",
        em * 7);

  ImGui::SameLine();
  integer_setting(frame, "threads", "threads", s.threads,
                  "Intra-op threads for the kernels and BLAS (OpenMP), applied to each run on the "
                  "thread that runs it. Only the measuring is redone. Ctrl+click to type a number "
                  "beyond this machine's cores.",
                  em * 5);

  // The CPU's instruction-set level: the levels this CPU lacks are listed greyed out, saying so.
  ImGui::SameLine();
  const std::vector<std::string> runs = cpu::isa_levels();
  const workbench::RunResult* shown = frame.result();
  const std::string isa_text =
      s.isa == "auto" && shown && !shown->isa.empty() ? "auto (" + shown->isa + ")" : s.isa;
  field_combo(frame, "isa", "isa", isa_text,
              [&](const std::string& level) {
                const bool here = level == "auto" ||
                                  std::find(runs.begin(), runs.end(), level) != runs.end();
                return here ? std::string() : "this CPU cannot run " + level;
              },
        "The CPU kernels' instruction-set level: avx512 (16 floats a register), avx2 (8), or "
        "portable (plain C++, OpenBLAS for GEMMs). auto takes the best this CPU runs. Kernels are "
        "prepared again (weights repacked); the op table and the roofline follow the level.",
        em * 7.5f);

  ImGui::SameLine();
  field_combo(frame, "planner", "planner", s.planner, nullptr,
        "How buffers are placed in the arena: naive gives every tensor its own bytes; the others "
        "reuse memory whose tensor is dead; best tries them all and keeps the smallest arena.",
        em * 8);

  ImGui::SameLine();
  integer_setting(frame, "iters", "iters", s.iters,
                  "Measured calls per run (after the warm-up); the latency is their median.",
                  em * 4);

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
