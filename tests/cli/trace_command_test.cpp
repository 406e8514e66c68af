// `fusebox trace`: a GPU trace recorded by another tool, analysed from the command line.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/cli_runner.h"
#include "tests/support/temp_dir.h"

namespace {

using fusebox::test::CliResult;

CliResult run_cli(const std::string& args) { return fusebox::test::run_cli("trace " + args); }

// `fusebox trace ARGS` in `sh -c` after `ulimit -f KB` (a file size limit), stderr with stdout;
// code -1 when it died of a signal.
CliResult run_under_fsize(int kb, const std::string& args) {
  return fusebox::test::run_shell("sh -c 'ulimit -f " + std::to_string(kb) + "; exec " +
                                  std::string(FUSEBOX_CLI) + " trace " + args + "' 2>&1");
}

std::string trace(const std::string& name) {
  return std::string(FUSEBOX_SOURCE_DIR) + "/tests/data/traces/" + name;
}

std::string temp_dir() {
  static const std::string d = [] {
    std::string p = ::testing::TempDir() + "/fusebox-trace-cli-" + std::to_string(getpid());
    if (mkdir(p.c_str(), 0755) == 0) fusebox::test::remove_at_exit(p);
    return p;
  }();
  return d;
}

// The A100 AlexNet trace: host-bound (the GPU waits on the host most of the window), pageable
// host-to-device copies, and the analysis's sections in the text.
TEST(TraceCommand, AnAlexNetTraceIsAnalysedTopDown) {
  CliResult r = run_cli(trace("kineto_a100_alexnet.json.gz"));
  ASSERT_EQ(r.code, 0) << r.out;
  // Its distributedInfo names rank 0 and no world size: not "rank 0 of 0".
  EXPECT_NE(r.out.find("kineto trace, 1408 events (3 skipped), rank 0\n"), std::string::npos) << r.out;
  for (const char* part : {"kineto trace, 1408 events", "GPU time split", "idle time by cause", "kernels by name",
                           "kernels by launching host span", "aten::cudnn_convolution", "pageable", "longest idle gaps",
                           "findings"})
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
}

// The JSON: findings ordered by time lost, the first of the CloverLeaf trace's naming its pageable
// copies or its idle GPU, and every kernel launched from a runtime call.
TEST(TraceCommand, JsonFindingsAreOrderedByTimeLost) {
  CliResult r = run_cli(trace("nsys_a100_cloverleaf.sqlite") + " --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["format"], "nsys");
  EXPECT_EQ(j["kernel_count"], 1312);
  EXPECT_EQ(j["launch"]["correlated"], 1312);
  ASSERT_GE(j["findings"].size(), 2u);
  for (size_t i = 1; i < j["findings"].size(); ++i)
    EXPECT_GE(j["findings"][i - 1]["time_lost_ns"].get<int64_t>(), j["findings"][i]["time_lost_ns"].get<int64_t>());
  bool pageable = false;
  for (const auto& c : j["copies"]) pageable = pageable || c["pageable"].get<bool>();
  EXPECT_TRUE(pageable) << "CloverLeaf copies host to device from pageable memory";
}

// --chrome converts an nsys export to a Chrome trace that reads back with the same totals.
TEST(TraceCommand, AnNsysExportConvertsToAChromeTraceWithTheSameTotals) {
  const std::string out = temp_dir() + "/cloverleaf.json";
  CliResult r = run_cli(trace("nsys_a100_cloverleaf.sqlite") + " --json --chrome " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  CliResult again = run_cli(out + " --json");
  ASSERT_EQ(again.code, 0) << again.out;
  const auto a = nlohmann::json::parse(r.out), b = nlohmann::json::parse(again.out);
  for (const char* key : {"kernel_count", "kernel_ns", "memcpy_count", "memcpy_bytes", "memcpy_ns"})
    EXPECT_EQ(a[key], b[key]) << key;
  EXPECT_EQ(a["devices"][0]["idle_ns"], b["devices"][0]["idle_ns"]);
}

// --save writes the trace as it was read (before the analysis aligns a skewed host clock), so
// the saved form opens to the same analysis, figure for figure, warnings included.
TEST(TraceCommand, ASavedTraceOpensToTheSameAnalysis) {
  const std::string out = temp_dir() + "/piecewise.fbx";
  const std::string path = trace("mi300x_vllm_prefilldecode_piecewise.json.gz");
  CliResult r = fusebox::test::run_cli("trace " + path + " --json --save " + out, /*with_stderr=*/false);
  ASSERT_EQ(r.code, 0) << r.out;
  CliResult again = fusebox::test::run_cli("trace " + out + " --json", /*with_stderr=*/false);
  ASSERT_EQ(again.code, 0) << again.out;
  auto a = nlohmann::json::parse(r.out), b = nlohmann::json::parse(again.out);
  EXPECT_EQ(b["format"], "saved kineto");
  EXPECT_FALSE(a["analysis_warnings"].empty()) << "the trace's clock offset is found again";
  for (auto* j : {&a, &b}) j->erase("file"), j->erase("format");
  EXPECT_EQ(a, b);
  CliResult text = run_cli(out);
  EXPECT_NE(text.out.find(out + ": saved kineto trace, "), std::string::npos) << text.out;
  CliResult ranks = run_cli(path + " " + path + " --save " + temp_dir() + "/two.fbx");
  EXPECT_EQ(ranks.code, 2);
  EXPECT_NE(ranks.out.find("--save"), std::string::npos) << ranks.out;
}

// Bad input: exit 2 with the file named, never a crash or a hang.
TEST(TraceCommand, BadFilesAreRefusedByNameWithExit2) {
  const std::string dir = temp_dir();
  std::ofstream(dir + "/scenario.json") << R"({"name": "x", "model": "mlp"})";
  std::ofstream(dir + "/empty.json.gz");
  const std::string fifo = dir + "/fifo.json";
  unlink(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // A folder stands for the traces in it (the ranks of a job): one without any is refused.
  const std::string no_traces = dir + "/no-traces";
  mkdir(no_traces.c_str(), 0755);
  std::ofstream(no_traces + "/notes.txt") << "not a trace";
  for (const std::string& bad :
       {dir + "/scenario.json", dir + "/empty.json.gz", fifo, dir + "/missing.sqlite", no_traces}) {
    CliResult r = run_cli(bad);
    EXPECT_EQ(r.code, 2) << bad << ": " << r.out;
    EXPECT_NE(r.out.find(bad), std::string::npos) << r.out;
  }
  // A truncated gzip'd trace.
  std::ifstream in(trace("kineto_a100_alexnet.json.gz"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::ofstream(dir + "/half.json.gz", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  CliResult r = run_cli(dir + "/half.json.gz");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("truncated"), std::string::npos) << r.out;
}

}  // namespace

// Two ranks of one job: both named with their step times, the straggler, the per-file analyses
// under --json; traces of two jobs, a rank given twice and a folder of them answered with exit 2.
TEST(TraceCommand, RanksOfOneJobSideBySideAndTracesOfTwoJobsRefused) {
  const std::string r0 = trace("a100_2rank_nccl/kineto_a100_2rank_nccl_rank0.json.gz"),
                    r1 = trace("a100_2rank_nccl/kineto_a100_2rank_nccl_rank1.json.gz");
  CliResult r = run_cli(r1 + " " + r0);
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* part : {"ranks: 2 given of a world of 128", "0       615.12 ms", "1       619.27 ms",
                           "rank 1 is the straggler", "rank 0 (kineto trace"})
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
  CliResult j = fusebox::test::run_cli("trace " + r0 + " " + r1 + " --json", /*with_stderr=*/false);
  ASSERT_EQ(j.code, 0) << j.out;
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["ranks"]["straggler"], 1);
  EXPECT_EQ(doc["ranks"]["steps"], nlohmann::json::array({551, 552}));
  EXPECT_EQ(doc["files"].size(), 2u);
  CliResult two_jobs = run_cli(r0 + " " + trace("kineto_nccl_collective_args.json.gz"));
  EXPECT_EQ(two_jobs.code, 2);
  EXPECT_NE(two_jobs.out.find("world_size 2, but"), std::string::npos) << two_jobs.out;
  CliResult twice = run_cli(r0 + " " + r0);
  EXPECT_EQ(twice.code, 2);
  EXPECT_NE(twice.out.find("are both rank 0"), std::string::npos) << twice.out;
  CliResult exports = run_cli(r0 + " " + r1 + " --chrome " + temp_dir() + "/x.json");
  EXPECT_EQ(exports.code, 2);
}

// vLLM's piecewise HIP graphs: replays reported, no graph candidate among replayed kernels, and
// the clock offset warned on stderr with --json.
TEST(TraceCommand, GraphReplaysAreReportedNotProposed) {
  const std::string path = trace("mi300x_vllm_prefilldecode_piecewise.json.gz");
  CliResult r = run_cli(path + " --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j =
      nlohmann::json::parse(fusebox::test::run_cli("trace " + path + " --json", false).out);
  EXPECT_EQ(j["graphs"]["replays"], 25);
  EXPECT_EQ(j["graphs"]["kernels"], 361);
  EXPECT_TRUE(j["graph_candidates"].empty());
  EXPECT_EQ(j["findings"][0]["kind"], "gpu_bound");
  EXPECT_EQ(j["phases"]["phases"][0]["name"], "mixed");
  EXPECT_NE(r.out.find("host/GPU clock offset"), std::string::npos);
}

// Past a file size limit (ulimit -f) an export fails with a sentence naming the file, exit 2,
// not a death by SIGXFSZ, and leaves no temporary beside it.
TEST(TraceCommand, AFileSizeLimitIsALocatedErrorNotASignal) {
  const std::string dir = temp_dir() + "/fsize";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const CliResult r =
      run_under_fsize(1, trace("kineto_a100_alexnet.json.gz") + " --chrome " + dir + "/out.json");
  EXPECT_EQ(r.code, 2) << "(-1: died of a signal)\n" << r.out;
  EXPECT_NE(r.out.find("cannot write '" + dir + "/out.json': File too large"), std::string::npos)
      << r.out;
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "nothing written, no temporary";
}

// `--kernels`: the shipped Nsight Compute exports (RTX 5090) beside a kineto trace whose kernels
// are named as kineto names them (namespaces, return type): each profiled launch matched by its
// base name and launch geometry (profiler/kernel_link.h), the rest counted.
TEST(TraceCommand, AnNcuExportBesideATraceGivesTheTopKernelsTheirLimiter) {
  const std::string path = temp_dir() + "/kernels_trace.json";
  {
    nlohmann::json events = nlohmann::json::array();
    auto kernel = [&](const std::string& name, double ts, double dur, std::array<int, 3> grid, std::array<int, 3> block,
                      int corr) {
      events.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", name}, {"pid", 0}, {"tid", 7}, {"ts", ts}, {"dur", dur},
                        {"args", {{"device", 0}, {"stream", 7}, {"correlation", corr}, {"grid", grid}, {"block", block}}}});
      events.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaLaunchKernel"}, {"pid", 100}, {"tid", 100},
                        {"ts", ts - 5}, {"dur", 3}, {"args", {{"correlation", corr}}}});
    };
    double t = 10;
    for (int i = 0; i < 3; ++i) {
      kernel("fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t, "
             "cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)",
             t, 160.7, {4, 12, 54}, {32, 4, 1}, 100 + 3 * i);
      t += 170;
      kernel("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, "
             "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3>)",
             t, 6.3, {1142, 1, 1}, {128, 1, 1}, 101 + 3 * i);
      t += 10;
      kernel("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float> >(at::native::ReduceOp<float>)", t, 20,
             {64, 1, 1}, {512, 1, 1}, 102 + 3 * i);
      t += 25;
    }
    std::ofstream(path) << nlohmann::json{{"traceEvents", events}}.dump();
  }
  const std::string ncu = std::string(FUSEBOX_SOURCE_DIR) + "/tests/data/ncu/rtx5090_deepseek_ocr";
  const CliResult r = run_cli(path + " --kernels " + ncu);
  ASSERT_EQ(r.code, 0) << r.out;
  // 1 fmha launch and the 4 vectorized_elementwise_kernel launches (1 at the trace's geometry) of 14.
  EXPECT_NE(r.out.find("5 of 14 profiled launches matched to the trace's kernels; 9 matched none"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("fmha_cutlassF_bf16_aligned_64x64_rf_sm80  grid (4, 12, 54), block (32, 4, 1)\n"
                       "          ncu (name and launch, 1 launch): limiter DRAM"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("reduce_kernel  grid (64, 1, 1), block (512, 1, 1)\n          no profiled launch"),
            std::string::npos)
      << r.out;
  const CliResult j = fusebox::test::run_cli("trace " + path + " --kernels " + ncu + " --json", false);
  ASSERT_EQ(j.code, 0) << j.out;
  const nlohmann::json k = nlohmann::json::parse(j.out).at("kernel_level");
  EXPECT_EQ(k.at("ncu_launches"), 14);
  EXPECT_EQ(k.at("ncu_matched"), 5);
  const nlohmann::json& vec = k.at("groups")[2];
  EXPECT_EQ(vec.at("base_name"), "vectorized_elementwise_kernel");
  EXPECT_EQ(vec.at("match"), "name and launch");
  EXPECT_EQ(vec.at("ncu").size(), 4u);
  EXPECT_EQ(vec.at("ncu")[0].at("id"), "0") << "the launch at the trace's geometry first";
  // A missing export is a located error, exit 2; --kernels takes one trace.
  const CliResult bad = run_cli(path + " --kernels " + temp_dir() + "/no-such.csv");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("no-such.csv"), std::string::npos) << bad.out;
  const CliResult two = run_cli(path + " " + path + " --kernels " + ncu);
  EXPECT_EQ(two.code, 2);
  EXPECT_NE(two.out.find("--kernels take one trace"), std::string::npos) << two.out;
}

// A report that does not reach stdout whole is an error (exit 2, saying so), not exit 0 with an
// empty or truncated file: stdout on /dev/full, and on a file past `ulimit -f`.
TEST(TraceCommand, AReportThatCannotBeWrittenToStdoutIsAnError) {
  const std::string dir = temp_dir() + "/stdout_full";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (const std::string& to : {std::string("/dev/full"), dir + "/report.json"}) {
    const CliResult r =
        run_under_fsize(4, trace("kineto_a100_alexnet.json.gz") + " --json > " + to);
    EXPECT_EQ(r.code, 2) << to << " (-1: died of a signal)\n" << r.out;
    EXPECT_NE(r.out.find("cannot write the output to stdout"), std::string::npos) << to << "\n"
                                                                                  << r.out;
  }
}
