// Backend plugins without a GPU: the core's loader through every answer (fake plugins built for
// the test), the registry loading a plugin only when asked, the real CUDA plugin explaining why it
// cannot run here in one exact sentence, and nothing but the plugin linking CUDA.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include <algorithm>

#include "core/backend/plugin_abi.h"
#include "core/base/error.h"
#include "core/backend/backend.h"
#include "core/backend/plugin.h"
#include "tests/support/temp_dir.h"

namespace fusebox::exec {
namespace {

TEST(PluginLoader, EachWayItFailsIsOneSentence) {
  PluginProbe p = probe_backend_plugin("/nonexistent/libfusebox_cuda.so");
  EXPECT_FALSE(p.available);
  EXPECT_EQ(p.reason, "cannot load the plugin /nonexistent/libfusebox_cuda.so: /nonexistent/libfusebox_cuda.so: cannot "
                      "open shared object file: No such file or directory");

  p = probe_backend_plugin(FAKE_PLUGIN_NO_ENTRY);
  EXPECT_EQ(p.reason, std::string(FAKE_PLUGIN_NO_ENTRY) +
                          " is not a fusebox backend plugin: it has no fusebox_plugin_open entry point");

  p = probe_backend_plugin(FAKE_PLUGIN_WRONG_ABI);
  EXPECT_EQ(p.reason, std::string(FAKE_PLUGIN_WRONG_ABI) +
                          " speaks plugin ABI version 99, this fusebox speaks " +
                              std::to_string(FUSEBOX_PLUGIN_ABI_VERSION) + ": rebuild the plugin with this fusebox");

  p = probe_backend_plugin(FAKE_PLUGIN_OFF);
  EXPECT_FALSE(p.available);
  EXPECT_EQ(p.reason, "the fake device is switched off");

  p = probe_backend_plugin(FAKE_PLUGIN_AVAILABLE);
  EXPECT_TRUE(p.available);
  EXPECT_EQ(p.reason, "");
  EXPECT_EQ(p.description, "a fake device");
}

TEST(PluginLoader, APluginsBackendIsMadeByTheSameCopyOfCore) {
  const PluginProbe p = probe_backend_plugin(FAKE_PLUGIN_AVAILABLE);
  ASSERT_TRUE(p.available) << p.reason;
  ASSERT_TRUE(p.create);
  std::unique_ptr<Backend> b = p.create();
  ASSERT_TRUE(b);
  EXPECT_EQ(b->name(), "fake");
  // The plugin registered a backend from inside: the host's registry has it, so there is one.
  const auto known = BackendRegistry::instance().known();
  EXPECT_NE(std::find(known.begin(), known.end(), "made_by_fake_plugin"), known.end());
  b.reset();

  setenv("FAKE_PLUGIN_FAIL", "1", 1);
  try {
    p.create();
    ADD_FAILURE() << "made a backend the plugin refused";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              std::string(FAKE_PLUGIN_AVAILABLE) + " could not make its backend: the fake device is out of memory");
  }
  unsetenv("FAKE_PLUGIN_FAIL");
}

TEST(PluginLoader, TheRegistryLoadsALazyBackendOnlyWhenAskedAndOnce) {
  BackendRegistry& r = BackendRegistry::instance();
  int loads = 0;
  r.add_lazy("lazy_test", [&] {
    ++loads;
    return LazyBackend{nullptr, "it is a test"};
  });
  const auto known = r.known();
  EXPECT_NE(std::find(known.begin(), known.end(), "lazy_test"), known.end());
  EXPECT_EQ(loads, 0) << "listing names loads nothing";
  bool found = false;
  for (const auto& [name, reason] : r.status()) {
    if (name == "lazy_test") {
      found = true;
      EXPECT_EQ(reason, "it is a test");
    }
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(loads, 1);
  try {
    r.create("lazy_test");
    ADD_FAILURE() << "created an unavailable backend";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "backend 'lazy_test' is unavailable: it is a test");
  }
  EXPECT_EQ(loads, 1) << "loaded once";
}

#ifdef FUSEBOX_CUDA_PLUGIN
std::string run(const std::string& cmd, int* status = nullptr) {
  FILE* pipe = popen((cmd + " 2>&1").c_str(), "r");
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  const int rc = pclose(pipe);
  if (status) *status = WEXITSTATUS(rc);
  return out;
}

bool driver_present() {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h) dlclose(h);
  return h != nullptr;
}

TEST(CudaPlugin, WithoutADriverItSaysSoInOneSentence) {
  if (driver_present()) GTEST_SKIP() << "an NVIDIA driver is installed here: the no-driver sentence cannot be seen";
  const PluginProbe p = probe_backend_plugin(FUSEBOX_CUDA_PLUGIN);
  EXPECT_FALSE(p.available);
  EXPECT_EQ(p.reason,
            "no NVIDIA driver: libcuda.so.1 was not found (the CUDA toolkit alone is not enough; install the NVIDIA "
            "driver)");
}

TEST(CudaPlugin, TheCliRefusesCudaWithTheReasonAndExit2) {
  if (driver_present()) GTEST_SKIP() << "an NVIDIA driver is installed here";
  int status = 0;
  std::string out = run(std::string(FUSEBOX_CLI) + " run mlp --iters 1 --warmup 0 --backend cuda", &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_EQ(out, "fusebox: error: backend 'cuda' is unavailable: no NVIDIA driver: libcuda.so.1 was not found (the "
                 "CUDA toolkit alone is not enough; install the NVIDIA driver)\n");
}

TEST(CudaPlugin, TheToolkitsStubLibraryIsNamedAsSuch) {
  const std::string stub = std::string(CUDA_STUB_DIR) + "/libcuda.so";
  if (!std::ifstream(stub)) GTEST_SKIP() << "no stub library at " << stub;
  const std::string dir = fusebox::test::process_temp_dir() + "/cuda_stub";
  run("mkdir -p " + dir + " && ln -sf " + stub + " " + dir + "/libcuda.so.1");
  int status = 0;
  const std::string out = run("env LD_LIBRARY_PATH=" + dir + " " + std::string(FUSEBOX_CLI) +
                                  " run mlp --iters 1 --warmup 0 --backend cuda",
                              &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_EQ(out, "fusebox: error: backend 'cuda' is unavailable: " + dir +
                     "/libcuda.so.1 is the CUDA toolkit's stub library, not a driver: install the NVIDIA driver, or "
                     "take the toolkit's stubs folder off the library path\n");
}

TEST(CudaPlugin, OnlyThePluginLinksCudaAndItExportsOnlyItsEntryPoint) {
  // What a user runs is the static launcher (app/launcher): no dynamic section, no library.
  for (const std::string& launcher : {std::string(FUSEBOX_CLI), std::string(FUSEBOX_UI_BIN)}) {
    if (launcher.empty()) continue;
    EXPECT_EQ(run("readelf -d " + launcher).find("NEEDED"), std::string::npos) << launcher << " loads libraries";
  }
  for (const std::string& bin : {std::string(FUSEBOX_CLI_MAIN), std::string(FUSEBOX_UI_MAIN)}) {
    if (bin.empty()) continue;
    const std::string d = run("readelf -d " + bin);
    ASSERT_NE(d.find("NEEDED"), std::string::npos) << d;
    for (const char* lib : {"libcuda", "libcudart", "libcublas", "libcupti", "libnvToolsExt"}) {
      EXPECT_EQ(d.find(lib), std::string::npos) << bin << " links " << lib;
    }
  }
  const std::string d = run("readelf -d " + std::string(FUSEBOX_CUDA_PLUGIN));
  EXPECT_EQ(d.find("libcuda.so"), std::string::npos) << "the driver is dlopen'ed, never linked:\n" << d;
  EXPECT_EQ(d.find("libcudart"), std::string::npos) << "the runtime is linked statically:\n" << d;
  EXPECT_NE(d.find("Library runpath: [$ORIGIN"), std::string::npos) << d;
  // One copy of core: the plugin links the executables' libfusebox_core.so, and cuBLAS
  // dynamically; CUPTI is dlopened when a run is recorded, so a machine whose CUPTI is only under
  // extras/CUPTI still loads the plugin (and is told tracing is unavailable).
  for (const char* lib : {"libfusebox_core.so", "libcublas.so", "libcublasLt.so"})
    EXPECT_NE(d.find(lib), std::string::npos) << "the plugin should link " << lib << ":\n" << d;
  EXPECT_EQ(d.find("libcupti"), std::string::npos) << "CUPTI is dlopened, never linked:\n" << d;
  EXPECT_EQ(run("nm -D --defined-only " + std::string(FUSEBOX_CUDA_PLUGIN) + " | awk '{print $3}'"),
            "fusebox_plugin_open\n");
}
#endif

}  // namespace
}  // namespace fusebox::exec
