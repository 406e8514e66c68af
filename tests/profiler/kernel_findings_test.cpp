// The fine-grained level (profiler/kernel_findings.h) on exports written here, each figure worked
// out by hand from the definitions: the wave tail from the grid, the block limit and the SM count,
// the counters of bank conflicts, spills, atomics and divergence, the order by estimated gain, and
// the FP32 roofline at DRAM. The shipped exports' roofline is checked against Python
// (tests/traces/ncu_figures.py).
#include "profiler/kernel_findings.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "profiler/ncu_report.h"
#include "tests/profiler/ncu_csv.h"

namespace fusebox::profiler {
namespace {

const char* const kHeader = ptest::kNcuDetailsHeader;

std::string row(const std::string& section, const std::string& metric, const std::string& unit,
                const std::string& value, const std::string& grid = "(224, 1, 1)") {
  return "\"0\",\"1\",\"python\",\"host\",\"gemv<float, 4>(T1)\",\"1\",\"7\",\"(32, 4, 1)\",\"" + grid +
         "\",\"0\",\"12.0\",\"" + section + "\",\"" + metric + "\",\"" + unit + "\",\"" + value + "\",\n";
}

std::string rule(const std::string& section, const std::string& name, const std::string& speedup) {
  return "\"0\",\"1\",\"python\",\"host\",\"gemv<float, 4>(T1)\",\"1\",\"7\",\"(32, 4, 1)\",\"(224, 1, 1)\","
         "\"0\",\"12.0\",\"" + section + "\",\"\",\"\",\"\",\"" + name + "\",\"OPT\",\"advice\",\"global\",\"" +
         speedup + "\"\n";
}

KernelFigures figures_of(const std::string& name, const std::string& rows) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << kHeader << rows;
  const NcuReport r = read_ncu(path);
  EXPECT_EQ(r.kernels.size(), 1u);
  return kernel_figures(r.kernels.at(0));
}

const KernelFinding& item(const KernelFigures& f, const std::string& name) {
  for (const KernelFinding& x : f.findings)
    if (x.item == name) return x;
  throw std::runtime_error("no finding " + name);
}

const std::string kOcc = "Occupancy", kMem = "Command line profiler metrics";

TEST(KernelFindings, EachItemFromTheMetricsThatRevealItOrderedByEstimatedGain) {
  const KernelFigures f = figures_of(
      "findings_all.csv",
      row(kOcc, "Theoretical Occupancy", "%", "16.67") + row(kOcc, "Achieved Occupancy", "%", "11.32") +
          row(kOcc, "Block Limit Registers", "block", "2") + row(kOcc, "Block Limit Warps", "block", "12") +
          row("Launch Statistics", "# SMs", "SM", "170") +
          row("Scheduler Statistics", "No Eligible", "%", "87.94") +
          row("Memory Workload Analysis", "L2 Hit Rate", "%", "27.66") +
          row(kMem, "dram__bytes_read.sum", "Mbyte", "2.33") +
          row(kMem, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "", "1,000") +
          row(kMem, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "", "24") +
          row(kMem, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "", "3,000") +
          row(kMem, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "", "1,096") +
          row(kMem, "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum", "Kbyte", "2") +
          row(kMem, "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum", "byte", "48") +
          row(kMem, "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum", "", "7") +
          row(kMem, "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum", "", "5") +
          row(kMem, "lts__t_sectors_op_atom.sum", "", "30") + row(kMem, "lts__t_sectors_op_red.sum", "", "12") +
          row(kMem, "smsp__thread_inst_executed_per_inst_executed.ratio", "", "21.5") +
          rule("Occupancy", "TheoreticalOccupancy", "50"));
  // 224 blocks over 2 blocks per SM on 170 SMs: 224 / 340 = 0.65882 of a wave, 34.118% empty.
  const KernelFinding& w = item(f, "wave tail");
  ASSERT_TRUE(w.measured && w.gain_pct);
  EXPECT_NEAR(*w.gain_pct, 100.0 * (1 - 224.0 / 340.0), 1e-9);
  EXPECT_NE(w.text.find("0.66 of one wave"), std::string::npos) << w.text;
  EXPECT_EQ(item(f, "occupancy").gain_source, "ncu TheoreticalOccupancy");
  EXPECT_NE(item(f, "bank conflicts").text.find("1024 shared-memory bank conflicts in 4096 shared wavefronts (25.0%)"),
            std::string::npos) << item(f, "bank conflicts").text;
  EXPECT_NE(item(f, "spills").text.find("2048 bytes"), std::string::npos) << item(f, "spills").text;
  EXPECT_NE(item(f, "atomics").text.find("12 global atomic"), std::string::npos);
  EXPECT_NE(item(f, "inter-SM traffic").text.find("42 L2 sectors"), std::string::npos);
  EXPECT_NE(item(f, "divergence").text.find("21.5 of 32 threads"), std::string::npos);
  EXPECT_NE(item(f, "L2 misses").text.find("72.34% of L2 requests miss"), std::string::npos);
  EXPECT_NE(item(f, "L2 misses").text.find("2.33 MB read"), std::string::npos);
  EXPECT_FALSE(item(f, "tile quantization").measured) << "no ncu section holds a GEMM's sizes";
  // Order: the estimates, largest first (occupancy 50 > wave tail 34.1), then the measured ones
  // without an estimate in the list's order, then tile quantization (not measured).
  ASSERT_EQ(f.findings.size(), 10u);
  EXPECT_EQ(f.findings[0].item, "occupancy");
  EXPECT_EQ(f.findings[1].item, "wave tail");
  EXPECT_EQ(f.findings[2].item, "latency");
  EXPECT_EQ(f.findings.back().item, "tile quantization");
}

TEST(KernelFindings, WhatTheReportCannotTellNamesWhatWould) {
  const KernelFigures f = figures_of("findings_none.csv", row("GPU Speed Of Light Throughput", "Duration", "us", "6.75"));
  for (const KernelFinding& x : f.findings) {
    EXPECT_FALSE(x.measured) << x.item;
    EXPECT_FALSE(x.gain_pct) << x.item;
    EXPECT_FALSE(x.needs.empty()) << x.item;
  }
  EXPECT_EQ(item(f, "wave tail").needs, "section LaunchStats: # SMs or Waves Per SM");
  EXPECT_FALSE(f.roofline.pct_of_roof);
  EXPECT_NE(kernel_figures_text(f).find("not in this report: occupancy (section Occupancy)"), std::string::npos)
      << kernel_figures_text(f);
}

TEST(KernelFindings, WavesAboveOneCountTheLastWavesEmptySlots) {
  // ncu's own "Waves Per SM" wins: 2.25 waves -> 3 waves of slots, 0.75 of one empty: 25%.
  const KernelFigures f = figures_of("findings_waves.csv", row("Launch Statistics", "Waves Per SM", "", "2.25"));
  ASSERT_TRUE(item(f, "wave tail").gain_pct);
  EXPECT_DOUBLE_EQ(*item(f, "wave tail").gain_pct, 25.0);
}

TEST(KernelFindings, AtFullTheoreticalOccupancyNothingLimitsIt) {
  const KernelFigures f = figures_of("findings_full.csv", row(kOcc, "Theoretical Occupancy", "%", "100") +
                                                              row(kOcc, "Block Limit Registers", "block", "12") +
                                                              row(kOcc, "Block Limit Warps", "block", "12"));
  EXPECT_EQ(f.occupancy_limiter, "");
  EXPECT_NE(kernel_figures_text(f).find("at the hardware's warp maximum"), std::string::npos);
}

const std::string kChart = "GPU Speed Of Light Roofline Chart";

std::string chart(const std::string& dram_gbs, const std::string& ffma_per_cycle) {
  return row(kChart, "SM Frequency", "Ghz", "2") + row(kChart, "DRAM Frequency", "Ghz", "1") +
         row(kChart, "Theoretical Predicated-On FFMA Operations", "inst", "1,000") +
         row(kChart, "Theoretical DRAM Bytes Accessible", "byte/cycle", "100") +
         row(kChart, "Predicated-On FFMA Operations Per Cycle", "inst", ffma_per_cycle) +
         row(kChart, "Predicated-On FADD Thread Instructions Executed Per Cycle", "inst/cycle", "10") +
         row(kChart, "Predicated-On FMUL Thread Instructions Executed Per Cycle", "inst/cycle", "10") +
         row(kChart, "DRAM Bandwidth", "Gbyte/s", dram_gbs);
}

TEST(KernelFindings, TheFp32RooflineAtDram) {
  // peak 1000 x 2 GHz = 2 TFLOP/s; achieved (100 + 10 + 10) x 2 GHz = 240 GFLOP/s; DRAM peak
  // 100 B x 1 GHz = 100 GB/s; at 60 GB/s the intensity is 4 FLOP/B, the roof min(2000, 400) = 400
  // GFLOP/s: 60% of it, left of the ridge (20 FLOP/B): memory-bound.
  const GpuRoofline r = figures_of("roofline.csv", chart("60", "100")).roofline;
  ASSERT_TRUE(r.pct_of_roof) << r.note;
  EXPECT_DOUBLE_EQ(*r.peak_flops, 2e12);
  EXPECT_DOUBLE_EQ(*r.achieved_flops, 240e9);
  EXPECT_DOUBLE_EQ(*r.dram_peak_bytes_per_s, 100e9);
  EXPECT_DOUBLE_EQ(*r.intensity, 4.0);
  EXPECT_DOUBLE_EQ(*r.roof_flops, 400e9);
  EXPECT_DOUBLE_EQ(*r.pct_of_roof, 60.0);
  EXPECT_EQ(r.bound, "memory");
  // 980 FFMA ops per cycle at 1 GB/s: 2 TFLOP/s at 2000 FLOP/B, right of the ridge, at the peak.
  const GpuRoofline c = figures_of("roofline_compute.csv", chart("1", "980")).roofline;
  EXPECT_EQ(c.bound, "compute");
  EXPECT_DOUBLE_EQ(*c.pct_of_roof, 100.0);
}

TEST(KernelFindings, ARooflineIsNeverDrawnAboveItsRoof) {
  // 120 GB/s against a 100 GB/s peak: the report contradicts itself; not placed, said so.
  const GpuRoofline r = figures_of("roofline_over.csv", chart("120", "100")).roofline;
  EXPECT_FALSE(r.pct_of_roof);
  EXPECT_NE(r.note.find("exceed"), std::string::npos);
  // No FP32 work at all: not on the chart.
  const GpuRoofline z = figures_of("roofline_zero.csv", row(kChart, "SM Frequency", "Ghz", "2") +
                                                         row(kChart, "Theoretical Predicated-On FFMA Operations", "inst", "1000") +
                                                         row(kChart, "Predicated-On FFMA Operations Per Cycle", "inst", "0") +
                                                         row(kChart, "Predicated-On FADD Thread Instructions Executed Per Cycle", "inst/cycle", "0") +
                                                         row(kChart, "Predicated-On FMUL Thread Instructions Executed Per Cycle", "inst/cycle", "0"))
                              .roofline;
  EXPECT_FALSE(z.pct_of_roof);
  EXPECT_NE(z.note.find("no FP32"), std::string::npos);
}

// Hostile figures: an SM clock whose product with the peak passes a double, and a grid whose
// block count does. Nothing is placed, nothing prints inf or nan.
TEST(KernelFindings, FiguresPastADoubleArePlacedNowhere) {
  const std::string huge = "1" + std::string(300, '0');
  std::string rows = chart("60", "100");
  rows.replace(rows.find("\"Ghz\",\"2\""), 9, "\"Ghz\",\"" + huge + "\"");
  const KernelFigures f = figures_of("roofline_huge.csv", rows);
  EXPECT_FALSE(f.roofline.pct_of_roof);
  EXPECT_NE(f.roofline.note.find("out of range"), std::string::npos) << f.roofline.note;
  const std::string text = kernel_figures_text(f);
  EXPECT_EQ(text.find("inf"), std::string::npos) << text;
  EXPECT_EQ(text.find("nan"), std::string::npos) << text;
  const KernelFigures g = figures_of("waves_huge.csv", row("Launch Statistics", "Waves Per SM", "", huge + huge));
  EXPECT_FALSE(item(g, "wave tail").gain_pct) << item(g, "wave tail").text;
  EXPECT_EQ(kernel_figures_text(g).find("nan"), std::string::npos) << kernel_figures_text(g);
}

}  // namespace
}  // namespace fusebox::profiler
