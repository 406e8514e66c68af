#pragma once
// Backend plugins: libfusebox_<backend>.so, loaded with dlopen only when someone asks about the
// backend (picks it, or lists backends with their status), probed through the C ABI in
// plugin_abi.h. Every way it can fail is one sentence: the plugin was not built, it cannot be
// loaded, it has no entry point, it speaks another ABI version, or the plugin's own reason (no
// driver, a stub driver, a driver older than the runtime, no device).
//
//   exec::register_plugin_backends();   // at start-up: "cuda" is known, nothing is loaded
//   BackendRegistry::instance().status() // loads and probes it: {"cuda", "no NVIDIA driver: ..."}
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fusebox::exec {

class Backend;

struct PluginProbe {
  bool available = false;
  std::string reason;       // why not, when !available
  std::string description;  // what the plugin found
  // Makes the plugin's backend (set when available). Throws fusebox::Error with the plugin's
  // sentence when making it fails (e.g. the device ran out of memory).
  std::function<std::unique_ptr<Backend>()> create;
};

// Loads the plugin at `path` and asks it. Never throws: failures are the reason.
PluginProbe probe_backend_plugin(const std::string& path);

// Where libfusebox_<backend>.so is looked for, in order: $FUSEBOX_PLUGIN_DIR, the build tree
// it was built in, and lib/fusebox next to the executable's folder.
std::vector<std::string> plugin_search_paths(const std::string& backend);
// The first of those that exists, or "".
std::string find_backend_plugin(const std::string& backend);

// Registers each plugin backend (today: "cuda") in BackendRegistry, to be loaded on first use.
// Idempotent.
void register_plugin_backends();

}  // namespace fusebox::exec
