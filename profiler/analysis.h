#pragma once
// Analysis of a recording against the machine's roofline: where the time goes and why.
//  - per op type and per node, per run: calls per run, the median time per run with its p10 and
//    p90 over the runs, and that median as a share of the median run; rows sort by it. Also per
//    call, over all recorded runs: count, total, mean, min, median. An op
//    whose kernels ran on a GPU is timed by their GPU time (device activity: a kernel belongs to
//    the op span its launch call was made in), not by the span, which only measured launching;
//  - achieved GFLOP/s and GB/s (FLOPs and bytes from the op schemas, over the median time);
//  - each op's place against both roofs of a hierarchical roofline (as in Ilic, Pratas and Sousa,
//    "Cache-aware Roofline model", 2014, and ncu's hierarchical roofline chart). No op is ever
//    shown above 100% of a roof: where the model cannot tell, it says so and prints no percentage.
//      compute roof  our GEMM's measured GFLOP/s at these threads; an op faster than that (a
//                    larger GEMM than the one measured) is placed under the FMA peak, the
//                    physical limit (`compute_roof` "FMA peak"); one faster than that has a FLOP
//                    count that overstates its work, and gets none ("");
//      memory roof   the read bandwidth of the level its bytes come from (Roofline::levels: L1,
//                    L2, L3, DRAM at these threads). Which level is not recorded, so it is
//                    bounded from both sides: the bytes cannot come from a level faster than the
//                    first one its working set fits in (its bytes over the threads against L1 and
//                    L2, which are per core; its bytes against L3), and they came from a level at
//                    least as fast as the op ran. The op is placed under the slowest level that
//                    both allow (`memory_level`): the roof it is surely under. An op faster than
//                    the fastest level it fits in reads less than its byte count says (a Gather
//                    counts its whole table, a Slice its whole input): no level, no percentage
//                    (""). Without levels (another backend) the one level is "memory", the
//                    triad bandwidth.
//    "These threads" are the ones the op's kernel ran on (`OpRow::threads`): the threads its
//    Worker spans sit on, or 1 for an op that forked no parallel region, where the recording has
//    Worker spans; the run's thread count where it has none. An op that ran on one thread of two
//    is judged against one thread's roofs, not the machine's.
//    % of each roof is the achieved rate over it. The roof at the op's intensity is
//    min(compute roof, intensity x memory roof), and its share of it (`efficiency`) is the
//    larger of the two percentages: the compute one right of the level's balance point (compute
//    roof / memory roof), the memory one left of it;
//  - a class per op with the numbers that decide it, tried in this order:
//      overhead-bound  the median call is within `overhead_factor` (4) x the dispatch floor, or the
//                      op has no FLOPs and no bytes: calling it costs about as much as doing it;
//      below-roofs     under `below_fraction` (50%) of the roof at its intensity, so under half of
//                      BOTH roofs. Neither roof explains the time: at half the attainable rate
//                      the op spends more time on something else than on what bounds it, and a
//                      2x shortfall is past what a busy machine's noise (a p90/p10 spread of
//                      ~1.3, runner kNoisySpread) or the byte count's no-reuse assumption moves;
//                      the class names the cause when the op says what it is (`reasons`, first
//                      = `reason`):
//                        transcendental  the op or its fused epilogue evaluates tanh, erf, exp or
//                                        sigmoid per element (NodeInfo::math, from the op type
//                                        and its attributes: Gelu's and FusedBiasGelu's
//                                        `approximate`, FusedElementwise's program), which the
//                                        op schemas count as 1 FLOP but cost tens;
//                        latency         the call takes under `latency_factor` (16) x the
//                                        dispatch floor: small enough that per-call costs the
//                                        floor does not count (waking worker threads, cold
//                                        cache lines, kernel setup) can be most of it;
//                        vectorisation   the kernels ran the portable (scalar) ISA level;
//                        unexplained     none of these: the numbers, not a guess;
//      compute-bound   otherwise, when its arithmetic intensity (FLOPs/byte) is at or above the
//                      balance point of its level (compute roof / the level's GB/s);
//      memory-bound    otherwise, named by its level: "L1-bound", "L2-bound", "L3-bound",
//                      "DRAM-bound" (label()); an op with no memory level is memory-bound too (it
//                      beat every roof its byte count allows), never below-roofs.
//    Without the roofline's peaks (0) the class falls back to intensity against balance alone.
//  - each run split into kernel time (inside op spans), gaps between kernels (dispatch), and
//    the edges of the run (input copy-in before the first op, output copy-out after the last);
//  - the comparison of two recordings (e.g. passes off vs on).
#include <map>
#include <string>
#include <vector>

#include "core/ir/node.h"
#include "profiler/recording.h"
#include "profiler/roofline.h"

namespace fusebox::profiler {

struct Stats {
  int64_t count = 0;
  double total_ns = 0, mean_ns = 0, min_ns = 0, median_ns = 0, max_ns = 0;
};
Stats make_stats(std::vector<double> samples_ns);

enum class Bound : uint8_t { Compute, Memory, Overhead, BelowRoofs, Unknown };
const char* bound_name(Bound b);  // "compute-bound", "memory-bound", "overhead-bound", "below-roofs"

// Why a below-roofs op is there (analysis.h's header: the rule for each).
enum class BelowReason : uint8_t { None, Transcendental, Latency, Vectorisation, Unexplained };
const char* below_reason_name(BelowReason r);  // "", "transcendental", "latency", ...

// The transcendental functions `node` evaluates per output element: its op schema's
// (core/ir/op_schema.h: MathClass, each family declaring its ops'), e.g. {"tanh"} for Tanh and a
// tanh-approximated (FusedBias)Gelu, {"exp", "log"} for LogSoftmax, {"sigmoid"} for a Conv with a
// fused sigmoid, a FusedElementwise program's in program order without repeats. Empty for the rest.
std::vector<std::string> transcendental_math(const ir::Node& node);

struct OpRow {
  std::string key;   // op type (by_type) or node name (by_node)
  std::string op;    // op type
  int32_t node = -1; // node index (by_node)
  int64_t instances = 0;  // nodes of this type (by_type); 1 (by_node)
  Stats stats;            // per call
  double flops = 0;       // per call (by_type: mean over its nodes)
  double bytes = 0;
  double gflops = 0;      // achieved, flops / median
  double gbs = 0;         // achieved, bytes / median
  double intensity = 0;   // FLOPs per byte
  double roof_gflops = 0; // attainable at this intensity: min(peak, intensity * bandwidth)
  double efficiency = 0;  // achieved / attainable
  double compute_fraction = 0;  // gflops / compute_roof_gflops (0 when compute_roof is "")
  double memory_fraction = 0;   // gbs / memory_roof_gbs (0 when memory_level is "")
  std::string compute_roof;     // "GEMM", "FMA peak", or "" (faster than both: no roof fits)
  double compute_roof_gflops = 0;
  std::string memory_level;     // "L1", "L2", "L3", "DRAM", "memory" (no levels), or "" (none fits)
  double memory_roof_gbs = 0;
  // The threads its roofs are taken at: those its kernel ran on (threads_by_node), else the run's.
  int threads = 1;
  std::vector<std::string> math;  // transcendental_math of its node (by_type: of all its nodes)
  Bound bound = Bound::Unknown;
  BelowReason reason = BelowReason::None;  // below-roofs: the first of `reasons`
  std::vector<BelowReason> reasons;        // below-roofs: every cause that applies
  std::string why;        // "AI 25.6 FLOP/B >= balance 4.1; 41.2 GFLOP/s = 62% of compute roof ..."
  // "compute-bound", "below-roofs: transcendental (tanh)", ...: the class with its reason.
  std::string label() const;
  double share = 0;       // of all kernel time, summed over every recorded run
  // Per recorded run, what the op table shows and sorts by, so one outlier run cannot reorder it:
  // the op's time in one run (summed over its calls in that run; a run it missed counts 0).
  double calls_per_run = 0;  // median over runs (by_type: all its nodes' calls); "count" everywhere
  double run_median_ns = 0, run_p10_ns = 0, run_p90_ns = 0;
  double run_share = 0;  // run_median_ns / the median run (Breakdown::run_ns)
};

struct Breakdown {
  int64_t runs = 0;
  double run_ns = 0;     // median run (with an even count the lower middle: a run that happened)
  double kernel_ns = 0;  // median (lower) over runs of the time inside op spans
  double gap_ns = 0;     // median (lower) over runs of the time between consecutive ops
  double edge_ns = 0;    // median (lower) over runs of run start->first op + last op->run end
  double kernel_fraction() const { return run_ns > 0 ? kernel_ns / run_ns : 0; }
  double gap_fraction() const { return run_ns > 0 ? gap_ns / run_ns : 0; }
  double edge_fraction() const { return run_ns > 0 ? edge_ns / run_ns : 0; }
  int64_t ops_per_run = 0;
  double flops_per_run = 0;  // every node's FLOPs (op schemas)
  double run_gflops() const { return run_ns > 0 ? flops_per_run / run_ns : 0; }
};

struct AnalysisOptions {
  int64_t skip_runs = 0;         // leading runs to ignore (warm-up)
  double overhead_factor = 4.0;  // "within a few x of the dispatch floor"
  double below_fraction = 0.5;   // below-roofs: under this share of the roof at its intensity
  double latency_factor = 16.0;  // below-roofs' latency reason: under this x the dispatch floor
};

struct Analysis {
  std::vector<OpRow> by_type;  // sorted by median time per run, largest first
  std::vector<OpRow> by_node;  // sorted by median time per run, largest first
  Breakdown breakdown;
  Roofline roofline;
  int threads = 1;
  double below_fraction = 0.5;  // the options' below-roofs threshold it was classified with
  // The median run's GFLOP/s against the physical limit (the FMA peak at these threads), and
  // against the GEMM roof the ops are classified by. 0 when the roofline lacks the figure.
  double fma_fraction() const;
  double gemm_fraction() const;
  std::string to_text(size_t max_nodes = 15) const;
  nlohmann::json to_json() const;
};

// Classifies one op from its time per call (`time_ns`), FLOPs, bytes and math (row.math). Fills
// the rates, both roof fractions, bound, reasons and why.
void classify(OpRow& row, double time_ns, const Roofline& roofline, int threads,
              const AnalysisOptions& options = {});

Analysis analyze(const Recording& recording, const Roofline& roofline, const AnalysisOptions& options = {});

// The threads each node's kernel ran on: the distinct threads of its Worker spans, or 1 for a
// node with none. Empty when the recording has no Worker spans at all (a one-thread run, another
// backend, a recorded trace): then nothing says, and the run's thread count stands.
std::map<int32_t, int> threads_by_node(const Recording& recording);

struct OpTypeDiff {
  std::string op;
  int64_t nodes_a = 0, nodes_b = 0;
  double ns_per_run_a = 0, ns_per_run_b = 0;  // median run's total time in this op type
};
struct NodeChange {
  std::string name;
  std::string what;  // "op Add -> FusedElementwise", "shape [1,64] -> [1,128]"
};
struct Comparison {
  std::string label_a, label_b;
  double run_ns_a = 0, run_ns_b = 0;
  double kernel_ns_a = 0, kernel_ns_b = 0;
  size_t nodes_a = 0, nodes_b = 0;
  size_t arena_a = 0, arena_b = 0;
  std::vector<OpTypeDiff> op_types;   // union of both, by |delta| descending
  std::vector<std::string> new_ops;      // "FusedElementwise.3(ln1.fused)" : in B only
  std::vector<std::string> vanished_ops; // in A only
  std::vector<NodeChange> changed_ops;   // same node name, different op type or shapes
  std::string to_text(size_t max_list = 20) const;
  nlohmann::json to_json() const;
};

Comparison compare(const Recording& a, const Recording& b, int64_t skip_runs = 0);

}  // namespace fusebox::profiler
