#pragma once
// The fine-grained level of the top-down workflow: inside one kernel, from its Nsight Compute
// report (ncu_report.h). Our seed's list of in-kernel bottlenecks, each mapped to the ncu metrics
// that reveal it, and the kernel's place on ncu's FP32 roofline.
//
// Definitions (metric names from the Nsight Compute Kernel Profiling Guide; a metric is looked
// for in any section, as `--page raw` and `--metrics` put them under other section names):
//   occupancy          Occupancy section: theoretical (set by the smallest "Block Limit *") and
//                      achieved occupancy. At 100% theoretical nothing limits it: the hardware's
//                      warp maximum is reached, and no limiter is named.
//   latency            Scheduler Statistics: "No Eligible" % of cycles with no warp ready to issue,
//                      issued warps per scheduler per cycle (1.0 is the peak).
//   wave tail          waves = grid blocks / (blocks per SM x SMs), blocks per SM the smallest
//                      block limit, SMs from LaunchStats ("# SMs", launch__sm_count) or ncu's own
//                      "Waves Per SM". Under one wave, the SMs' block slots left empty all kernel
//                      long are 1 - waves; above, the last wave's empty slots over all waves'
//                      slots, (ceil(w) - w) / ceil(w) (the tail effect ncu's LaunchStats rules
//                      describe). That share is our estimate of the time at stake.
//   tile quantization  needs the GEMM's M, N, K against its tile: no ncu section holds them.
//   L2 misses          Memory Workload Analysis "L2 Hit Rate": 100 - hit % of L2 requests go to
//                      DRAM; dram__bytes_read.sum where the report has it.
//   bank conflicts     l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}.sum against
//                      l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum (section
//                      MemoryWorkloadAnalysis_Tables, or --metrics).
//   spills             local memory traffic, l1tex__t_bytes_pipe_lsu_mem_local_op_{ld,st}.sum:
//                      registers spilled to local memory (same section).
//   atomics            l1tex__t_requests_pipe_lsu_mem_global_op_{atom,red}.sum: global atomics and
//                      reductions issued by the SMs (same section).
//   inter-SM traffic   lts__t_sectors_op_{atom,red}.sum: atomics and reductions resolved in L2, the
//                      one place the SMs share; what one SM writes for another goes through it.
//   divergence         smsp__thread_inst_executed_per_inst_executed.ratio ("Avg. Active Threads
//                      Per Warp", section WarpStateStats or InstructionStats): of 32 threads.
// Order: by estimated gain, largest first. A gain is ncu's own estimated speedup for the rule of
// that item where the report holds one (TheoreticalOccupancy and AchievedOccupancy for occupancy,
// IssueSlotUtilization for latency), or ours where the definition above gives one (the wave
// tail). Items measured without an estimate follow in the list's order; then the items the
// report cannot tell, each naming the section or metrics that would.
//
// FP32 roofline (ncu's SpeedOfLight_RooflineChart section, "Single Precision"):
//   achieved FLOP/s  = (Predicated-On FFMA Operations Per Cycle + FADD + FMUL thread instructions
//                      per cycle) x SM Frequency   (an FFMA counts 2 operations)
//   peak FLOP/s      = Theoretical Predicated-On FFMA Operations x SM Frequency
//   DRAM peak        = Theoretical DRAM Bytes Accessible (byte/cycle) x DRAM Frequency
//   intensity        = achieved FLOP/s / achieved DRAM bandwidth ("DRAM Bandwidth")
//   roof             = min(peak FLOP/s, intensity x DRAM peak); the kernel is memory-bound left
//                      of the ridge (peak FLOP/s / DRAM peak), compute-bound right of it.
// Only FP32 FMA/ADD/MUL are on it: tensor-core, half-precision and integer work is not, so a
// tensor-core GEMM sits low on this chart; that is said, not hidden. L1 and L2 points need the
// hierarchical chart (section SpeedOfLight_HierarchicalSingleRooflineChart).
#include <optional>
#include <string>
#include <vector>

namespace fusebox::profiler {

// ncu_report.h holds these, and KernelFigures holds a GpuRoofline and the findings.
struct NcuKernel;
struct NcuMetric;
struct KernelFigures;

// A kernel's place on the FP32 roofline at DRAM; absent figures mean the section is not there.
struct GpuRoofline {
  std::optional<double> achieved_flops, peak_flops;  // FLOP/s
  std::optional<double> dram_bytes_per_s, dram_peak_bytes_per_s;
  std::optional<double> intensity;      // FLOP per DRAM byte
  std::optional<double> roof_flops;     // the roof at that intensity
  std::optional<double> pct_of_roof;    // achieved / roof, in [0, 100]
  std::string bound;                    // "memory" | "compute" | "" (not placed)
  std::string note;                     // why it is not placed, or what the chart leaves out
};
GpuRoofline gpu_roofline(const NcuKernel& k);

struct KernelFinding {
  std::string item;     // "occupancy", "latency", "wave tail", "tile quantization", ...
  bool measured = false;  // the report holds what reveals it
  std::string text;     // a sentence with its number, or "not in this report (needs ...)"
  std::optional<double> gain_pct;  // estimated share of the kernel's time at stake
  std::string gain_source;         // "ncu TheoreticalOccupancy", "ours: wave tail", ""
  std::string needs;               // what would tell it, when not measured
};
// The items, in the list's order: "occupancy", "latency", "wave tail", "tile quantization",
// "L2 misses", "bank conflicts", "spills", "atomics", "inter-SM traffic", "divergence".
const std::vector<std::string>& kernel_finding_items();
// The seed's list for one kernel, ordered as the header says.
std::vector<KernelFinding> kernel_findings(const NcuKernel& k, const KernelFigures& f);

// The value of `m` converted to its family's base unit: ns, bytes, bytes/s, Hz; as written for
// the others ("%", "inst/cycle"). Null when absent or not a number.
std::optional<double> ncu_in_base(const NcuMetric* m);

}  // namespace fusebox::profiler
