// Stand-ins for a backend plugin, built three ways (tests/CMakeLists.txt) to drive the core's
// loader through each answer without CUDA: FAKE_ABI=<n> answers with that ABI version (without
// it, the host's),
// FAKE_AVAILABLE says the device works and makes a backend (linking libfusebox_core.so, as the real
// plugin does), FAKE_NO_ENTRY exports no entry point.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/backend/plugin_abi.h"

#ifndef FAKE_ABI
#define FAKE_ABI FUSEBOX_PLUGIN_ABI_VERSION
#endif

#ifdef FAKE_AVAILABLE
// The plugin's backend is the core's own stand-in, made by the one copy of core the host loaded:
// it registers "made_by_fake_plugin" in the registry, which the host must then see.
#include <memory>

#include "core/backend/backend.h"
namespace {
// A backend with no kernels on host memory: enough to be made, named and destroyed by the host.
class FakeBackend final : public fusebox::exec::Backend {
 public:
  std::string name() const override { return "fake"; }
  std::string description() const override { return "a fake device's backend"; }
  const fusebox::exec::KernelTable& kernels() const override { return table_; }
  bool supports(const std::string&, const std::vector<fusebox::ir::TensorType>&) const override { return false; }
  size_t alignment() const override { return 64; }
  size_t scratch_bytes(const fusebox::exec::KernelContext&) const override { return 0; }
  void bind_threads(int) const override {}
  std::shared_ptr<void> allocate(size_t) override { return nullptr; }
  std::shared_ptr<const void> upload(const fusebox::ir::Tensor&) override { return nullptr; }
  void copy_to_device(void*, const void*, size_t) override {}
  void copy_to_host(void*, const void*, size_t) override {}

 private:
  fusebox::exec::KernelTable table_;
};

void* create_backend(char* error, uint32_t error_size) {
  if (std::getenv("FAKE_PLUGIN_FAIL")) {
    std::snprintf(error, error_size, "the fake device is out of memory");
    return nullptr;
  }
  fusebox::exec::BackendRegistry::instance().add_unavailable("made_by_fake_plugin", "registered from inside the plugin");
  return new FakeBackend();
}
}  // namespace
#endif

#ifndef FAKE_NO_ENTRY
extern "C" __attribute__((visibility("default"))) int32_t fusebox_plugin_open(uint32_t, FuseboxPluginInfo* info) {
  std::memset(info, 0, sizeof *info);
  info->abi_version = FAKE_ABI;
  std::snprintf(info->backend, sizeof info->backend, "cuda");
#ifdef FAKE_AVAILABLE
  info->available = 1;
  info->create_backend = create_backend;
  std::snprintf(info->description, sizeof info->description, "a fake device");
#else
  std::snprintf(info->reason, sizeof info->reason, "the fake device is switched off");
#endif
  return FAKE_ABI == FUSEBOX_PLUGIN_ABI_VERSION ? 0 : 1;
}
#else
extern "C" __attribute__((visibility("default"))) int not_the_entry_point() { return 0; }
#endif
