#include "core/backend/plugin.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>

#include "core/base/error.h"
#include "core/base/strings.h"
#include "core/backend/backend.h"
#include "core/backend/plugin_abi.h"

namespace fusebox::exec {
namespace {

namespace fs = std::filesystem;

std::string file_name(const std::string& backend) { return "libfusebox_" + backend + ".so"; }

std::string executable_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "" : exe.parent_path().string();
}

}  // namespace

std::vector<std::string> plugin_search_paths(const std::string& backend) {
  std::vector<std::string> out;
  if (const char* dir = std::getenv("FUSEBOX_PLUGIN_DIR"); dir && *dir) out.push_back(std::string(dir) + "/" + file_name(backend));
#ifdef FUSEBOX_PLUGIN_BUILD_DIR
  out.push_back(std::string(FUSEBOX_PLUGIN_BUILD_DIR) + "/" + backend + "/" + file_name(backend));
#endif
  if (const std::string exe = executable_dir(); !exe.empty()) {
    out.push_back((fs::path(exe).parent_path() / "lib" / "fusebox" / file_name(backend)).string());
  }
  return out;
}

std::string find_backend_plugin(const std::string& backend) {
  for (const auto& p : plugin_search_paths(backend)) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p;
  }
  return "";
}

PluginProbe probe_backend_plugin(const std::string& path) {
  PluginProbe out;
  // RTLD_LOCAL: the plugin's symbols (and the CUDA runtime linked into it) stay its own. The
  // handle is kept open for the life of the process, as the plugin's code may be called later.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    out.reason = "cannot load the plugin " + path + ": " + (why ? why : "dlopen failed");
    return out;
  }
  auto open = reinterpret_cast<FuseboxPluginOpen>(dlsym(handle, FUSEBOX_PLUGIN_ENTRY));
  if (!open) {
    out.reason = path + " is not a fusebox backend plugin: it has no " FUSEBOX_PLUGIN_ENTRY " entry point";
    return out;
  }
  FuseboxPluginInfo info{};
  const int32_t rc = open(FUSEBOX_PLUGIN_ABI_VERSION, &info);
  info.reason[sizeof info.reason - 1] = 0;
  info.description[sizeof info.description - 1] = 0;
  if (rc != 0 || info.abi_version != FUSEBOX_PLUGIN_ABI_VERSION) {
    out.reason = path + " speaks plugin ABI version " + std::to_string(info.abi_version) + ", this fusebox speaks " +
                 std::to_string(FUSEBOX_PLUGIN_ABI_VERSION) + ": rebuild the plugin with this fusebox";
    return out;
  }
  out.available = info.available == 1;
  out.reason = out.available ? "" : info.reason;
  out.description = info.description;
  if (!out.available && out.reason.empty()) out.reason = path + " says the backend is unavailable but not why";
  if (out.available && !info.create_backend) {
    out.available = false;
    out.reason = path + " says the device works but gives no backend (its create_backend is null)";
  }
  if (out.available) {
    const auto create = info.create_backend;
    out.create = [create, path]() -> std::unique_ptr<Backend> {
      char error[512] = {0};
      void* made = create(error, sizeof error);
      error[sizeof error - 1] = 0;
      if (!made) throw Error(path + " could not make its backend: " + (error[0] ? error : "it did not say why"));
      return std::unique_ptr<Backend>(static_cast<Backend*>(made));
    };
  }
  return out;
}

void register_plugin_backends() {
  static std::once_flag once;
  std::call_once(once, [] {
    BackendRegistry::instance().add_lazy("cuda", [] {
      const std::string path = find_backend_plugin("cuda");
      if (path.empty()) {
        return LazyBackend{nullptr, "the CUDA plugin (libfusebox_cuda.so) was not built: configure with a CUDA "
                                    "toolkit installed (-DFUSEBOX_CUDA=ON); looked in " +
                                        join(plugin_search_paths("cuda"), ", ")};
      }
      const PluginProbe probe = probe_backend_plugin(path);
      if (!probe.available) return LazyBackend{nullptr, probe.reason};
      return LazyBackend{probe.create, ""};
    });
  });
}

}  // namespace fusebox::exec
