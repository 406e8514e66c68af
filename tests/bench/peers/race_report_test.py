"""Unit tests for race_report.py (standard library only): per-round ratios, roofline figures,
target verdicts and the Markdown tables, fed with fake rounds. Run:

    python3 -B tests/bench/peers/race_report_test.py
"""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import race_report as rr  # noqa: E402


GEMM_FLOPS = 1e9  # the fake peak GEMM's FLOPs per call


def row(kind, threads, fusebox_us, torch_us=None, ort_us=None, floor_us=10.0, flops=None, peak=None, label=None,
        fma=None, alone=None):
    """A row whose every round has the same latencies (so each ratio is exactly fusebox / peer);
    `peak` (GFLOP/s) becomes a GEMM timed in the same rounds; `fma` is {threads: FMA peak GFLOP/s};
    `alone` is {runtime: us} timed alone."""
    per_round = {"fusebox": [fusebox_us] * 3}
    if torch_us is not None:
        per_round["torch"] = [torch_us] * 3
    if ort_us is not None:
        per_round["ort"] = [ort_us] * 3
    if peak is not None:
        per_round["gemm"] = [GEMM_FLOPS / (peak * 1e3)] * 3
    return rr.summarize_row(label or kind, kind, threads, per_round, floor_us if ort_us is not None else None,
                            flops, GEMM_FLOPS if peak is not None else None, "greedy_by_size", fma,
                            {n: [us] * 3 for n, us in (alone or {}).items()})


def verdict(verdicts, start):
    hits = [v for v in verdicts if v[0].startswith(start)]
    assert len(hits) == 1, (start, verdicts)
    return hits[0]


def all_met_rows():
    # mlp b1 at 2 threads at 0.4x torch, everything else at 0.7x torch and 0.9x ORT, the compute-bound
    # shapes at 1.2x below the peak (100 GFLOP/s peak: 1e8 FLOPs in 1200 us is 83.3 GFLOP/s).
    rows = []
    for t in (1, 2):
        rows.append(row("mlp_b1", t, 40.0 if t == 2 else 70.0, torch_us=100.0, ort_us=110.0))
        rows.append(row("mlp_b64", t, 1200.0, torch_us=2000.0, ort_us=1400.0, flops=1e8, peak=100.0))
        rows.append(row("stack4_s128", t, 1200.0, torch_us=2000.0, ort_us=1400.0, flops=1e8, peak=100.0))
    return rows


def dispatch(fusebox_ns, ort_ns=210.0):
    # chain of 1 at 5 us, chain of 1000 at 5 + 999 * ns / 1000 us.
    d = []
    for key, label, ns in (("fusebox", "fusebox (compiled, passes none)", fusebox_ns),
                           ("ort", "ONNX Runtime (optimizations disabled)", ort_ns)):
        d.append(rr.dispatch_row(key, label, 1, [5.0, 5.0, 5.0], [5.0 + 999 * ns / 1000.0] * 3, 1000))
    return d


class Ratios(unittest.TestCase):
    def test_ratio_is_median_of_per_round_ratios(self):
        # Round ratios 0.5, 2.0, 1.0 -> median 1.0; the ratio of medians would be 200/200 = 1.0 too,
        # so use rounds where they differ: ratios 0.5, 0.6, 3.0 -> 0.6; medians 110/200 = 0.55.
        self.assertAlmostEqual(rr.ratio_within_rounds([100, 120, 300], [200, 200, 100]), 0.6)

    def test_mismatched_rounds_are_refused(self):
        with self.assertRaises(ValueError):
            rr.ratio_within_rounds([1, 2], [1])

    def test_fair_ratio_subtracts_the_floor(self):
        self.assertAlmostEqual(rr.fair_ratio_within_rounds([90.0], [110.0], 10.0), 0.9)

    def test_summarize_row(self):
        r = rr.summarize_row("m", "mlp_b64", 2, {"fusebox": [100.0, 120.0, 110.0], "ort": [200.0, 200.0, 200.0],
                                                 "gemm": [2500.0, 3000.0, 2750.0]},
                             10.0, flops=2e7, gemm_flops=1e9, planner="first_fit")
        self.assertEqual(r["fusebox_median_us"], 110.0)
        self.assertEqual(r["fusebox_min_us"], 100.0)
        self.assertAlmostEqual(r["fusebox/ort"], 0.55)
        self.assertAlmostEqual(r["fusebox/(ort-floor)"], 110.0 / 190.0)
        self.assertAlmostEqual(r["fusebox_gflops"], 2e7 / 110e3)  # FLOPs / (us * 1e3)
        self.assertAlmostEqual(r["gemm_peak_gflops"], 1e9 / 2750e3)
        self.assertAlmostEqual(r["peak/fusebox"], 2.0)  # (1e9 / 2500) / (2e7 / 100) in every round
        self.assertNotIn("fusebox/torch", r)

    def test_roofline_ratio_is_taken_inside_each_round(self):
        # The machine is 30% slower in round 2 for both the model and the GEMM: inside each round
        # the ratio is 2.0, 2.0, 2.2; the ratio of the medians (110 us, 2500 us) would say 2.2.
        r = rr.summarize_row("m", "stack4_s128", 2, {"fusebox": [100.0, 130.0, 110.0],
                                                     "gemm": [2500.0, 3250.0, 2500.0]},
                             flops=2e7, gemm_flops=1e9)
        self.assertAlmostEqual(r["peak/fusebox"], 2.0)

    def test_no_flops_no_roofline(self):
        r = rr.summarize_row("m", None, 1, {"fusebox": [10.0], "gemm": [10.0]}, flops=None, gemm_flops=1e9)
        self.assertNotIn("fusebox_gflops", r)
        self.assertNotIn("peak/fusebox", r)

    def test_fma_fraction(self):
        # 2e7 FLOPs in 100 us = 200 GFLOP/s; the FMA peak is 250 at 1 thread and 400 at 2.
        fma = {1: 250.0, 2: 400.0}
        r = rr.summarize_row("m", "mlp_b64", 2, {"fusebox": [100.0, 100.0, 100.0]}, flops=2e7, fma_gflops=fma)
        self.assertAlmostEqual(r["fma_peak_gflops"], 400.0)
        self.assertAlmostEqual(r["fusebox/fma"], 0.5)
        # The peak at the row's own thread count, not the best one.
        r1 = rr.summarize_row("m", "mlp_b64", 1, {"fusebox": [100.0]}, flops=2e7, fma_gflops=fma)
        self.assertAlmostEqual(r1["fusebox/fma"], 0.8)
        # Without FLOPs or without a peak there is no fraction.
        self.assertNotIn("fusebox/fma", rr.summarize_row("m", None, 1, {"fusebox": [100.0]}, fma_gflops=fma))
        self.assertNotIn("fusebox/fma", rr.summarize_row("m", None, 1, {"fusebox": [100.0]}, flops=2e7))

    def test_fma_peak_at_follows_fusebox_machine(self):
        fma = {1: 200.0, 2: 390.0, 4: 700.0}
        self.assertEqual(rr.fma_peak_at(fma, 1), 200.0)
        self.assertEqual(rr.fma_peak_at(fma, 3), 390.0)  # the largest measured count <= 3
        self.assertEqual(rr.fma_peak_at(fma, 8), 700.0)
        self.assertEqual(rr.fma_peak_at({2: 390.0}, 1), 390.0)  # below every measured count: the smallest
        self.assertIsNone(rr.fma_peak_at({}, 2))

    def test_fma_from_machine_json(self):
        machine = {"fma_gflops": {"1": 225.96, "2": 448.07}, "fma_isa": "avx512", "gemm_gflops": {"1": 199.8},
                   "measured_at": "2026-11-23T17:39:25Z"}
        self.assertEqual(rr.fma_from_machine(machine), {1: 225.96, 2: 448.07})
        self.assertEqual(rr.fma_from_machine({"gemm_gflops": {"1": 199.8}}), {})
        note = rr.fma_note(machine, [1, 2, 4])
        self.assertIn("FMA peak (avx512,", note)
        self.assertIn("226.0 GFLOP/s at 1 thread, 448.1 GFLOP/s at 2 threads, "
                      "448.1 GFLOP/s at 4 threads (the 2-thread figure)", note)
        self.assertIn("measured 2026-11-23T17:39:25Z", note)
        self.assertIsNone(rr.fma_note({}, [1]))

    def test_alone(self):
        r = rr.summarize_row("m", None, 2, {"fusebox": [10.0], "torch": [30.0]}, alone={"torch": [25.0, 20.0, 22.0]})
        self.assertEqual(r["torch_alone_median_us"], 22.0)
        self.assertEqual(r["torch_alone_min_us"], 20.0)
        self.assertNotIn("fusebox_alone_median_us", r)

    def test_per_op_ns(self):
        self.assertAlmostEqual(rr.per_op_ns([5.0], [5.0 + 0.999 * 42.0], 1000), 42.0)


class Targets(unittest.TestCase):
    def test_all_met(self):
        v = rr.targets(all_met_rows(), dispatch(20.0), {})
        self.assertEqual(len(v), 5)
        for title, status, detail in v:
            self.assertEqual(status, "met", (title, detail))
        self.assertIn("0.40", verdict(v, "fusebox <= 0.5x")[2])
        self.assertIn("worst 0.70", verdict(v, "fusebox <= 0.8x")[2])
        self.assertIn("1.20x", verdict(v, "fusebox GFLOP/s")[2])
        self.assertIn("210 ns/op", verdict(v, "dispatch")[2])

    def test_torch_elsewhere_0_81_is_missed(self):
        rows = all_met_rows() + [row("transformer_s64", 2, 81.0, torch_us=100.0, ort_us=200.0,
                                     label="transformer s64")]
        title, status, detail = verdict(rr.targets(rows, dispatch(20.0), {}), "fusebox <= 0.8x")
        self.assertEqual(status, "missed")
        self.assertIn("worst 0.81, transformer s64 at 2 threads", detail)

    def test_mlp_b1_at_2_threads_has_its_own_target(self):
        rows = all_met_rows()
        rows[3] = row("mlp_b1", 2, 60.0, torch_us=100.0, ort_us=110.0)  # 0.6: misses 0.5, would meet 0.8
        v = rr.targets(rows, dispatch(20.0), {})
        self.assertEqual(verdict(v, "fusebox <= 0.5x")[1], "missed")
        self.assertEqual(verdict(v, "fusebox <= 0.8x")[1], "met")
        rows[3] = row("mlp_b1", 2, 9.5, torch_us=100.0, ort_us=110.0)  # printed as in the table, not 0.09
        self.assertEqual(verdict(rr.targets(rows, dispatch(20.0), {}), "fusebox <= 0.5x")[1:], ("met", "0.095"))

    def test_ort_fair_figure_decides(self):
        # 1000 vs ORT 1010 with a 20 us floor: 0.990 raw (met) but 1.010 fair (missed).
        rows = all_met_rows() + [row("transformer_s64", 1, 1000.0, torch_us=2000.0, ort_us=1010.0, floor_us=20.0,
                                     label="transformer s64")]
        title, status, detail = verdict(rr.targets(rows, dispatch(20.0), {}), "fusebox <= 1.0x ONNX Runtime")
        self.assertEqual(status, "missed")
        self.assertIn("against ORT minus its binding floor: worst 1.01", detail)
        self.assertIn("against ORT as measured: worst 0.99, transformer s64 at 1 thread, met", detail)

    def test_roofline_1_31_is_missed(self):
        rows = all_met_rows()
        rows.append(row("stack4_s128", 2, 1310.0, torch_us=2000.0, ort_us=1400.0, flops=1e8, peak=100.0,
                        label="stack4 s128"))
        title, status, detail = verdict(rr.targets(rows, dispatch(20.0), {}), "fusebox GFLOP/s")
        self.assertEqual(status, "missed")
        self.assertIn("1.31x", detail)
        self.assertIn("stack4 s128 at 2 threads", detail)

    def test_mlp_b1_is_not_held_to_the_roofline(self):
        rows = all_met_rows() + [row("mlp_b1", 1, 1000.0, torch_us=2000.0, ort_us=2000.0, flops=1e6, peak=100.0)]
        self.assertEqual(verdict(rr.targets(rows, dispatch(20.0), {}), "fusebox GFLOP/s")[1], "met")

    def test_dispatch_51_ns_is_missed(self):
        v = rr.targets(all_met_rows(), dispatch(51.0), {})
        self.assertEqual(verdict(v, "dispatch")[1], "missed")
        self.assertIn("51.0 ns/op", verdict(v, "dispatch")[2])

    def test_missing_peers_are_not_measured(self):
        rows = [row("mlp_b1", 2, 40.0), row("mlp_b64", 1, 1000.0)]
        missing = {"torch": "PyTorch not installed", "ort": "ONNX Runtime not installed",
                   "peak": "no GEMM peak: fusebox machine missing"}
        v = rr.targets(rows, None, missing)
        self.assertEqual(verdict(v, "fusebox <= 0.5x")[1:], ("not measured", "PyTorch not installed"))
        self.assertEqual(verdict(v, "fusebox <= 0.8x")[1:], ("not measured", "PyTorch not installed"))
        self.assertEqual(verdict(v, "fusebox <= 1.0x")[1:], ("not measured", "ONNX Runtime not installed"))
        self.assertEqual(verdict(v, "fusebox GFLOP/s")[1:], ("not measured", "no GEMM peak: fusebox machine missing"))
        self.assertEqual(verdict(v, "dispatch")[1], "not measured")
        md = "\n".join(rr.targets_markdown(v))
        self.assertIn("- fusebox <= 0.5x eager PyTorch median on MLP batch 1 at 2 threads: not measured "
                      "(PyTorch not installed)", md)

    def test_user_models_only(self):
        rows = [row(None, 1, 50.0, ort_us=100.0, label="my.onnx")]
        v = rr.targets(rows, dispatch(20.0), {"torch": "no module for a user's .onnx file"})
        self.assertEqual(verdict(v, "fusebox <= 1.0x")[1], "met")
        self.assertIn("not run at 2 threads", verdict(v, "fusebox <= 1.0x")[2])
        self.assertEqual(verdict(v, "fusebox GFLOP/s")[1], "not measured")


class Tables(unittest.TestCase):
    def test_race_table(self):
        rows = [row("mlp_b64", 2, 100.0, torch_us=200.0, ort_us=110.0, floor_us=10.0, flops=2e7, peak=400.0,
                    label="mlp b64", fma={1: 300.0, 2: 500.0}),
                row(None, 1, 50.0, label="my.onnx")]
        lines = rr.race_table(rows)
        self.assertEqual(len(lines), 4)
        self.assertEqual(lines[0].count("|"), lines[1].count("|"))
        self.assertIn("fusebox GFLOP/s", lines[0])
        self.assertIn("GEMM peak / fusebox", lines[0])
        self.assertTrue(lines[0].endswith("| GEMM peak / fusebox | fusebox / FMA peak |"))
        self.assertNotIn("alone", lines[0])  # no row timed a runtime alone: no such column
        # planner, torch, ORT, floor, fusebox, ratios, GFLOP/s (2e7 / 100e3 = 200), peak 400,
        # peak/fusebox (2.00), fusebox / FMA peak at 2 threads (200 / 500 = 0.40)
        self.assertEqual(lines[2], "| mlp b64 | 2 | greedy_by_size | 200.0 (200.0) | 110.0 (110.0) | 10.0 "
                                   "| 100.0 (100.0) | 0.50 | 0.91 | 1.00 | 200.0 | 400.0 | 2.00 | 0.40 |")
        self.assertEqual(lines[3],
                         "| my.onnx | 1 | greedy_by_size | - | - | - | 50.0 (50.0) | - | - | - | - | - | - | - |")
        tiny = rr.race_table([row(None, 1, 0.123, ort_us=80.0, floor_us=13.0, label="tiny.onnx")])[2]
        self.assertIn("| 0.12 (0.12) | - | 0.0015 | 0.0018 |", tiny)
        for line in lines:
            self.assertEqual(line.count("|"), 15)

    def test_race_table_alone_column(self):
        rows = [row("mlp_b1", 2, 20.0, torch_us=110.0, ort_us=60.0, label="mlp b1", alone={"torch": 100.0}),
                row("mlp_b1", 1, 25.0, torch_us=100.0, ort_us=60.0, label="mlp b1")]
        lines = rr.race_table(rows)
        self.assertIn("| torch median (min) us | torch alone median (min) us | ORT median (min) us |", lines[0])
        self.assertEqual(lines[0].count("|"), lines[1].count("|"))
        self.assertEqual(lines[0].count("|"), 16)
        self.assertIn("| mlp b1 | 2 | greedy_by_size | 110.0 (110.0) | 100.0 (100.0) | 60.0 (60.0) |", lines[2])
        self.assertIn("| mlp b1 | 1 | greedy_by_size | 100.0 (100.0) | - | 60.0 (60.0) |", lines[3])

    def test_dispatch_table(self):
        lines = rr.dispatch_table(dispatch(20.0))
        self.assertIn("ns per op = (t1000 - t1) / 999", lines[0])
        self.assertEqual(lines[2], "| fusebox (compiled, passes none) | 1 | 5.00 | 25.0 | 20.0 |")
        self.assertEqual(lines[3], "| ONNX Runtime (optimizations disabled) | 1 | 5.00 | 214.8 | 210.0 |")

    def test_report_and_atomic_write(self):
        rows = all_met_rows()
        text = rr.report(["header"], rows, dispatch(20.0), ["chains"], rr.targets(rows, dispatch(20.0), {}))
        self.assertTrue(text.startswith("header\n\n| model |"))
        self.assertIn("### Dispatch", text)
        self.assertIn("### Targets", text)
        self.assertEqual(text.count(": met ("), 5)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "sub", "race.md")
            rr.write_atomically(path, text)
            with open(path) as f:
                self.assertEqual(f.read(), text)
            self.assertEqual(os.listdir(os.path.dirname(path)), ["race.md"])


if __name__ == "__main__":
    unittest.main()
