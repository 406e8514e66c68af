#pragma once
// Nsight Compute exports, read: the kernel level of the top-down workflow (issue 35).
//
// Formats, told apart by their header row, not their name:
//   - `ncu --csv --page details` (long form): one row per metric of one launch, with its section,
//     unit and value, and ncu's rule rows (rule name, type, description, estimated speedup);
//     the same restricted to sections (`--section X`) has the same columns;
//   - `ncu --csv --page raw` (wide form): a header of metric names, a row of their units, then
//     one row per launch.
// The `==PROF==` lines ncu prints around its output are skipped. Numbers are read as ncu writes
// them ("13,485" with thousands separators, "n/a"); a value that is not a number in that form
// (a locale's decimal comma, "1,5") is kept as text, counted in a warning, never guessed.
//
// KernelFigures are what the report holds, named as ncu names them (Kernel Profiling Guide,
// "Sections and Rules"): each is the CSV's value in a fixed unit, or absent when the section that
// holds it was not collected. Nothing is derived that the report does not say, except:
//   - the limiter: the unit among SM (compute), L1/TEX, L2 and DRAM whose Speed Of Light
//     throughput is highest (ncu's SOL breakdown: "the unit closest to its peak");
//   - the occupancy limiter: the smallest "Block Limit *" (ncu's Occupancy section: theoretical
//     occupancy is set by the resource allowing the fewest blocks per SM), named only below 100%
//     theoretical occupancy (at 100% the hardware's warp maximum is reached: nothing limits it);
//   - the roofline and the fine-grained list (kernel_findings.h).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profiler/kernel_findings.h"

namespace fusebox::profiler {

struct NcuMetric {
  std::string section;  // "GPU Speed Of Light Throughput", "Command line profiler metrics", ...
  std::string name;     // "Duration", "dram__bytes_read.sum"
  std::string unit;     // as written: "us", "Mbyte", "%", "" ...
  std::string text;     // the value as written ("13,485", "n/a")
  std::optional<double> value;  // the number, in `unit`; absent for "n/a" or a non-number
};

struct NcuRule {
  std::string section, name, type;  // "SpeedOfLight", "SOLBottleneck", "OPT" | "INF" | "WRN"
  std::string description;
  std::string speedup_type;         // "local" | "global" | ""
  std::optional<double> speedup;    // ncu's estimated speedup, in %
};

// One profiled launch.
struct NcuKernel {
  std::string id;    // the export's "ID"
  std::string name;  // as ncu prints it (demangled, without the return type's namespace)
  std::string block, grid;  // "(32, 4, 1)"
  std::string device, cc, stream;
  std::string file;  // the export it came from
  std::vector<NcuMetric> metrics;
  std::vector<NcuRule> rules;

  // The metric `name` of `section` (any section when empty), or null.
  const NcuMetric* find(const std::string& name, const std::string& section = "") const;
};

struct NcuReport {
  std::vector<NcuKernel> kernels;     // in file order, then ID order
  std::vector<std::string> warnings;  // one line per kind, with its count
};

// Reads one export, or every .csv file under a folder that is an ncu export (sorted by path; a
// launch found in several files of one folder, e.g. ncu.details.csv and ncu.section_X.csv, is
// one kernel, its metrics merged). Throws fusebox::Error naming the file and line for a CSV
// that is not ncu's, a truncated row or an unterminated quote.
NcuReport read_ncu(const std::string& path);

// Whether a .csv file is an ncu export, from its first 4 KiB only (a "Kernel Name" column): how a
// folder's exports are told from its other files, and the window's open= tells one from a trace.
bool looks_like_ncu_csv(const std::string& path);

// Per-kernel figures in fixed units. Each optional is absent when the report lacks it.
struct KernelFigures {
  std::string name, block, grid;
  std::optional<double> duration_ns;
  std::optional<double> sm_throughput_pct, memory_throughput_pct;  // SOL compute (SM), memory
  std::optional<double> l1_throughput_pct, l2_throughput_pct, dram_throughput_pct;
  std::string limiter;  // "SM" | "L1/TEX" | "L2" | "DRAM" | "" (no SOL section)
  std::optional<double> theoretical_occupancy_pct, achieved_occupancy_pct;
  std::string occupancy_limiter;            // "registers" | "shared memory" | "warps" | "SM" | "barriers"
  std::optional<double> occupancy_limit_blocks;  // the blocks per SM that limit allows
  std::optional<double> l1_hit_pct, l2_hit_pct;
  std::optional<double> dram_gbytes_per_s;  // Memory Workload Analysis "Memory Throughput"
  std::optional<double> eligible_warps, issued_warps, no_eligible_pct;  // per scheduler
  std::vector<NcuRule> rules;               // ncu's, as ncu wrote them
  // Derived, with their definitions in kernel_findings.h: the FP32 roofline at DRAM, and the
  // seed's fine-grained list ordered by estimated gain.
  GpuRoofline roofline;
  std::vector<KernelFinding> findings;
};

KernelFigures kernel_figures(const NcuKernel& k);

// The text `fusebox kernels` prints for one kernel, and its JSON (`fusebox kernels --json`, and
// `fusebox trace --kernels --json` per matched group).
// `findings` false leaves out the fine-grained list (the window draws it as its own rows).
std::string kernel_figures_text(const KernelFigures& f, bool findings = true);
nlohmann::json kernel_figures_json(const KernelFigures& f);

}  // namespace fusebox::profiler
