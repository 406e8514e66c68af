// libfusebox_cuda.so's entry point (plugin ABI 6): says whether CUDA works here and, when it does not, why, in
// one sentence, checking in the order a user would fix things: is there a driver at all, is it
// the toolkit's stub, is it older than the runtime this plugin carries, what does the runtime
// say, and does a kernel actually run. Only this symbol is exported (hidden visibility); the
// CUDA runtime is linked in statically and the driver is only ever dlopen'ed, so loading this
// file needs only core and the toolkit's cuBLAS and CUPTI. When CUDA works, it hands out
// create_backend, which makes the backend (cuda_backend.h).
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <link.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>

#include "core/base/error.h"
#include "core/backend/plugin_abi.h"
#include "ops/cuda/cuda_backend.h"
#include "ops/cuda/probe.h"

namespace {

// The CUDA driver API's error for the toolkit's stub libcuda (cuda.h's CUDA_ERROR_STUB_LIBRARY);
// spelled out so this file does not include the driver API's header.
constexpr int kCudaErrorStubLibrary = 34;

void say(char* out, size_t size, const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::vsnprintf(out, size, format, args);
  va_end(args);
}

std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

// Where the dynamic loader found a library, for messages.
std::string loaded_path(void* handle) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name) return map->l_name;
  return "libcuda.so.1";
}

// The ABI's create_backend (since version 2): a new CudaBackend, or null with the reason.
void* create_backend(char* error, uint32_t error_size) {
  try {
    return fusebox::cuda::make_backend().release();
  } catch (const std::exception& e) {
    say(error, error_size, "%s", e.what());
  } catch (...) {
    say(error, error_size, "an unknown error");
  }
  return nullptr;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int32_t fusebox_plugin_open(uint32_t host_abi_version,
                                                                              FuseboxPluginInfo* info) {
  std::memset(info, 0, sizeof *info);
  info->abi_version = FUSEBOX_PLUGIN_ABI_VERSION;
  say(info->backend, sizeof info->backend, "cuda");
  if (host_abi_version != FUSEBOX_PLUGIN_ABI_VERSION) {
    say(info->reason, sizeof info->reason, "the plugin speaks ABI version %u, the host %u", FUSEBOX_PLUGIN_ABI_VERSION,
        host_abi_version);
    return 1;
  }
  const std::string runtime = version_text(CUDART_VERSION);

  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!driver) {
    say(info->reason, sizeof info->reason,
        "no NVIDIA driver: libcuda.so.1 was not found (the CUDA toolkit alone is not enough; install the NVIDIA "
        "driver)");
    return 0;
  }
  using CuInit = int (*)(unsigned);
  using CuDriverGetVersion = int (*)(int*);
  const auto cu_init = reinterpret_cast<CuInit>(dlsym(driver, "cuInit"));
  const auto cu_driver_get_version = reinterpret_cast<CuDriverGetVersion>(dlsym(driver, "cuDriverGetVersion"));
  const std::string where = loaded_path(driver);
  if (!cu_init || !cu_driver_get_version) {
    say(info->reason, sizeof info->reason, "%s is not an NVIDIA driver (it has no cuInit)", where.c_str());
    return 0;
  }
  const int init = cu_init(0);
  if (init == kCudaErrorStubLibrary) {
    say(info->reason, sizeof info->reason,
        "%s is the CUDA toolkit's stub library, not a driver: install the NVIDIA driver, or take the toolkit's "
        "stubs folder off the library path",
        where.c_str());
    return 0;
  }
  int driver_version = 0;
  if (cu_driver_get_version(&driver_version) == 0 && driver_version < CUDART_VERSION) {
    say(info->reason, sizeof info->reason,
        "the NVIDIA driver supports CUDA %s, older than the CUDA %s runtime this plugin was built with: update the "
        "driver",
        version_text(driver_version).c_str(), runtime.c_str());
    return 0;
  }
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    say(info->reason, sizeof info->reason, "cudaGetDeviceCount failed: %s (%s)", cudaGetErrorString(e),
        cudaGetErrorName(e));
    return 0;
  }
  if (count == 0) {
    say(info->reason, sizeof info->reason, "the NVIDIA driver %s sees no CUDA device",
        version_text(driver_version).c_str());
    return 0;
  }
  char device[128] = {0};
  char why[256] = {0};
  if (!fusebox::cuda::probe_device(device, sizeof device, why, sizeof why)) {
    say(info->reason, sizeof info->reason, "a probe kernel did not run on %s: %s", device[0] ? device : "device 0", why);
    return 0;
  }
  info->available = 1;
  info->create_backend = create_backend;
  say(info->description, sizeof info->description, "CUDA runtime %s, driver %s, %d device%s, device 0: %s",
      runtime.c_str(), version_text(driver_version).c_str(), count, count == 1 ? "" : "s", device);
  return 0;
}
