// fusebox profile MODEL: record many runs op by op, classify every op against the machine's
// roofline, break the run down into kernels vs dispatch, and write the trace files.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>

#include "app/cli/commands.h"
#include "app/cli/profile_common.h"
#include "app/workbench/model_source.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/strings.h"
#include "profiler/analysis.h"
#include "profiler/exporters.h"
#include "profiler/nvtx.h"
#include "profiler/roofline.h"

namespace fusebox::cli {

namespace {

struct ProfileArgs {
  SessionArgs session;
  int iters = 50;
  int warmup = 5;
  std::string out;
  std::string format = "chrome,nvtxt,sqlite";
  std::string nvtxt_timebase = "manual";
  bool refresh_machine = false;
  size_t top = 15;
};

void profile(const ProfileArgs& a) {
  bool chrome = false, nvtxt = false, sqlite = false;
  for (const std::string& f : split(a.format, ',')) {
    std::string t = trim(f);
    if (t == "chrome") chrome = true;
    else if (t == "nvtxt") nvtxt = true;
    else if (t == "sqlite") sqlite = true;
    else if (!t.empty()) throw Error("--format: unknown format '" + t + "' (valid: chrome, nvtxt, sqlite)");
  }
  profiler::NvtxtTimeBase tb;
  if (a.nvtxt_timebase == "manual") tb = profiler::NvtxtTimeBase::Manual;
  else if (a.nvtxt_timebase == "monotonic_raw") tb = profiler::NvtxtTimeBase::ClockMonotonicRaw;
  else throw Error("--nvtxt-timebase: '" + a.nvtxt_timebase + "' (valid: manual, monotonic_raw)");
  if (!a.out.empty()) ensure_writable_dir(a.out, "--out");

  RecordResult rr = record_model(a.session, a.iters, a.warmup);
  profiler::RooflineOptions ro;
  ro.backend = a.session.backend;
  profiler::Roofline roof = profiler::machine_roofline(a.refresh_machine, ro);
  profiler::Analysis an = profiler::analyze(rr.recording, roof);
  std::cout << "fusebox profile " << a.session.model << "  (" << rr.recording.label << ")\n"
            << rr.recording.node_count << " nodes, arena " << format_bytes(static_cast<double>(rr.recording.arena_bytes))
            << ", " << a.iters << " recorded runs\n\n";
  std::cout << an.to_text(a.top);
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "\nrecorder overhead: %.1f ns per op (fastest run %.1f us with hooks, %.1f us without, %zu ops)\n",
                rr.overhead_per_op_ns(), rr.recorded_run_ns / 1e3, rr.plain_run_ns / 1e3, rr.ops_per_run);
  std::cout << buf;
  if (rr.overhead_per_op_ns() < 0)
    std::cout << "  (negative: the hooks cost less than this model's run-to-run noise; on a chain of tiny ops\n"
                 "   they cost two clock reads and two appends, about 2x the clock read time per op)\n";
  if (!a.out.empty()) {
    const std::string d = a.out + "/";
    rr.recording.save(d + "profile.json");
    write_file_atomically(d + "analysis.json", an.to_json().dump(2) + "\n");
    std::cout << "\nwrote " << d << "profile.json (recording; `fusebox compare A.json B.json`), " << d << "analysis.json\n";
    if (chrome) {
      profiler::write_chrome_trace(rr.recording, d + "trace.json");
      std::cout << "wrote " << d << "trace.json (Chrome trace: ui.perfetto.dev or chrome://tracing)\n";
    }
    if (nvtxt) {
      profiler::write_nvtxt(rr.recording, d + "trace.nvtxt", tb);
      std::cout << "wrote " << d << "trace.nvtxt (ImportNvtxt --cmd create -n trace.nvtxt -o trace.nsys-rep)\n";
    }
    if (sqlite) {
      profiler::write_nsys_sqlite(rr.recording, d + "trace.sqlite");
      std::cout << "wrote " << d << "trace.sqlite (nsys stats --report nvtxsum trace.sqlite)\n";
    }
  }
}

}  // namespace

RecordResult record_model(const SessionArgs& s, int iters, int warmup) {
  if (iters < 1) throw Error("--iters must be >= 1, got " + std::to_string(iters));
  if (warmup < 0) throw Error("--warmup must be >= 0, got " + std::to_string(warmup));
  ir::Graph model = workbench::load_model(s.model, s.seed);
  auto recorder = std::make_unique<profiler::Recorder>(size_t{1} << 16);
  profiler::NvtxRanges nvtx;
  profiler::NvtxRanges::name_this_thread("fusebox main");
  profiler::ObserverTee tee({recorder.get(), &nvtx});
  exec::SessionOptions opt;
  opt.backend = s.backend;
  opt.executor = s.executor;
  opt.threads = s.threads;
  opt.passes = s.passes;
  opt.planner = s.planner;
  opt.observer = &tee;
  exec::Session session(std::move(model), opt);
  recorder->attach(session, s.model);
  nvtx.attach(session);

  std::vector<ir::Tensor> inputs = workbench::random_inputs(session.graph(), s.seed);
  std::vector<ir::Tensor> outputs;
  for (const auto& o : session.graph().outputs)
    outputs.emplace_back(session.graph().tensor(o).dtype, session.graph().tensor(o).shape);
  std::vector<const void*> in;
  std::vector<void*> out;
  for (auto& t : inputs) in.push_back(t.bytes());
  for (auto& t : outputs) out.push_back(t.bytes());

  RecordResult rr;
  session.set_observer(nullptr);
  for (int i = 0; i < warmup; ++i) session.run_raw(in.data(), out.data());
  std::vector<double> plain, recorded;
  for (int i = 0; i < iters; ++i) {
    int64_t t0 = profiler::now_ns();
    session.run_raw(in.data(), out.data());
    plain.push_back(static_cast<double>(profiler::now_ns() - t0));
  }
  session.backend().take_activity();  // drop what the unrecorded runs produced
  session.set_observer(&tee);
  for (int i = 0; i < iters; ++i) {
    int64_t t0 = profiler::now_ns();
    session.run_raw(in.data(), out.data());
    recorded.push_back(static_cast<double>(profiler::now_ns() - t0));
  }
  session.set_observer(nullptr);
  rr.recording = recorder->finish(session.backend().take_activity());
  // Fastest runs: the least disturbed by the rest of the machine, so their difference is the hooks.
  rr.plain_run_ns = *std::min_element(plain.begin(), plain.end());
  rr.recorded_run_ns = *std::min_element(recorded.begin(), recorded.end());
  int64_t runs = rr.recording.run_count();
  size_t ops = 0;
  for (const auto& sp : rr.recording.spans) ops += sp.kind == profiler::SpanKind::Op;
  rr.ops_per_run = runs ? ops / static_cast<size_t>(runs) : 0;
  return rr;
}

void add_profile_command(CLI::App& app) {
  auto args = std::make_shared<ProfileArgs>();
  CLI::App* cmd = app.add_subcommand(
      "profile",
      "Record runs op by op: per-op table with roofline classification (compute-, memory- or\n"
      "overhead-bound), kernel vs dispatch breakdown, and trace files for Perfetto and Nsight.\n"
      "Example: fusebox profile transformer --passes none --iters 50 --out prof");
  add_session_options(cmd, args->session);
  cmd->add_option("--iters", args->iters, "recorded runs")->capture_default_str();
  cmd->add_option("--warmup", args->warmup, "unrecorded runs first")->capture_default_str();
  cmd->add_option("--out", args->out, "directory for profile.json, analysis.json and the trace files");
  cmd->add_option("--format", args->format, "trace files to write: chrome,nvtxt,sqlite")->capture_default_str();
  cmd->add_option("--nvtxt-timebase", args->nvtxt_timebase,
                  "manual (ImportNvtxt --cmd create) | monotonic_raw (--cmd merge into an nsys capture)")
      ->capture_default_str();
  cmd->add_option("--top", args->top, "nodes shown in the per-node table")->capture_default_str();
  cmd->add_flag("--refresh-machine", args->refresh_machine, "re-measure the machine roofline first");
  cmd->callback([args] { profile(*args); });
}

}  // namespace fusebox::cli
