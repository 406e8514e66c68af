#pragma once
// The backends the front ends offer, registered in one place: the CPU backend (always there) and
// the plugin backends (known by name, dlopen'ed only when something asks for one). Every entry
// point that names a backend goes through register_backends() first; it is idempotent and
// thread-safe.
#include "core/backend/backend.h"

namespace fusebox::workbench {

void register_backends();

// The backend the ONNX importer folds shape arithmetic through (the CPU one, built once).
const exec::Backend& constant_evaluator();

}  // namespace fusebox::workbench
