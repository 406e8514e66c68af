#include <gtest/gtest.h>

#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "profiler/fma_peak.h"
#include "profiler/roofline.h"
#include "profiler_test_util.h"

using namespace fusebox;
using namespace fusebox::profiler;

namespace {
RooflineOptions quick() {
  RooflineOptions o;
  o.gemm_n = 64;
  o.bandwidth_min_bytes = 4 << 20;
  o.dispatch_chain = 32;
  o.seconds_per_measure = 0.01;
  o.max_threads = 1;
  return o;
}
}  // namespace

TEST(Roofline, MeasuresThroughTheBackend) {
  ptest::register_cpu();
  Roofline r = measure_roofline(quick());
  EXPECT_GT(r.peak_gflops(1), 0.1);
  EXPECT_GT(r.bandwidth_gbs, 0.1);
  EXPECT_GT(r.dispatch_floor_ns, 0);
  EXPECT_LT(r.dispatch_floor_ns, 1e6);
  EXPECT_EQ(r.key, machine_key("cpu"));
  EXPECT_NE(r.to_text().find("GFLOP/s"), std::string::npos);
  // The FMA loop is the physical limit: positive, plausible for one core of any CPU we run on
  // (a scalar FMA at 1 GHz is 2 GFLOP/s; two 512-bit FMA ports at 5 GHz are 320), and not
  // below what our own GEMM reaches, give or take the noise of a 10 ms measurement.
  EXPECT_GT(r.fma_peak_gflops(1), 1.0);
  EXPECT_LT(r.fma_peak_gflops(1), 400.0);
  EXPECT_GT(r.fma_peak_gflops(1), 0.8 * r.peak_gflops(1));
  EXPECT_FALSE(r.fma_isa.empty());
  EXPECT_NE(r.to_text().find("of the FMA peak"), std::string::npos);
  RooflineOptions bad = quick();
  bad.backend = "no-such-backend";
  EXPECT_THROW(measure_roofline(bad), Error);
}

TEST(Roofline, CachedPerMachineAndReplacedAtomically) {
  ptest::register_cpu();
  std::string path = ptest::temp_dir("roof") + "/fusebox/machine.json";
  Roofline first = machine_roofline(false, quick(), path);
  Roofline again = machine_roofline(false, quick(), path);  // from the cache: identical
  EXPECT_EQ(first.to_json(), again.to_json());
  auto cache = nlohmann::json::parse(read_file(path));
  EXPECT_TRUE(cache["machines"].contains(machine_key("cpu")));
  // Another machine's entry survives a refresh of ours.
  cache["machines"]["Other CPU|64 threads|cpu"] = first.to_json();
  write_file_atomically(path, cache.dump());
  Roofline fresh = machine_roofline(true, quick(), path);
  auto after = nlohmann::json::parse(read_file(path));
  EXPECT_TRUE(after["machines"].contains("Other CPU|64 threads|cpu"));
  EXPECT_NE(after["machines"][machine_key("cpu")]["measured_at"], nullptr);
  // An entry cached before the FMA peak existed is measured again.
  cache = nlohmann::json::parse(read_file(path));
  cache["machines"][machine_key("cpu")].erase("fma_gflops");
  write_file_atomically(path, cache.dump());
  EXPECT_FALSE(machine_roofline(false, quick(), path).fma_gflops.empty());
  // A damaged cache is re-measured and replaced.
  write_file_atomically(path, std::string("{not json"));
  EXPECT_GT(machine_roofline(false, quick(), path).bandwidth_gbs, 0);
  EXPECT_NO_THROW(nlohmann::json::parse(read_file(path)));
  (void)fresh;
}

TEST(Roofline, XdgCacheHomeDecidesThePath) {
  const char* old = std::getenv("XDG_CACHE_HOME");
  std::string saved = old ? old : "";
  setenv("XDG_CACHE_HOME", "/tmp/xdg-test", 1);
  EXPECT_EQ(machine_cache_path(), "/tmp/xdg-test/fusebox/machine.json");
  if (old) setenv("XDG_CACHE_HOME", saved.c_str(), 1); else unsetenv("XDG_CACHE_HOME");
}

TEST(FmaPeak, EveryThreadCountGivesAFigure) {
  const FmaPeak one = measure_fma_peak(1, 0.02);
  const FmaPeak two = measure_fma_peak(2, 0.02);
  EXPECT_GT(one.gflops, 1.0);
  EXPECT_GT(two.gflops, 1.0);  // how much more depends on what else runs: the README quotes it
  EXPECT_EQ(one.chains, 16);
  EXPECT_STREQ(one.isa, two.isa);
}
