#pragma once
// Faster, slower or within noise: the one verdict on two latencies, used by the compare panel,
// `fusebox compare` and the scenario checks. The rule, stated:
//   the current side is faster (slower) when the Mann-Whitney U test of the two sides' samples
//   (profiler/stats.h, two-sided) gives p < alpha, AND its median moved by at least min_effect
//   of the baseline's median, AND, when either side is noisy (Latency::noise_warning), the faster
//   side's median lies below the slower side's p10; anything else is "within noise".
// The test alone would call a 0.5% shift on 10,000 quiet samples real; the effect alone would
// call one unlucky stretch of a busy machine real. The test also takes each side's calls as
// independent draws, which they are not when the load changed between the two measurements (a
// busy machine): then only a change larger than either side's spread is called one.
#include <string>

#include "app/workbench/run_result.h"

namespace fusebox::workbench {

enum class Verdict : uint8_t { Faster, Slower, WithinNoise };
const char* verdict_name(Verdict v);  // "faster", "slower", "within noise"

struct NoiseRule {
  double alpha = 0.01;       // the p-value below which the two sides differ
  double min_effect = 0.03;  // |median change| / baseline median that counts as a change
};

struct LatencyVerdict {
  Verdict verdict = Verdict::WithinNoise;
  double p_value = 1;  // Mann-Whitney, two-sided
  double effect = 0;  // (current median - baseline median) / baseline median: -0.2 is 20% less time
  bool noisy = false;           // a side's spread is past kNoisySpread
  bool beyond_spread = false;   // the faster side's median is below the slower side's p10
  NoiseRule rule;
  size_t n_baseline = 0, n_current = 0;  // samples on each side
  // "faster: median -33.3%, p = 1.2e-08 (Mann-Whitney U over 50 + 50 calls; needs p < 0.01 and
  // |change| >= 3%)"
  std::string text() const;
};

LatencyVerdict judge(const Latency& baseline, const Latency& current, const NoiseRule& rule = {});

// The busy-machine rule for measured claims (scenario checks): a run measured while other
// processes took at least this share of the cores, or whose timed calls spread past
// kNoisySpread, describes the load more than the model. A steady load slows every call alike
// (a small spread), so the CPU time of others is the first test.
inline constexpr double kBusyOtherCoresShare = 0.5;
// "" for a quiet run, else why it was busy: "other processes used 1.7 of 2 cores while it
// measured" or Latency::noise_warning().
std::string machine_busy(const RunResult& r);

// Sampling the machine around a measurement (MachineLoad): one sample before, one after.
struct CpuSample {
  double machine_busy_s = -1;  // all CPUs' non-idle time since boot (/proc/stat); -1 unreadable
  double self_s = 0;           // this process's user + system time
  double wall_s = 0;           // a monotonic clock
  static CpuSample now();
};
MachineLoad machine_load(const CpuSample& before, const CpuSample& after);

}  // namespace fusebox::workbench
