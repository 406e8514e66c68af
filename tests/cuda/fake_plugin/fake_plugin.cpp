// Stand-ins for a backend plugin, built three ways (tests/CMakeLists.txt) to drive the core's
// loader through each answer without CUDA: FAKE_ABI=<n> answers with that ABI version,
// FAKE_AVAILABLE says the device works, FAKE_NO_ENTRY exports no entry point.
#include <cstdio>
#include <cstring>

#include "core/exec/plugin_abi.h"

#ifndef FAKE_NO_ENTRY
extern "C" __attribute__((visibility("default"))) int32_t fusebox_plugin_open(uint32_t, FuseboxPluginInfo* info) {
  std::memset(info, 0, sizeof *info);
  info->abi_version = FAKE_ABI;
  std::snprintf(info->backend, sizeof info->backend, "cuda");
#ifdef FAKE_AVAILABLE
  info->available = 1;
  std::snprintf(info->description, sizeof info->description, "a fake device");
#else
  std::snprintf(info->reason, sizeof info->reason, "the fake device is switched off");
#endif
  return FAKE_ABI == FUSEBOX_PLUGIN_ABI_VERSION ? 0 : 1;
}
#else
extern "C" __attribute__((visibility("default"))) int not_the_entry_point() { return 0; }
#endif
