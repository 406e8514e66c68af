#include "app/workbench/backends.h"

#include <memory>
#include <mutex>

#include "core/backend/plugin.h"
#include "ops/cpu/cpu_backend.h"

namespace fusebox::workbench {

void register_backends() {
  static std::once_flag once;
  std::call_once(once, [] {
    cpu::register_backend();
    exec::register_plugin_backends();
  });
}

const exec::Backend& constant_evaluator() {
  static const std::unique_ptr<exec::Backend> evaluator = cpu::make_backend();
  return *evaluator;
}

}  // namespace fusebox::workbench
