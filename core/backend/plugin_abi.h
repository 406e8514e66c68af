/* The backend plugin ABI: what a backend plugin (libfusebox_<name>.so, loaded with dlopen) and
 * the core agree on. Plain C, so the plugin shares no C++ types, allocators or registries with
 * the core: the core keeps the one set of registries and wraps what the plugin answers.
 *
 * A plugin exports one symbol, FUSEBOX_PLUGIN_ENTRY, of type FuseboxPluginOpen. The core calls
 * it with the ABI version it was built with; the plugin fills `info` and returns 0, or returns
 * non-zero when it cannot speak that version (and says so in info->reason).
 *
 * Version 1 answered availability only: whether the device works here and, when it does not, one
 * sentence saying why (no driver, the toolkit's stub library, a driver older than the runtime,
 * the runtime's own error).
 *
 * Version 2 adds the backend itself. The plugin links the same libfusebox_core.so as the host
 * (core is a shared library, so the dynamic loader hands the plugin the copy already loaded: one
 * set of registries), and create_backend returns a `fusebox::exec::Backend*` made with `new`,
 * owned by the caller. That pointer is the only C++ object that crosses; it is typed void* here
 * so this header stays C. create_backend is set only when available == 1.
 *
 * Version 3: the Backend class gained precision() / precisions() / select_precision (the TF32
 * GEMM setting): a plugin built against version 2's vtable would call the wrong functions.
 *
 * Version 4: KernelDef (the entries of a backend's kernel table, which the core reads) gained its
 * scratch function: a plugin built against version 3 would hand the core entries of another
 * size.
 *
 * Version 5: KernelTable became a Registry (entries in the order added, found through a name
 * index), and the CUDA plugin's own scratch map went into KernelDef::scratch: a plugin built
 * against version 4 would hand the core a table of another layout.
 *
 * Version 6: configuration as arguments, capabilities as data, profiling as one channel. The
 * Backend class lost select_isa / isa / select_precision / precision and the capability
 * functions (isa_levels, precisions, can_capture, wants_op_events, host_memory) for one
 * BackendCaps struct and resolve(CompileOptions), and take_activity / record_workers /
 * take_worker_spans for begin_recording / end_recording; kernels read the run's settings from
 * KernelContext::options. A new
 * setting is a field appended to CompileOptions, which a plugin only reads (the CUDA plugin keeps
 * the core's Backend::resolve, so it never copies one): it moves nothing an older plugin reads,
 * so settings stop changing this version. A plugin that overrides resolve() copies the struct
 * and is rebuilt with the core. */
#ifndef FUSEBOX_CORE_EXEC_PLUGIN_ABI_H_
#define FUSEBOX_CORE_EXEC_PLUGIN_ABI_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FUSEBOX_PLUGIN_ABI_VERSION 6u
#define FUSEBOX_PLUGIN_ENTRY "fusebox_plugin_open"

typedef struct FuseboxPluginInfo {
  uint32_t abi_version;   /* the version the plugin was built with */
  char backend[32];       /* "cuda" */
  int32_t available;      /* 1 when the device works here (version 1: a probe kernel ran) */
  char reason[512];       /* when not available: one sentence saying why */
  char description[256];  /* what was found: "CUDA runtime 13.0; driver 12.4; 1 device: NVIDIA H100" */
  /* Version 2: a new backend (a fusebox::exec::Backend*, owned by the caller), or null with
   * `error` filled (one sentence) when making it failed. Set only when available == 1. */
  void* (*create_backend)(char* error, uint32_t error_size);
} FuseboxPluginInfo;

typedef int32_t (*FuseboxPluginOpen)(uint32_t host_abi_version, FuseboxPluginInfo* info);

#ifdef __cplusplus
}
#endif

#endif /* FUSEBOX_CORE_EXEC_PLUGIN_ABI_H_ */
