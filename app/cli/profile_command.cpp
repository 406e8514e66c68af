// fusebox profile MODEL: record many runs op by op, classify every op against the machine's
// roofline, break the run down into kernels vs dispatch, and write the trace files.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <set>

#include "app/cli/commands.h"
#include "app/workbench/exports.h"
#include "app/workbench/pipeline.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/strings.h"
#include "profiler/analysis.h"
#include "profiler/exporters.h"
#include "profiler/nvtx.h"
#include "profiler/roofline.h"
#include "profiler/timeline.h"

namespace fusebox::cli {

namespace {

struct ProfileArgs {
  std::unique_ptr<workbench::SettingsFlags> settings;
  std::string out;
  std::string format = "chrome,nvtxt,sqlite";
  std::string nvtxt_timebase = "manual";
  bool refresh_machine = false;
  bool timeline = false;
  size_t top = 15;
};

// Fastest run without hooks and with the recorder (and NVTX ranges) attached: the least disturbed
// by the rest of the machine, so their difference per op is what the hooks cost.
struct HookOverhead {
  double plain_run_ns = 0, recorded_run_ns = 0;
  size_t ops_per_run = 0;
  double per_op_ns() const {
    return ops_per_run ? (recorded_run_ns - plain_run_ns) / static_cast<double>(ops_per_run) : 0;
  }
};

HookOverhead hook_overhead(const workbench::RunResult& r) {
  HookOverhead h;
  h.plain_run_ns = r.latency.min_us * 1e3;
  size_t ops = 0;
  double fastest = 0;
  for (const auto& sp : r.recording->spans) {
    ops += sp.kind == profiler::SpanKind::Op;
    if (sp.kind != profiler::SpanKind::Run) continue;
    double d = static_cast<double>(sp.end_ns - sp.start_ns);
    if (fastest == 0 || d < fastest) fastest = d;
  }
  h.recorded_run_ns = fastest;
  int64_t runs = r.recording->run_count();
  h.ops_per_run = runs ? ops / static_cast<size_t>(runs) : 0;
  return h;
}

// Writes the set into `out` whole (a full disk half way leaves the old set), then says what it
// wrote.
void write_profile_files(const std::string& out, const profiler::Recording& rec,
                         const profiler::Analysis& an, const workbench::ProfileFormats& f,
                         profiler::NvtxtTimeBase tb) {
  // The window's File > Export > profile folder writes it with the same function.
  try {
    workbench::write_profile_folder(out, rec, an, f, tb);
  } catch (const Error& e) {
    throw Error(std::string("--out: ") + e.what());
  }
  const std::string d = out + "/";
  std::cout << "\nwrote " << d << "profile.json (recording; `fusebox compare A.json B.json`), " << d
            << "analysis.json\n";
  if (f.chrome)
    std::cout << "wrote " << d
              << "trace.json (Chrome trace: ui.perfetto.dev or chrome://tracing)\n";
  if (f.nvtxt)
    std::cout << "wrote " << d
              << "trace.nvtxt (ImportNvtxt --cmd create -n trace.nvtxt -o trace.nsys-rep)\n";
  if (f.sqlite)
    std::cout << "wrote " << d << "trace.sqlite (nsys stats --report nvtxsum trace.sqlite)\n";
}

void profile(const ProfileArgs& a) {
  bool chrome = false, nvtxt = false, sqlite = false;
  for (const std::string& f : split(a.format, ',')) {
    std::string t = trim(f);
    if (t == "chrome")
      chrome = true;
    else if (t == "nvtxt")
      nvtxt = true;
    else if (t == "sqlite")
      sqlite = true;
    else if (!t.empty())
      throw Error("--format: unknown format '" + t + "' (valid: chrome, nvtxt, sqlite)");
  }
  profiler::NvtxtTimeBase tb;
  if (a.nvtxt_timebase == "manual")
    tb = profiler::NvtxtTimeBase::Manual;
  else if (a.nvtxt_timebase == "monotonic_raw")
    tb = profiler::NvtxtTimeBase::ClockMonotonicRaw;
  else
    throw Error("--nvtxt-timebase: '" + a.nvtxt_timebase + "' (valid: manual, monotonic_raw)");
  workbench::Settings s = a.settings->resolve();
  if (s.profile_runs < 1)
    throw Error("--profile-runs must be >= 1 to profile, got " + std::to_string(s.profile_runs));
  if (!a.out.empty()) check_output_dir(a.out, "--out", workbench::is_profile_file);

  profiler::NvtxRanges::name_this_thread("fusebox main");
  workbench::Pipeline pipeline([&](const std::string& backend, const std::string& isa) {
    profiler::RooflineOptions ro;
    ro.backend = backend;
    ro.isa = isa.empty() ? "auto" : isa;
    return profiler::machine_roofline(a.refresh_machine, ro);
  });
  auto r = pipeline.run(s);
  const profiler::Recording& rec = *r->recording;
  const profiler::Analysis& an = *r->analysis;
  std::cout << "fusebox profile " << s.model << "  (" << rec.label << ")\n"
            << rec.node_count << " nodes, arena "
            << format_bytes(static_cast<double>(rec.arena_bytes)) << ", " << s.profile_runs
            << " recorded runs\n";
  if (const std::string workers = profiler::worker_utilisation_line(rec); !workers.empty())
    std::cout << "threads: " << workers << "\n";
  std::cout << "\n" << an.to_text(a.top);
  if (a.timeline) std::cout << "\n" << profiler::timeline_text(profiler::build_timeline(rec));
  HookOverhead h = hook_overhead(*r);
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "\nrecorder overhead: %.1f ns per op (fastest run %.1f us with hooks, %.1f us "
                "without, %zu ops)\n",
                h.per_op_ns(), h.recorded_run_ns / 1e3, h.plain_run_ns / 1e3, h.ops_per_run);
  std::cout << buf;
  if (h.per_op_ns() < 0)
    std::cout
        << "  (negative: the hooks cost less than this model's run-to-run noise; on a chain of "
           "tiny ops\n"
           "   they cost two clock reads and two appends, about 2x the clock read time per op)\n";
  if (!a.out.empty()) write_profile_files(a.out, rec, an, {chrome, nvtxt, sqlite}, tb);
}

void profile_options(CLI::App& cmd, ProfileArgs& a) {
  workbench::Settings defaults;
  defaults.warmup = 5;
  defaults.iters = 50;         // timed without hooks (the overhead figure's baseline)
  defaults.profile_runs = 50;  // recorded
  a.settings = std::make_unique<workbench::SettingsFlags>(&cmd, std::set<std::string>{}, defaults);
  cmd.add_option("--out", a.out, "directory for profile.json, analysis.json and the trace files");
  cmd.add_option("--format", a.format, "trace files to write: chrome,nvtxt,sqlite")
      ->capture_default_str();
  cmd.add_option(
         "--nvtxt-timebase", a.nvtxt_timebase,
         "manual (ImportNvtxt --cmd create) | monotonic_raw (--cmd merge into an nsys capture)")
      ->capture_default_str();
  cmd.add_option("--top", a.top, "nodes shown in the per-node table")->capture_default_str();
  cmd.add_flag(
      "--timeline", a.timeline,
      "print the trace panel's timeline: each track's spans and busy time, each run's range");
  cmd.add_flag("--refresh-machine", a.refresh_machine, "re-measure the machine roofline first");
}

}  // namespace

Command profile_command() {
  return make_command<ProfileArgs>(
      "profile",
      "Record runs op by op: per-op table with % of the compute and memory roofs and a class\n"
      "(compute-, memory-, overhead-bound, or below both roofs with the reason), kernel vs dispatch\n"
      "breakdown, and trace files for Perfetto and Nsight.\n"
      "Example: fusebox profile transformer --passes none --profile-runs 50 --out prof",
      profile_options, profile);
}

}  // namespace fusebox::cli
