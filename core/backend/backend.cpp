#include "core/backend/backend.h"

#include <algorithm>
#include <utility>

#include "core/base/error.h"
#include "core/base/strings.h"

namespace fusebox::exec {

bool Backend::supports(const std::string& op, const std::vector<ir::TensorType>& /*inputs*/) const {
  return kernels().contains(op);
}

size_t Backend::scratch_bytes(const KernelContext& ctx) const {
  const KernelDef* k = kernels().find(ctx.node.op);
  if (!k) throw Error("backend '" + name() + "' has no kernel for op '" + ctx.node.op + "'");
  return k->scratch ? k->scratch(ctx) : ir::node_scratch_bytes(ctx.node, ctx.inputs, ctx.outputs);
}

CompileOptions Backend::resolve(const CompileOptions& options) const {
  CompileOptions out = options;
  const std::vector<std::string>& levels = caps_.isa_levels;
  if (levels.empty()) {
    if (!options.isa.empty() && options.isa != "auto")
      throw Error("backend '" + name() + "' has one instruction-set level: isa must be auto, got '" + options.isa +
                  "'");
    out.isa = "";
  } else if (options.isa == "auto" || options.isa.empty()) {
    out.isa = levels.front();
  } else if (std::find(levels.begin(), levels.end(), options.isa) == levels.end()) {
    throw Error("isa '" + options.isa + "': backend '" + name() + "' runs " + join(levels, " | ") + " here");
  }
  if (options.gemm != "auto")
    throw Error("gemm '" + options.gemm + "': backend '" + name() +
                "' has one GEMM path (its own kernels), so gemm must be auto");
  const std::vector<std::string>& offered = caps_.precisions;
  if (std::find(offered.begin(), offered.end(), options.precision) != offered.end()) return out;
  if (options.precision == "tf32")
    throw Error("backend '" + name() + "' has no TF32 math: precision=tf32 is for GPU tensor cores (the cuda "
                "backend); '" + name() + "' computes every GEMM in fp32, so use precision=fp32");
  throw Error("precision must be " + join(offered, " or ") + " on backend '" + name() + "', got '" +
              options.precision + "'");
}

void Backend::begin_capture() {
  throw Error("backend '" + name() + "' cannot capture a run (it has no graph capture)");
}

std::unique_ptr<CapturedRun> Backend::end_capture() {
  throw Error("backend '" + name() + "' cannot capture a run (it has no graph capture)");
}

BackendRegistry& BackendRegistry::instance() {
  static BackendRegistry registry;
  return registry;
}

void BackendRegistry::add(const std::string& name, BackendFactory factory) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  entries_.add(name, Entry{std::move(factory), "", nullptr});
}

void BackendRegistry::add_unavailable(const std::string& name, const std::string& reason) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  entries_.add(name, Entry{nullptr, reason, nullptr});
}

void BackendRegistry::add_lazy(const std::string& name, std::function<LazyBackend()> load) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  entries_.add(name, Entry{nullptr, "", std::move(load)});
}

void BackendRegistry::resolve() const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  for (Entry& e : entries_.entries()) {
    if (!e.load) continue;
    auto load = std::exchange(e.load, nullptr);
    LazyBackend got = load();
    e.factory = std::move(got.factory);
    e.unavailable_reason = e.factory ? "" : got.unavailable_reason;
  }
}

std::unique_ptr<Backend> BackendRegistry::create(const std::string& name) const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  resolve();
  const Entry* e = entries_.find(name);
  if (!e) throw Error("unknown backend '" + name + "' (known: " + join(known(), ", ") + ")");
  if (!e->factory) throw Error("backend '" + name + "' is unavailable: " + e->unavailable_reason);
  return e->factory();
}

std::vector<std::string> BackendRegistry::names() const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  resolve();
  std::vector<std::string> out;
  for (const auto& [n, e] : entries_.items())
    if (e.factory) out.push_back(n);
  return out;
}

std::vector<std::string> BackendRegistry::known() const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  return entries_.names();
}

std::vector<std::pair<std::string, std::string>> BackendRegistry::status() const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  resolve();
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [n, e] : entries_.items()) out.push_back({n, e.unavailable_reason});
  return out;
}

}  // namespace fusebox::exec
