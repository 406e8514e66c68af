#pragma once
// Shared by the profiler tests: record a small model, build synthetic recordings, find the
// optional NVIDIA tools, and a strict Chrome-trace checker.
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/models/builtin_models.h"
#include "ops/cpu/cpu_backend.h"
#include "profiler/recorder.h"
#include "profiler/roofline.h"
#include "tests/support/temp_dir.h"

namespace fusebox::profiler::ptest {

// The message of the fusebox::Error `f` throws, "" when it throws none.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

inline void register_cpu() {
  static bool once = (fusebox::cpu::register_backend(), true);
  (void)once;
}

inline std::vector<ir::Tensor> ones_inputs(const ir::Graph& g) {
  std::vector<ir::Tensor> in;
  for (const auto& name : g.inputs) {
    const ir::TensorInfo& t = g.tensor(name);
    in.emplace_back(t.dtype, t.shape);
    if (t.dtype == ir::DType::f32) {
      float* p = in.back().data<float>();
      for (int64_t i = 0; i < in.back().numel(); ++i) p[i] = 0.5f;
    }
  }
  return in;
}

// Records `runs` runs of a builtin model spec.
inline Recording record(const std::string& spec, const std::string& passes, int runs,
                        exec::ExecutionObserver* extra = nullptr) {
  register_cpu();
  Recorder rec;
  std::vector<exec::ExecutionObserver*> obs{&rec};
  if (extra) obs.push_back(extra);
  ObserverTee tee(obs);
  exec::SessionOptions opt;
  opt.passes = passes;
  opt.observer = &tee;
  exec::Session s(models::build_model(spec, 1), opt);
  rec.attach(s, spec);
  auto in = ones_inputs(s.graph());
  for (int i = 0; i < runs; ++i) s.run(in);
  return rec.finish();
}

// A machine roofline measured in a few tens of milliseconds (tiny GEMM and working sets): real
// figures of this machine, too rough for anything but the relations tests check.
inline RooflineOptions quick_roofline_options(int max_threads = 1, const std::string& isa = "auto") {
  RooflineOptions o;
  o.isa = isa;
  o.gemm_n = 64;
  o.bandwidth_min_bytes = 4 << 20;
  o.level_dram_bytes = 4 << 20;
  o.dispatch_chain = 32;
  o.seconds_per_measure = 0.01;
  o.max_threads = max_threads;
  return o;
}

// Records `runs` runs of a builtin model spec at an ISA level and thread count.
inline Recording record_at(const std::string& spec, int runs, const std::string& isa, int threads) {
  register_cpu();
  Recorder rec;
  exec::SessionOptions opt;
  opt.isa = isa;
  opt.threads = threads;
  opt.observer = &rec;
  exec::Session s(models::build_model(spec, 1), opt);
  rec.attach(s, spec);
  const auto in = ones_inputs(s.graph());
  for (int i = 0; i < runs; ++i) s.run(in);
  return rec.finish();
}

// Records `runs` runs at `threads` kernel threads with the backend noting its worker threads'
// busy spans, as the workbench does for its profile runs.
inline Recording record_workers(const std::string& spec, int runs, int threads,
                                const std::string& passes = "all") {
  register_cpu();
  Recorder rec;
  exec::SessionOptions opt;
  opt.passes = passes;
  opt.threads = threads;
  opt.observer = &rec;
  exec::Session s(models::build_model(spec, 1), opt);
  rec.attach(s, spec);
  auto in = ones_inputs(s.graph());
  exec::BackendRecording noted(s.backend());
  for (int i = 0; i < runs; ++i) s.run(in);
  return rec.finish(noted.finish());
}

// A GEMM-heavy model whose every GEMM splits at 2 threads (under FUSEBOX_FORK_JOIN_NS=0).
inline const char* kGemmModel = "mlp:batch=32,dims=256-256-256-256";

inline std::string tool(const char* env, const char* name) {
  if (const char* p = std::getenv(env); p && *p && access(p, X_OK) == 0) return p;
  const char* home = std::getenv("HOME");
  std::string p = std::string(home ? home : "/root") + "/.cache/nsight-systems/bin/" + name;
  return access(p.c_str(), X_OK) == 0 ? p : "";
}

inline std::string temp_dir(const std::string& tag) {
  std::string d = "/tmp/fusebox-profiler-test-" + tag + "-" + std::to_string(getpid());
  if (mkdir(d.c_str(), 0755) == 0) fusebox::test::remove_at_exit(d);
  return d;
}

struct Run {
  int status = -1;
  std::string output;
};
inline Run run_command(const std::string& cmd) {
  Run r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  r.status = pclose(p);
  return r;
}

// ---- strict Chrome trace checker: returns a list of problems (empty = valid) -------------------
inline std::vector<std::string> check_chrome_trace(const nlohmann::json& j) {
  std::vector<std::string> bad;
  auto fail = [&](const std::string& m) {
    if (bad.size() < 20) bad.push_back(m);
  };
  if (!j.is_object() || !j.contains("traceEvents") || !j["traceEvents"].is_array()) {
    fail("top level must be an object with a traceEvents array");
    return bad;
  }
  struct X {
    int64_t start, end;
    std::string name;
  };
  std::map<std::pair<int64_t, int64_t>, std::vector<X>> xs;
  std::set<int64_t> named_pids;
  std::set<std::pair<int64_t, int64_t>> named_threads;
  std::map<std::string, std::vector<nlohmann::json>> flow_s, flow_f;
  auto ns = [](const nlohmann::json& v) { return static_cast<int64_t>(std::llround(v.get<double>() * 1000.0)); };
  size_t i = 0;
  for (const auto& e : j["traceEvents"]) {
    std::string where = "event " + std::to_string(i++);
    if (!e.is_object()) { fail(where + ": not an object"); continue; }
    if (!e.contains("ph") || !e["ph"].is_string()) { fail(where + ": no ph"); continue; }
    std::string ph = e["ph"];
    if (!e.contains("name") || !e["name"].is_string()) fail(where + ": no name");
    if (!e.contains("pid") || !e["pid"].is_number_integer()) fail(where + ": pid must be an integer");
    if (!e.contains("tid") || !e["tid"].is_number_integer()) fail(where + ": tid must be an integer");
    if (!e.contains("ts") || !e["ts"].is_number() || e["ts"].get<double>() < 0) fail(where + ": ts must be a number >= 0");
    if (!bad.empty() && bad.back().rfind(where, 0) == 0) continue;
    int64_t pid = e["pid"], tid = e["tid"];
    if (ph == "X") {
      if (!e.contains("dur") || !e["dur"].is_number() || e["dur"].get<double>() < 0) { fail(where + ": X needs dur >= 0"); continue; }
      if (!e.contains("cat") || !e["cat"].is_string()) fail(where + ": X needs cat");
      std::string cat = e.value("cat", "");
      static const std::set<std::string> cats{"cpu_op", "user_annotation", "kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_sync"};
      if (!cats.count(cat)) fail(where + ": unknown cat '" + cat + "'");
      if (cat == "cpu_op")
        for (const char* k : {"Op Type", "Input Dims", "Output Dims", "FLOPs", "Bytes", "Arena Offsets"})
          if (!e.contains("args") || !e["args"].contains(k)) fail(where + ": cpu_op without args." + k);
      int64_t s = ns(e["ts"]);
      xs[{pid, tid}].push_back({s, s + ns(e["dur"]), e["name"]});
    } else if (ph == "M") {
      std::string n = e["name"];
      if (n == "process_name") named_pids.insert(pid);
      if (n == "thread_name") named_threads.insert({pid, tid});
      if (!e.contains("args") || !e["args"].is_object()) fail(where + ": M needs args");
      if ((n == "process_name" || n == "thread_name") && !e["args"].contains("name")) fail(where + ": M name without args.name");
    } else if (ph == "C") {
      if (!e.contains("args") || !e["args"].is_object() || e["args"].empty()) fail(where + ": C needs args");
      else for (const auto& [k, v] : e["args"].items()) if (!v.is_number()) fail(where + ": C arg " + k + " not a number");
    } else if (ph == "s" || ph == "f") {
      if (!e.contains("id") || !e.contains("cat")) { fail(where + ": flow needs id and cat"); continue; }
      std::string key = e["cat"].get<std::string>() + "#" + e["id"].dump();
      (ph == "s" ? flow_s : flow_f)[key].push_back(e);
      if (ph == "f" && e.value("bp", "") != "e") fail(where + ": flow end needs bp \"e\"");
    } else {
      fail(where + ": unexpected ph '" + ph + "'");
    }
  }
  // Strict nesting per (pid, tid).
  for (auto& [track, v] : xs) {
    if (!named_pids.count(track.first)) fail("pid " + std::to_string(track.first) + " has no process_name");
    if (!named_threads.count(track)) fail("thread " + std::to_string(track.second) + " of pid " + std::to_string(track.first) + " has no thread_name");
    std::stable_sort(v.begin(), v.end(), [](const X& a, const X& b) { return a.start != b.start ? a.start < b.start : a.end > b.end; });
    std::vector<const X*> stack;
    for (const X& x : v) {
      while (!stack.empty() && x.start >= stack.back()->end) stack.pop_back();
      if (!stack.empty() && x.end > stack.back()->end)
        fail("'" + x.name + "' overlaps '" + stack.back()->name + "' without nesting (tid " + std::to_string(track.second) + ")");
      stack.push_back(&x);
    }
  }
  // Flows pair up, start inside a slice on their thread, end at a slice on theirs.
  auto inside = [&](const nlohmann::json& e, bool at_start) {
    auto it = xs.find({e["pid"].get<int64_t>(), e["tid"].get<int64_t>()});
    if (it == xs.end()) return false;
    int64_t t = ns(e["ts"]);
    for (const X& x : it->second)
      if (at_start ? x.start == t : (x.start <= t && t <= x.end)) return true;
    return false;
  };
  for (const auto& [key, v] : flow_s) {
    auto f = flow_f.find(key);
    if (v.size() != 1 || f == flow_f.end() || f->second.size() != 1) { fail("flow " + key + " does not pair up"); continue; }
    if (!inside(v[0], false)) fail("flow " + key + " starts outside any slice");
    if (!inside(f->second[0], true)) fail("flow " + key + " does not end at a slice start");
    if (ns(v[0]["ts"]) > ns(f->second[0]["ts"])) fail("flow " + key + " goes back in time");
  }
  for (const auto& [key, v] : flow_f)
    if (!flow_s.count(key)) fail("flow " + key + " has an end but no start");
  return bad;
}

}  // namespace fusebox::profiler::ptest
