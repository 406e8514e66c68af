// The Nsight Compute reader (profiler/ncu_report.h) on exports written here: numbers as ncu
// writes them, a folder's files merged per launch, the --page raw layout, `==PROF==` lines, and
// bad input (another tool's CSV, a truncated row, an unterminated quote, a locale's decimal
// comma): a located error or a counted warning, never a wrong number. The shipped exports are
// checked figure by figure against Python's csv module (tests/traces/ncu_figures.py).
#include "profiler/ncu_report.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/base/error.h"
#include "tests/profiler/ncu_csv.h"

namespace fusebox::profiler {
namespace {

const char* const kHeader = ptest::kNcuDetailsHeader;

std::string row(const std::string& id, const std::string& section, const std::string& metric,
                const std::string& unit, const std::string& value) {
  return "\"" + id + "\",\"1\",\"python\",\"host\",\"gemv<float, 4>(T1)\",\"1\",\"7\",\"(32, 4, 1)\",\"(224, 1, 1)\","
         "\"0\",\"12.0\",\"" + section + "\",\"" + metric + "\",\"" + unit + "\",\"" + value + "\",\n";
}

std::string write(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string error_of(const std::string& path) {
  try {
    read_ncu(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

const std::string kSol = "GPU Speed Of Light Throughput";

TEST(NcuReport, NumbersAsNcuWritesThemAndUnitsToTheirBase) {
  const std::string p = write("ncu_numbers.csv",
                              std::string("==PROF== Connected to process 1\n") + kHeader +
                                  row("0", kSol, "Elapsed Cycles", "cycle", "13,485") +
                                  row("0", kSol, "SM Active Cycles", "cycle", "9,495.42") +
                                  row("0", kSol, "Duration", "msecond", "1.5") +
                                  row("0", "Memory Workload Analysis", "Memory Throughput", "Tbyte/s", "1.25") +
                                  row("0", kSol, "DRAM Throughput", "%", "n/a") +
                                  "==PROF== Disconnected from process 1\n");
  const NcuReport r = read_ncu(p);
  ASSERT_EQ(r.kernels.size(), 1u);
  const NcuKernel& k = r.kernels[0];
  EXPECT_EQ(k.name, "gemv<float, 4>(T1)");
  EXPECT_EQ(k.block, "(32, 4, 1)");
  EXPECT_EQ(*k.find("Elapsed Cycles")->value, 13485.0);
  EXPECT_EQ(*k.find("SM Active Cycles")->value, 9495.42);
  EXPECT_FALSE(k.find("DRAM Throughput")->value) << "n/a is no number";
  EXPECT_TRUE(r.warnings.empty()) << r.warnings[0];
  const KernelFigures f = kernel_figures(k);
  EXPECT_EQ(*f.duration_ns, 1.5e6);
  EXPECT_EQ(*f.dram_gbytes_per_s, 1250.0);
  EXPECT_FALSE(f.dram_throughput_pct);
  EXPECT_EQ(f.limiter, "") << "no SOL throughput with a number";
  EXPECT_NE(kernel_figures_text(f).find("occupancy: not in this report (needs section Occupancy)"), std::string::npos);
}

TEST(NcuReport, ADecimalCommaIsKeptAsTextAndCountedNeverReadAsANumber) {
  const std::string p = write("ncu_locale.csv", std::string(kHeader) + row("0", kSol, "Duration", "us", "6,75") +
                                                    row("0", kSol, "DRAM Throughput", "%", "9.495,42") +
                                                    row("0", kSol, "L2 Cache Throughput", "%", "1,2345"));
  const NcuReport r = read_ncu(p);
  const KernelFigures f = kernel_figures(r.kernels[0]);
  EXPECT_FALSE(f.duration_ns);
  EXPECT_FALSE(f.dram_throughput_pct);
  EXPECT_FALSE(f.l2_throughput_pct);
  ASSERT_EQ(r.warnings.size(), 3u);
  EXPECT_NE(r.warnings[0].find("not a number as ncu writes one"), std::string::npos) << r.warnings[0];
}

TEST(NcuReport, LaunchesAreKernelsAndAFoldersFilesMergePerLaunch) {
  const std::string dir = ::testing::TempDir() + "/ncu_folder";
  std::filesystem::remove_all(dir);
  write("ncu_folder/k1/ncu.details.csv", std::string(kHeader) + row("0", kSol, "Duration", "us", "6.75") +
                                             row("1", kSol, "Duration", "us", "2"));
  write("ncu_folder/k1/ncu.section_Occupancy.csv",
        std::string(kHeader) + row("0", "Occupancy", "Block Limit Registers", "block", "2") +
            row("0", "Occupancy", "Block Limit Warps", "block", "12") +
            row("0", "Occupancy", "Theoretical Occupancy", "%", "16.67"));
  write("ncu_folder/k2/ncu.details.csv", std::string(kHeader) + row("0", kSol, "Duration", "us", "3"));
  write("ncu_folder/notes.csv", "a,b\n1,2\n");  // not ncu's: left out of a folder
  const NcuReport r = read_ncu(dir);
  ASSERT_EQ(r.kernels.size(), 3u);
  const KernelFigures f = kernel_figures(r.kernels[0]);
  EXPECT_EQ(*f.duration_ns, 6750.0);
  EXPECT_EQ(f.occupancy_limiter, "registers");
  EXPECT_EQ(*f.occupancy_limit_blocks, 2.0);
  EXPECT_EQ(*f.theoretical_occupancy_pct, 16.67);
  EXPECT_EQ(*kernel_figures(r.kernels[1]).duration_ns, 2000.0);
  EXPECT_EQ(*kernel_figures(r.kernels[2]).duration_ns, 3000.0) << "ID 0 of another folder is another kernel";
}

TEST(NcuReport, TheRawPageHasOneRowPerLaunchAndARowOfUnits) {
  const std::string p = write("ncu_raw.csv",
                              "\"ID\",\"Kernel Name\",\"Block Size\",\"Grid Size\",\"gpu__time_duration.sum\","
                              "\"dram__bytes_read.sum\"\n"
                              "\"\",\"\",\"\",\"\",\"usecond\",\"Mbyte\"\n"
                              "\"0\",\"k_a\",\"(128, 1, 1)\",\"(80, 1, 1)\",\"12.5\",\"1,024\"\n"
                              "\"1\",\"k_b\",\"(256, 1, 1)\",\"(40, 1, 1)\",\"3\",\"n/a\"\n");
  const NcuReport r = read_ncu(p);
  ASSERT_EQ(r.kernels.size(), 2u);
  EXPECT_EQ(r.kernels[0].name, "k_a");
  EXPECT_EQ(*kernel_figures(r.kernels[0]).duration_ns, 12500.0);
  EXPECT_EQ(*r.kernels[0].find("dram__bytes_read.sum")->value, 1024.0);
  EXPECT_EQ(r.kernels[0].find("dram__bytes_read.sum")->unit, "Mbyte");
  EXPECT_EQ(*kernel_figures(r.kernels[1]).duration_ns, 3000.0);
}

TEST(NcuReport, BadInputIsALocatedError) {
  EXPECT_NE(error_of(write("ncu_foreign.csv", "name,value\nx,1\n")).find("ncu_foreign.csv:1: not an Nsight Compute export"),
            std::string::npos);
  const std::string truncated = std::string(kHeader) + row("0", kSol, "Duration", "us", "6.75") +
                                "\"0\",\"1\",\"python\",\"host\",\"k\",\"1\",\"7\"\n";
  EXPECT_NE(error_of(write("ncu_truncated.csv", truncated)).find("ncu_truncated.csv:3: 7 fields, the header has 20"),
            std::string::npos)
      << error_of(write("ncu_truncated.csv", truncated));
  EXPECT_NE(error_of(write("ncu_quote.csv", std::string(kHeader) + "\"0\",\"unterminated\n")).find(
                "ncu_quote.csv:2: a quoted field that never ends"),
            std::string::npos);
  EXPECT_NE(error_of(write("ncu_empty.csv", "")).find("no CSV rows"), std::string::npos);
  EXPECT_NE(error_of(write("ncu_header_only.csv", kHeader)).find("no kernel launches"), std::string::npos);
  const std::string empty_dir = ::testing::TempDir() + "/ncu_empty_dir";
  std::filesystem::create_directories(empty_dir);
  EXPECT_NE(error_of(empty_dir).find("no Nsight Compute CSV export"), std::string::npos);
}

}  // namespace
}  // namespace fusebox::profiler
