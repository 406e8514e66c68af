#include "profiler/roofline.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <thread>

#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/machine.h"
#include "core/exec/session.h"
#include "core/ir/op_schema.h"
#include "profiler/fma_peak.h"
#include "profiler/recorder.h"

namespace fusebox::profiler {

namespace {

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

ir::Tensor filled(ir::Shape shape, uint64_t seed) {
  ir::Tensor t(ir::DType::f32, std::move(shape));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = u(rng);
  return t;
}

// Runs the session's graph repeatedly within `budget_s` (at least `min_runs` timed runs after
// two warm-up runs) and returns the fastest run in nanoseconds.
double fastest_run_ns(exec::Session& s, double budget_s, int min_runs = 3) {
  const ir::Graph& g = s.graph();
  std::vector<ir::Tensor> ins, outs;
  for (size_t i = 0; i < g.inputs.size(); ++i) ins.push_back(filled(g.tensor(g.inputs[i]).shape, 7 + i));
  for (const auto& o : g.outputs) outs.emplace_back(g.tensor(o).dtype, g.tensor(o).shape);
  std::vector<const void*> in;
  std::vector<void*> out;
  for (auto& t : ins) in.push_back(t.bytes());
  for (auto& t : outs) out.push_back(t.bytes());
  for (int i = 0; i < 2; ++i) s.run_raw(in.data(), out.data());
  double best = 1e300;
  const int64_t t_end = now_ns() + static_cast<int64_t>(budget_s * 1e9);
  for (int i = 0; i < min_runs || now_ns() < t_end; ++i) {
    int64_t t0 = now_ns();
    s.run_raw(in.data(), out.data());
    best = std::min(best, static_cast<double>(now_ns() - t0));
    if (i > 100000) break;
  }
  return best;
}

exec::SessionOptions session_options(const RooflineOptions& o, int threads) {
  exec::SessionOptions opt;
  opt.backend = o.backend;
  opt.executor = "compiled";
  opt.threads = threads;
  opt.isa = o.isa;
  opt.passes = "none";  // measure exactly the graph we built
  return opt;
}

}  // namespace

int hardware_threads() {
  unsigned n = std::thread::hardware_concurrency();
  return n ? static_cast<int>(n) : 1;
}

size_t last_level_cache_bytes() {
  for (int idx = 4; idx >= 0; --idx) {
    std::ifstream f("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(idx) + "/size");
    std::string s;
    if (f >> s && !s.empty()) {
      size_t mult = 1;
      char unit = s.back();
      if (unit == 'K') mult = 1024;
      if (unit == 'M') mult = 1024 * 1024;
      if (mult != 1) s.pop_back();
      try {
        return static_cast<size_t>(std::stoull(s)) * mult;
      } catch (...) {
      }
    }
  }
  long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return l3 > 0 ? static_cast<size_t>(l3) : size_t{8} << 20;
}

std::string machine_cache_path() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  std::string base;
  if (xdg && *xdg) {
    base = xdg;
  } else {
    const char* home = std::getenv("HOME");
    base = std::string(home && *home ? home : "/tmp") + "/.cache";
  }
  return base + "/fusebox/machine.json";
}

std::string machine_key(const std::string& backend, const std::string& isa) {
  return cpu_model_name() + "|" + std::to_string(hardware_threads()) + " threads|" + backend +
         (isa.empty() ? "" : "|" + isa);
}

std::string resolved_isa(const std::string& backend, const std::string& isa) {
  // Only the CPU has levels; another backend is not created (a GPU context) just to say so.
  if (backend != "cpu" && isa == "auto") return "";
  return exec::BackendRegistry::instance().create(backend)->resolve(exec::CompileOptions{isa}).isa;
}

double Roofline::peak_gflops(int threads) const {
  if (gemm_gflops.empty()) return 0;
  double best = gemm_gflops.begin()->second;
  for (const auto& [t, g] : gemm_gflops)
    if (t <= threads) best = g;
  return best;
}

double Roofline::fma_peak_gflops(int threads) const {
  if (fma_gflops.empty()) return 0;
  double best = fma_gflops.begin()->second;
  for (const auto& [t, g] : fma_gflops)
    if (t <= threads) best = g;
  return best;
}

double Roofline::level_gbs(size_t i, int threads) const {
  if (i >= levels.size() || levels[i].gbs.empty()) return 0;
  const std::map<int, double>& g = levels[i].gbs;
  if (const auto it = g.find(threads); it != g.end()) return it->second;
  const double one = g.begin()->second * std::max(1, threads) / std::max(1, g.begin()->first);
  return std::min(one, g.rbegin()->second);
}

nlohmann::json Roofline::to_json() const {
  nlohmann::json lv = nlohmann::json::array();
  for (const MemoryLevel& m : levels) {
    nlohmann::json by = nlohmann::json::object();
    for (const auto& [t, v] : m.gbs) by[std::to_string(t)] = v;
    lv.push_back({{"name", m.name}, {"capacity_bytes", m.capacity_bytes}, {"working_set_bytes", m.working_set_bytes},
                  {"gbs", by}});
  }
  nlohmann::json g = nlohmann::json::object();
  for (const auto& [t, v] : gemm_gflops) g[std::to_string(t)] = v;
  nlohmann::json f = nlohmann::json::object();
  for (const auto& [t, v] : fma_gflops) f[std::to_string(t)] = v;
  return {{"key", key}, {"cpu_model", cpu_model}, {"hardware_threads", hardware_threads},
          {"backend", backend}, {"isa", isa}, {"gemm_gflops", g}, {"gemm_n", gemm_n}, {"bandwidth_gbs", bandwidth_gbs},
          {"bandwidth_bytes", bandwidth_bytes}, {"dispatch_floor_ns", dispatch_floor_ns},
          {"fma_gflops", f}, {"fma_isa", fma_isa}, {"levels", lv}, {"measured_at", measured_at}};
}

Roofline Roofline::from_json(const nlohmann::json& j) {
  Roofline r;
  try {
    r.key = j.at("key").get<std::string>();
    r.cpu_model = j.value("cpu_model", "");
    r.hardware_threads = j.value("hardware_threads", 1);
    r.backend = j.value("backend", "cpu");
    r.isa = j.value("isa", "");
    for (const auto& [t, v] : j.at("gemm_gflops").items()) r.gemm_gflops[std::stoi(t)] = v.get<double>();
    r.gemm_n = j.value("gemm_n", 0);
    r.bandwidth_gbs = j.at("bandwidth_gbs").get<double>();
    r.bandwidth_bytes = j.value("bandwidth_bytes", 0.0);
    r.dispatch_floor_ns = j.at("dispatch_floor_ns").get<double>();
    // An entry cached before the FMA peak was measured has none: at() throws, and the machine
    // is measured again (machine_roofline).
    for (const auto& [t, v] : j.at("fma_gflops").items()) r.fma_gflops[std::stoi(t)] = v.get<double>();
    r.fma_isa = j.value("fma_isa", "");
    // A CPU entry cached before the levels were measured has none: measured again, as above.
    if (r.backend == "cpu" || j.contains("levels"))
      for (const auto& m : j.at("levels")) {
        MemoryLevel level;
        level.name = m.at("name").get<std::string>();
        level.capacity_bytes = m.at("capacity_bytes").get<double>();
        level.working_set_bytes = m.at("working_set_bytes").get<double>();
        for (const auto& [t, v] : m.at("gbs").items()) level.gbs[std::stoi(t)] = v.get<double>();
        r.levels.push_back(std::move(level));
      }
    r.measured_at = j.value("measured_at", "");
  } catch (const std::exception& e) {
    throw Error(std::string("bad machine roofline entry: ") + e.what());
  }
  if (r.gemm_gflops.empty() || r.fma_gflops.empty() || r.bandwidth_gbs <= 0 || r.dispatch_floor_ns <= 0)
    throw Error("bad machine roofline entry for '" + r.key + "': missing figures");
  return r;
}

std::string Roofline::to_text() const {
  std::ostringstream os;
  char buf[256];
  os << "machine: " << cpu_model << " (" << hardware_threads << " hardware threads), backend " << backend
     << (isa.empty() ? "" : ", isa " + isa) << "\n";
  for (const auto& [t, g] : fma_gflops) {
    std::snprintf(buf, sizeof buf, "  FMA peak (%s), %d thread%s: %8.1f GFLOP/s   (independent FMAs in registers)\n",
                  fma_isa.c_str(), t, t == 1 ? " " : "s", g);
    os << buf;
  }
  for (const auto& [t, g] : gemm_gflops) {
    const double fma = fma_peak_gflops(t);
    std::snprintf(buf, sizeof buf, "  GEMM %dx%d, %d thread%s: %8.1f GFLOP/s   (%.0f%% of the FMA peak)\n", gemm_n,
                  gemm_n, t, t == 1 ? " " : "s", g, fma > 0 ? 100 * g / fma : 0);
    os << buf;
  }
  std::snprintf(buf, sizeof buf, "  memory bandwidth:      %8.2f GB/s   (triad-like Mul+Add over %.0f MiB)\n",
                bandwidth_gbs, bandwidth_bytes / (1024.0 * 1024.0));
  os << buf;
  for (const MemoryLevel& m : levels) {
    std::string by;
    for (const auto& [t, g] : m.gbs) {
      char one[64];
      std::snprintf(one, sizeof one, "%s%8.1f GB/s at %d thread%s", by.empty() ? "" : ", ", g, t, t == 1 ? "" : "s");
      by += one;
    }
    std::snprintf(buf, sizeof buf, "  %-4s read bandwidth: %s   (%.0f KiB per thread%s)\n", m.name.c_str(), by.c_str(),
                  m.working_set_bytes / 1024.0,
                  m.capacity_bytes > 0 ? (", of " + std::to_string(static_cast<long long>(m.capacity_bytes / 1024)) + " KiB").c_str() : "");
    os << buf;
  }
  std::snprintf(buf, sizeof buf, "  dispatch floor:        %8.1f ns/op  (compiled loop, chain of one-element ops)\n",
                dispatch_floor_ns);
  os << buf;
  std::snprintf(buf, sizeof buf, "  balance point:         %8.2f FLOP/byte at 1 thread, %.2f at %d\n", balance(1),
                balance(hardware_threads), hardware_threads);
  os << buf;
  os << "  measured " << measured_at << "\n";
  return os.str();
}

Roofline measure_roofline(const RooflineOptions& o) {
  Roofline r;
  r.backend = o.backend;
  r.isa = resolved_isa(o.backend, o.isa);
  r.cpu_model = cpu_model_name();
  r.hardware_threads = hardware_threads();
  r.key = machine_key(o.backend, r.isa);
  r.measured_at = utc_now();
  const int max_threads = o.max_threads > 0 ? o.max_threads : r.hardware_threads;

  // GEMM: C[n,n] = A[n,n] x B[n,n].
  {
    const int64_t n = o.gemm_n;
    r.gemm_n = o.gemm_n;
    ir::Graph g;
    g.name = "roofline_gemm";
    g.add_input("a", ir::DType::f32, {n, n});
    g.add_weight("b", filled({n, n}, 3));
    g.outputs = {g.add_node("MatMul", {"a", "b"}, {}, "gemm")};
    const double flops = ir::graph_cost(g).flops;
    std::vector<int> counts;
    for (int t = 1; t < max_threads; t *= 2) counts.push_back(t);
    counts.push_back(max_threads);
    for (int t : counts) {
      exec::Session s(g, session_options(o, t));
      r.gemm_gflops[t] = flops / fastest_run_ns(s, o.seconds_per_measure);
      // The level's own FMA peak (a backend with no levels: the CPU's best).
      const FmaPeak fma = measure_fma_peak(t, o.seconds_per_measure, r.isa.empty() ? "auto" : r.isa);
      r.fma_gflops[t] = fma.gflops;
      r.fma_isa = fma.isa;
    }
  }
  // Bandwidth: a = b + c * s over arrays 4x the last-level cache, 64 to 512 MiB in all: a VM can
  // report a whole socket's L3 (508 MiB here, so 2 GiB of arrays) where a core sees a share of it;
  // 512 MiB is past any one core complex's L3 and costs a fraction of the memory.
  {
    double want = o.bandwidth_min_bytes > 0
                      ? o.bandwidth_min_bytes
                      : std::clamp(4.0 * static_cast<double>(last_level_cache_bytes()), 64.0 * 1024 * 1024,
                                   512.0 * 1024 * 1024);
    // The graph moves 5 arrays' worth: Mul reads c, writes t; Add reads b and t, writes a.
    const int64_t n = std::max<int64_t>(1024, static_cast<int64_t>(want / 5 / 4));
    ir::Graph g;
    g.name = "roofline_triad";
    g.add_input("b", ir::DType::f32, {n});
    g.add_input("c", ir::DType::f32, {n});
    g.add_weight("s", filled({1}, 5));
    std::string t = g.add_node("Mul", {"c", "s"}, {}, "scale");
    g.outputs = {g.add_node("Add", {"b", t}, {}, "triad")};
    const double bytes = ir::graph_cost(g).bytes;
    r.bandwidth_bytes = bytes;
    exec::Session s(g, session_options(o, max_threads));
    // Copy-in of inputs and copy-out are part of a run on any backend; on the CPU they are
    // memcpys of the same arrays, which we count too (2 inputs in, 1 output out: 2 bytes each).
    const double copy_bytes = 3.0 * 2.0 * static_cast<double>(n) * 4.0;
    r.bandwidth_gbs = (bytes + copy_bytes) / fastest_run_ns(s, o.seconds_per_measure * 2);
  }
  // The hierarchy's read bandwidth, level by level: a CPU's; a GPU's memory is not the host's.
  if (o.backend == "cpu") {
    std::vector<int> counts = {1};
    if (max_threads > 1) counts.push_back(max_threads);
    r.levels = measure_memory_levels(counts, o.seconds_per_measure, o.level_dram_bytes);
  }
  // Dispatch floor: a chain of one-element Relu ops, per op.
  {
    ir::Graph g;
    g.name = "roofline_dispatch";
    std::string x = g.add_input("x", ir::DType::f32, {1});
    for (int i = 0; i < o.dispatch_chain; ++i) x = g.add_node("Relu", {x}, {}, "relu" + std::to_string(i));
    g.outputs = {x};
    exec::Session s(g, session_options(o, 1));
    r.dispatch_floor_ns = fastest_run_ns(s, o.seconds_per_measure, 20) / o.dispatch_chain;
  }
  return r;
}

namespace {

constexpr size_t kMaxCacheBytes = 16u << 20;

// The cache file as an object holding a "machines" object. Anything else (unreadable, not JSON,
// the wrong shape) counts as no cache, with `problem` saying why; a missing file is no problem.
nlohmann::json load_cache(const std::string& path, std::string& problem) {
  const nlohmann::json none = {{"machines", nlohmann::json::object()}};
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return none;
  try {
    nlohmann::json cache = nlohmann::json::parse(read_file(path, kMaxCacheBytes));
    if (!cache.is_object())
      problem = "not a JSON object";
    else if (!cache.contains("machines"))
      cache["machines"] = nlohmann::json::object();
    else if (!cache["machines"].is_object())
      problem = "\"machines\" is not an object";
    if (problem.empty()) return cache;
  } catch (const std::exception& e) {
    problem = e.what();
  }
  return none;
}

bool usable(double v) {
  return std::isfinite(v) && v > 0;
}

// Why a per-thread-count series cannot be right: a figure that is not positive, or one for more
// threads far below the one for the fewest (measured while something else ran).
std::string series_doubt(const std::map<int, double>& series, const std::string& what) {
  for (const auto& [t, g] : series)
    if (t < 1 || !usable(g))
      return what + " of " + std::to_string(g) + " at " + std::to_string(t) + " threads";
  const auto& [t0, g0] = *series.begin();
  for (const auto& [t, g] : series)
    if (g < 0.6 * g0)
      return what + " at " + std::to_string(t) + " threads (" + std::to_string(g) +
             " GFLOP/s) far below the " + std::to_string(g0) + " at " + std::to_string(t0) +
             ": measured while the machine was busy";
  return "";
}

// Why figures cannot be trusted, or "" when they are plausible.
std::string doubt(const Roofline& r) {
  std::string d = series_doubt(r.fma_gflops, "an FMA peak");
  if (d.empty()) d = series_doubt(r.gemm_gflops, "a GEMM figure");
  if (!d.empty()) return d;
  if (!usable(r.bandwidth_gbs))
    return "a memory bandwidth of " + std::to_string(r.bandwidth_gbs) + " GB/s";
  if (!usable(r.dispatch_floor_ns))
    return "a dispatch floor of " + std::to_string(r.dispatch_floor_ns) + " ns";
  if (r.backend == "cpu" && r.levels.size() != 4)
    return std::to_string(r.levels.size()) + " memory levels, not the 4 (L1, L2, L3, DRAM) measured";
  for (const MemoryLevel& m : r.levels)
    for (const auto& [t, g] : m.gbs)
      if (!usable(g)) return "the " + m.name + " read bandwidth of " + std::to_string(g) + " GB/s";
  // More threads read at least about as fast as one (each has its own L1 and L2; the shared levels
  // saturate but do not halve), and a level is not slower than the one below it: a figure that
  // breaks either was measured while something else ran.
  for (const MemoryLevel& m : r.levels) {
    if (m.gbs.empty()) continue;
    const auto& [t0, g0] = *m.gbs.begin();
    for (const auto& [t, g] : m.gbs)
      if (g < 0.75 * g0)
        return "the " + m.name + " read bandwidth at " + std::to_string(t) + " threads (" + std::to_string(g) +
               " GB/s) far below the " + std::to_string(g0) + " at " + std::to_string(t0) +
               ": measured while the machine was busy";
  }
  for (size_t i = 0; i + 1 < r.levels.size(); ++i) {
    const MemoryLevel &upper = r.levels[i], &lower = r.levels[i + 1];
    if (upper.gbs.empty() || lower.gbs.empty()) continue;
    const double u = upper.gbs.begin()->second, l = lower.gbs.begin()->second;
    if (u < 0.8 * l)
      return upper.name + " read at " + std::to_string(u) + " GB/s, slower than " + lower.name + " (" +
             std::to_string(l) + "): measured while the machine was busy";
  }
  for (const auto& [t, g] : r.gemm_gflops)  // a little over, for the noise of two measurements
    if (g > 1.1 * r.fma_peak_gflops(t))
      return "a GEMM figure at " + std::to_string(t) + " threads (" + std::to_string(g) +
             " GFLOP/s) above the FMA peak (" + std::to_string(r.fma_peak_gflops(t)) + ")";
  return "";
}

// Measures, once more when the figures are implausible (a burst of load during one of them).
Roofline measure_plausibly(const RooflineOptions& options) {
  Roofline r = measure_roofline(options);
  std::string d = doubt(r);
  if (d.empty()) return r;
  r = measure_roofline(options);
  d = doubt(r);
  if (!d.empty())
    std::cerr << "fusebox: the machine roofline measured twice looks wrong (" << d
              << "); it is used now and measured again next time\n";
  return r;
}

}  // namespace

Roofline machine_roofline(bool refresh, const RooflineOptions& options, const std::string& cache_path) {
  const std::string path = cache_path.empty() ? machine_cache_path() : cache_path;
  const std::string key = machine_key(options.backend, resolved_isa(options.backend, options.isa));
  std::string problem;
  nlohmann::json cache = load_cache(path, problem);
  if (!refresh && problem.empty() && cache["machines"].contains(key)) {
    try {
      Roofline r = Roofline::from_json(cache["machines"][key]);
      problem = doubt(r);
      if (problem.empty()) return r;
    } catch (const Error& e) {
      problem = e.what();
    }
  }
  if (!problem.empty())
    std::cerr << "fusebox: the machine cache '" << path << "' cannot be used (" << problem
              << "): measuring again\n";
  Roofline r = measure_plausibly(options);
  cache["version"] = 1;
  cache["machines"][key] = r.to_json();
  // mkdir -p the cache folder.
  std::string dir = path.substr(0, path.rfind('/'));
  for (size_t pos = 1; pos != std::string::npos && !dir.empty();) {
    pos = dir.find('/', pos + 1);
    mkdir(dir.substr(0, pos).c_str(), 0755);
  }
  write_file_atomically(path,
                        cache.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  return r;
}

}  // namespace fusebox::profiler
