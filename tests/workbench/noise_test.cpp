// The latency's one figure and spread, the noise warning, and the faster / slower / within noise
// verdict, all over recorded (synthetic, fixed-seed) sample sets: nothing here times anything.
#include "app/workbench/noise.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>

#include "app/workbench/checks.h"
#include "app/workbench/compare.h"
#include "app/workbench/report.h"
#include "app/workbench/run_result.h"
#include "app/workbench/scenario.h"

namespace fusebox::workbench {
namespace {

// Calls of a model that takes `base_us` on a busy machine: a few percent of jitter on every call,
// and a share `busy` of the calls slowed 1.3x to 1.9x by another process on the same cores. Built
// from mt19937's raw output (defined by the standard) so every library draws the same samples.
std::vector<double> busy_samples(uint32_t seed, size_t n, double base_us, double busy = 0.45) {
  std::mt19937 gen(seed);
  auto uniform = [&] { return (static_cast<double>(gen()) + 0.5) / 4294967296.0; };
  std::vector<double> s;
  for (size_t i = 0; i < n; ++i) {
    double t = base_us * (0.96 + 0.08 * uniform());
    if (uniform() < busy) t *= 1.3 + 0.6 * uniform();
    s.push_back(t);
  }
  return s;
}

std::vector<double> scaled(std::vector<double> s, double by) {
  for (double& x : s) x *= by;
  return s;
}

TEST(Latency, MedianWithP10AndP90) {
  const Latency l = summarize({5, 1, 4, 2, 3, 6, 7, 8, 9, 10});
  EXPECT_DOUBLE_EQ(l.median_us, 5.5);
  EXPECT_DOUBLE_EQ(l.p10_us, 1.9);  // position 0.9 between 1 and 2
  EXPECT_DOUBLE_EQ(l.p90_us, 9.1);
  EXPECT_DOUBLE_EQ(l.min_us, 1);
  EXPECT_DOUBLE_EQ(l.mean_us, 5.5);
  EXPECT_EQ(summarize({5190, 4900, 5600}).text(), "5.19 ms (p10 4.96 ms, p90 5.52 ms)");
  const nlohmann::json j = to_json(summarize({1, 2, 3, 4}));
  EXPECT_DOUBLE_EQ(j["p10"].get<double>(), 1.3);
  EXPECT_DOUBLE_EQ(j["p90"].get<double>(), 3.7);
}

TEST(Latency, WarnsWhenTheSpreadSaysTheMachineWasBusy) {
  const Latency quiet = summarize({1000, 1010, 990, 1005, 995, 1002, 998, 1001, 999, 1003});
  EXPECT_EQ(quiet.noise_warning(), "");
  EXPECT_FALSE(to_json(quiet).contains("noisy"));
  const Latency busy = summarize(busy_samples(1, 60, 1000));
  EXPECT_GT(busy.spread(), kNoisySpread);
  EXPECT_EQ(busy.noise_warning().rfind("noisy: p90 is ", 0), 0u) << busy.noise_warning();
  EXPECT_NE(busy.noise_warning().find("x p10; the machine was busy"), std::string::npos);
  EXPECT_EQ(to_json(busy)["noisy"], busy.noise_warning());
}

// A planner flip changes no compute: both sides draw from one busy machine's distribution. The
// medians still differ by a few percent, which the ratio alone would call a change; the verdict
// does not.
TEST(Verdict, APlannerFlipOnABusyMachineIsWithinNoise) {
  int misleading_ratios = 0;
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    const Latency a = summarize(busy_samples(seed, 50, 1000));
    const Latency b = summarize(busy_samples(seed + 1000, 50, 1000));
    const RunComparison c = RunComparison::of_latencies(a, b);
    EXPECT_EQ(c.verdict.verdict, Verdict::WithinNoise) << seed << ": " << c.verdict.text();
    EXPECT_GE(c.verdict.p_value, 0.01) << seed;
    misleading_ratios += std::fabs(c.speedup() - 1) >= 0.03;
  }
  EXPECT_GT(misleading_ratios, 0) << "the sample sets are noisy enough to fool a bare ratio";
}

TEST(Verdict, ARealOneAndAHalfTimesIsFasterAndTheReverseSlower) {
  const std::vector<double> before = busy_samples(3, 50, 1500, 0.05);  // a quiet machine
  const std::vector<double> after = scaled(busy_samples(4, 50, 1500, 0.05), 1 / 1.5);
  const RunComparison c = RunComparison::of_latencies(summarize(before), summarize(after));
  EXPECT_EQ(c.verdict.verdict, Verdict::Faster) << c.verdict.text();
  EXPECT_LT(c.verdict.p_value, 1e-6);
  EXPECT_LT(c.verdict.effect, -0.2);
  EXPECT_NEAR(c.speedup(), 1.5, 0.15);
  EXPECT_EQ(judge(summarize(after), summarize(before)).verdict, Verdict::Slower);
}

// The same code measured twice while the load changed (one busy call in ten, then six in ten):
// the calls are not independent draws, so the test's p is tiny and the medians far apart, but a
// change whose faster median does not clear the slower side's p10 is not called one. 2.5x still is.
TEST(Verdict, ALoadChangeBetweenTheSidesIsWithinNoiseWhileARealChangeClearsIt) {
  const Latency quieter = summarize(busy_samples(9, 100, 1000, 0.1));
  const Latency busier = summarize(busy_samples(10, 100, 1000, 0.6));
  const LatencyVerdict v = judge(quieter, busier);
  EXPECT_LT(v.p_value, 0.01);
  EXPECT_GT(v.effect, 0.03);
  EXPECT_TRUE(v.noisy);
  EXPECT_FALSE(v.beyond_spread);
  EXPECT_EQ(v.verdict, Verdict::WithinNoise) << v.text();
  EXPECT_NE(v.text().find("a side is noisy and the faster median is not below the slower p10"),
            std::string::npos)
      << v.text();
  const LatencyVerdict twice =
      judge(busier, summarize(scaled(busy_samples(11, 100, 1000, 0.6), 0.4)));
  EXPECT_TRUE(twice.beyond_spread);
  EXPECT_EQ(twice.verdict, Verdict::Faster) << twice.text();
}

TEST(Verdict, ASignificantButTinyShiftIsWithinNoise) {
  // Quiet and many: a 1% shift is certain by the test but under the 3% minimum effect.
  std::vector<double> a, b;
  for (int i = 0; i < 2000; ++i) {
    a.push_back(1000 + (i % 10));
    b.push_back(990 + (i % 10));
  }
  const LatencyVerdict v = judge(summarize(a), summarize(b));
  EXPECT_LT(v.p_value, 1e-10);
  EXPECT_EQ(v.verdict, Verdict::WithinNoise) << v.text();
  EXPECT_EQ(judge(summarize(a), summarize(b), {0.01, 0.005}).verdict, Verdict::Faster);
}

TEST(Verdict, TextAndJsonSayWhatDecidedIt) {
  const RunComparison noise = RunComparison::of_latencies(summarize(busy_samples(5, 40, 1000)),
                                                          summarize(busy_samples(6, 40, 1000)));
  const std::string text = noise.to_text();
  EXPECT_NE(text.find("B against A: within noise: median "), std::string::npos) << text;
  EXPECT_NE(text.find("Mann-Whitney U over 40 + 40 calls; needs p < 0.01 and |change| >= 3%"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("latency (no hooks): A " + noise.latency_a.text()), std::string::npos)
      << text;
  const nlohmann::json j = noise.to_json();
  EXPECT_EQ(j["verdict"]["verdict"], "within noise");
  EXPECT_DOUBLE_EQ(j["verdict"]["p_value"].get<double>(), noise.verdict.p_value);
  EXPECT_DOUBLE_EQ(j["latency_b"]["p90"].get<double>(), noise.latency_b.p90_us);
  const RunComparison real = RunComparison::of_latencies(
      summarize(busy_samples(5, 40, 1000)), summarize(scaled(busy_samples(6, 40, 1000), 0.5)));
  EXPECT_EQ(real.to_json()["verdict"]["verdict"], "faster");
}

}  // namespace
}  // namespace fusebox::workbench

namespace fusebox::workbench {
namespace {

// faster_than over two steps whose results carry only their latencies.
CheckResult faster_than(const std::vector<double>& step0, const std::vector<double>& step1,
                        double ratio) {
  auto result = [](const std::vector<double>& s) {
    auto r = std::make_shared<RunResult>();
    r->latency = summarize(s);
    return std::shared_ptr<const RunResult>(r);
  };
  const std::vector<std::shared_ptr<const RunResult>> results = {result(step0), result(step1)};
  Scenario sc;
  Check c;
  c.kind = "faster_than";
  c.step = 0;
  c.ratio = ratio;
  return check_kinds_registry()
      .get("faster_than")
      .evaluate(CheckInput{sc, c, results[1].get(), results, 1});
}

TEST(FasterThan, NoiseThatMeetsTheRatioDoesNotPass) {
  // The same distribution, and a claim of 1.0x that a bare ratio of medians meets about half the
  // time: the verdict says within noise and the check fails, saying so.
  int ratio_met = 0;
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    const std::vector<double> a = busy_samples(seed, 50, 1000),
                              b = busy_samples(seed + 100, 50, 1000);
    ratio_met += summarize(b).median_us <= summarize(a).median_us;
    const CheckResult r = faster_than(a, b, 1.0);
    EXPECT_FALSE(r.passed) << r.figures;
    EXPECT_EQ(r.figures.rfind("not measurably faster: ", 0), 0u) << r.figures;
    EXPECT_NE(r.figures.find("within noise"), std::string::npos) << r.figures;
  }
  EXPECT_GT(ratio_met, 0) << "a bare ratio of medians would have passed some";
}

TEST(FasterThan, PassesOnlyWhenMeasurablyFasterByTheClaimedRatio) {
  const std::vector<double> before = busy_samples(7, 50, 2000);
  const CheckResult twice = faster_than(before, scaled(busy_samples(8, 50, 2000), 0.5), 1.5);
  EXPECT_TRUE(twice.passed) << twice.figures;
  EXPECT_NE(twice.figures.find("faster: median -"), std::string::npos) << twice.figures;
  const CheckResult short_of_claim =
      faster_than(busy_samples(7, 50, 2000, 0.0), scaled(busy_samples(8, 50, 2000, 0.0), 0.8), 1.5);
  EXPECT_FALSE(short_of_claim.passed) << short_of_claim.figures;
  EXPECT_EQ(short_of_claim.figures.find("not measurably"), std::string::npos)
      << "faster, just not 1.5x";
}

TEST(FasterThan, ARatioBelowOneFailsOnlyOnAMeasuredSlowdownPastIt) {
  // "Not much slower" (0.9): noise holds it, whatever the medians; a measured 1.5x slowdown does
  // not.
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    const CheckResult r =
        faster_than(busy_samples(seed, 50, 1000), busy_samples(seed + 200, 50, 1000), 0.9);
    EXPECT_TRUE(r.passed) << r.figures;
  }
  const CheckResult slower =
      faster_than(busy_samples(12, 50, 1000, 0), scaled(busy_samples(13, 50, 1000, 0), 1.5), 0.9);
  EXPECT_FALSE(slower.passed) << slower.figures;
  EXPECT_NE(slower.figures.find("slower: median +"), std::string::npos) << slower.figures;
}

}  // namespace
}  // namespace fusebox::workbench

namespace fusebox::workbench {
namespace {

// Measured checks on a busy machine (issue 22): recorded run sets, each with the load it was
// measured under. A claim that fails on a quiet machine fails; one that fails while other
// processes held the cores, or while the calls spread past kNoisySpread, is "not measurable"
// (and --strict does not fail on it); one that holds passes, busy or not.
struct RecordedStep {
  std::vector<double> samples;
  double other_cores = 0;  // what else ran meanwhile, of 2 cores
};

std::shared_ptr<const RunResult> recorded(const RecordedStep& s) {
  auto r = std::make_shared<RunResult>();
  r->latency = summarize(s.samples);
  r->load.cores = 2;
  r->load.wall_s = 1;
  r->load.other_cores = s.other_cores;
  return r;
}

// Step 1 claims to be 1.5x faster than step 0.
ScenarioRun faster_claim(const RecordedStep& step0, const RecordedStep& step1) {
  static Scenario sc = [] {
    Scenario s;
    s.path = "recorded.json";
    s.steps.resize(2);
    Check c;
    c.kind = "faster_than";
    c.pointer = "/steps/1/checks/0";
    c.step = 0;
    c.ratio = 1.5;
    s.steps[1].checks.push_back(c);
    return s;
  }();
  const std::vector<std::shared_ptr<const RunResult>> results = {recorded(step0), recorded(step1)};
  ScenarioRun run;
  run.scenario = &sc;
  run.steps.resize(2);
  run.steps[1].checks = evaluate_checks(sc, 1, results);
  return run;
}

TEST(BusyMachine, AQuietRegressionFailsABusyRunIsNotMeasurableAQuietWinPasses) {
  const std::vector<double> base = busy_samples(11, 60, 1000, 0.0);  // quiet: 4% jitter
  const std::vector<double> same = busy_samples(12, 60, 1000, 0.0);
  const std::vector<double> half = scaled(busy_samples(13, 60, 1000, 0.0), 0.5);

  // Quiet and wrong: the claimed speed-up is not there. A failure, --strict fails.
  ScenarioRun quiet_wrong = faster_claim({base, 0.1}, {same, 0.1});
  const CheckResult& qw = quiet_wrong.steps[1].checks[0];
  EXPECT_FALSE(qw.passed) << qw.figures;
  EXPECT_EQ(qw.not_measurable, "");
  EXPECT_FALSE(quiet_wrong.measured_ok());
  EXPECT_NE(quiet_wrong.to_text().find("FAIL"), std::string::npos) << quiet_wrong.to_text();

  // The same calls while other processes held 1.8 of the 2 cores (a steady load: the spread is
  // as small as the quiet run's, only the CPU time of others tells).
  ScenarioRun busy = faster_claim({base, 0.1}, {same, 1.8});
  const CheckResult& b = busy.steps[1].checks[0];
  EXPECT_FALSE(b.passed);
  EXPECT_EQ(b.not_measurable, "machine busy (other processes used 1.8 of 2 cores while it measured)");
  EXPECT_TRUE(busy.measured_ok()) << "--strict does not fail on it";
  EXPECT_EQ(busy.not_measurable(), 1u);
  EXPECT_NE(busy.to_text().find("BUSY"), std::string::npos) << busy.to_text();
  EXPECT_NE(busy.to_text().find("1 not measurable: the machine was busy"), std::string::npos);
  EXPECT_EQ(busy.to_json()["steps"][1]["checks"][0]["not_measurable"], b.not_measurable);

  // The baseline step was the busy one: the comparison is not measurable either.
  const CheckResult busy_base = faster_claim({base, 1.5}, {same, 0.0}).steps[1].checks[0];
  EXPECT_EQ(busy_base.not_measurable.rfind("machine busy (step 0: other processes used 1.5", 0), 0u)
      << busy_base.not_measurable;

  // A load that comes and goes: no CPU figure, the calls' spread says busy.
  RecordedStep spread{busy_samples(14, 60, 1000), -1};
  const CheckResult s = faster_claim({base, 0.1}, spread).steps[1].checks[0];
  EXPECT_FALSE(s.passed);
  EXPECT_EQ(s.not_measurable.rfind("machine busy (noisy: p90 is ", 0), 0u) << s.not_measurable;

  // Quiet and right passes; a real win measured on a busy machine still passes.
  const CheckResult quiet_right = faster_claim({base, 0.1}, {half, 0.1}).steps[1].checks[0];
  EXPECT_TRUE(quiet_right.passed) << quiet_right.figures;
  EXPECT_EQ(quiet_right.not_measurable, "");
  const CheckResult busy_right = faster_claim({base, 1.8}, {half, 1.8}).steps[1].checks[0];
  EXPECT_TRUE(busy_right.passed) << busy_right.figures;
  EXPECT_EQ(busy_right.not_measurable, "");

  // Below the threshold (half the cores) the machine counts as quiet.
  EXPECT_EQ(faster_claim({base, 0.1}, {same, 0.9}).steps[1].checks[0].not_measurable, "");
}

TEST(BusyMachine, TheLoadIsSampledFromProcStat) {
  const CpuSample a = CpuSample::now();
  // Spin for 150 ms on this thread: our own CPU time, which is not "other processes".
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(150);
  volatile double x = 0;
  while (std::chrono::steady_clock::now() < until) x = x + 1;
  const CpuSample b = CpuSample::now();
  ASSERT_GE(a.machine_busy_s, 0) << "no /proc/stat";
  EXPECT_GT(b.self_s, a.self_s);
  const MachineLoad l = machine_load(a, b);
  EXPECT_GE(l.other_cores, 0);
  EXPECT_LE(l.other_cores, l.cores) << "cannot exceed the machine";
  EXPECT_GT(l.wall_s, 0.14);
  EXPECT_EQ(machine_load(a, a).other_cores, -1) << "too short to say";
}

}  // namespace
}  // namespace fusebox::workbench
