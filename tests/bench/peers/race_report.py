"""The pure part of race.py: per-round ratios, roofline figures, target verdicts, Markdown.

Standard library only (no numpy, torch or node), so race_report_test.py can check it with fake
rows anywhere python3 runs.

A row is a dict for one model at one thread count, made by summarize_row() from each runtime's
per-round medians:
    model, kind, threads, planner, flops, ort_floor_us,
    <runtime>_median_us, <runtime>_min_us     for runtime in torch, ort, fusebox (those that ran)
    fusebox/torch, fusebox/ort, fusebox/(ort-floor)   median over rounds of the in-round ratio
    fusebox_gflops, gemm_peak_gflops, peak/fusebox    when the FLOPs and the GEMM peak (timed in the
                                                      same rounds) are known
    fma_peak_gflops, fusebox/fma      the FMA peak at the row's thread count (`fusebox machine`) and
                                      fusebox's GFLOP/s as a fraction of it, when both are known
    <runtime>_alone_median_us, <runtime>_alone_min_us   the runtime timed alone after the race (the
                                      other workers closed), same rounds and calls (--alone)
`kind` names the issue's models (mlp_b1, mlp_b64, transformer_s64, stack4_s128) and is None for a
user's .onnx file. A dispatch row is one runtime at one thread count on the two chains:
    runtime, label, threads, t1_us, tn_us, n, ns_per_op
"""
import os
import statistics

# The models whose MatMuls dominate: their GFLOP/s is held against the GEMM peak.
COMPUTE_BOUND = ("mlp_b64", "stack4_s128")

# The targets of issue 6.
TORCH_MLP_B1_2T = 0.5     # fusebox / eager PyTorch, MLP batch 1 at 2 threads
TORCH_ELSEWHERE = 0.8     # fusebox / eager PyTorch, every other model and thread count
ORT_ALL = 1.0             # fusebox / ONNX Runtime (the fair figure: ORT minus its binding floor)
ROOFLINE_GAP = 1.3        # GEMM peak / fusebox GFLOP/s on the compute-bound shapes
DISPATCH_NS = 50.0        # extra ns per op of a 1000-op chain over a 1-op chain, passes off


def median(xs):
    return statistics.median(xs)


def ratio_within_rounds(num, den):
    """Median over rounds of num[i] / den[i]: each ratio compares runs made side by side."""
    if len(num) != len(den) or not num:
        raise ValueError("ratio_within_rounds: need the same, non-zero number of rounds on both sides")
    return median([a / b for a, b in zip(num, den)])


def fair_ratio_within_rounds(fusebox, ort, floor_us):
    """fusebox / (ORT - its binding floor), per round; the floor is the node binding's own cost."""
    return median([f / max(1e-9, o - floor_us) for f, o in zip(fusebox, ort)])


def gflops(flops, us):
    """Achieved GFLOP/s of `flops` done in `us` microseconds (None when either is unknown)."""
    if not flops or not us or us <= 0:
        return None
    return flops / (us * 1e3)


def fma_peak_at(fma_gflops, threads):
    """The FMA peak for `threads` from {threads: GFLOP/s} as `fusebox machine` measured it: the
    figure at the largest measured count <= threads (the smallest one below all of them), as
    Roofline::fma_peak_gflops does; None when nothing was measured."""
    if not fma_gflops:
        return None
    counts = sorted(fma_gflops)
    below = [t for t in counts if t <= threads]
    return fma_gflops[below[-1] if below else counts[0]]


def fma_from_machine(machine):
    """{threads: GFLOP/s} of the FMA peak in `fusebox machine --json` ("fma_gflops", keyed by the
    thread count as a string); {} when it has none."""
    return {int(t): float(g) for t, g in ((machine or {}).get("fma_gflops") or {}).items()}


def fma_note(machine, threads):
    """The header line naming the FMA peak at each raced thread count, from `fusebox machine --json`."""
    fma = fma_from_machine(machine)
    if not fma:
        return None
    figures = []
    for t in threads:
        measured = max([c for c in fma if c <= t] or [min(fma)])
        figures.append(f"{fmt_gflops(fma_peak_at(fma, t))} GFLOP/s at {threads_text(t)}"
                       + (f" (the {measured}-thread figure)" if measured != t else ""))
    isa = machine.get("fma_isa")
    when = machine.get("measured_at")
    return (f"FMA peak ({isa + ', ' if isa else ''}independent FMAs in registers, `fusebox machine`"
            f"{', measured ' + when if when else ''}): " + ", ".join(figures) + ". fusebox / FMA peak = fusebox "
            "GFLOP/s over the FMA peak at the row's thread count (the peak is not raced in the same rounds: "
            "this machine's drift between the two minutes is in that fraction).")


def summarize_row(model, kind, threads, per_round, ort_floor_us=None, flops=None, gemm_flops=None, planner=None,
                  fma_gflops=None, alone=None):
    """One table row from {runtime: [median of each round, in us]} (runtimes that did not run are absent).

    Latency: median over rounds (min: the best round). Ratios: computed inside each round, median
    over rounds. Roofline: per_round["gemm"], when present, times a GEMM of `gemm_flops` (the peak
    `fusebox machine` measures: 512 x 512 against a packed weight) in the same rounds; the GEMM
    peak / fusebox GFLOP/s ratio is taken inside each round too, so the machine's drift from one
    minute to the next cancels out like it does for the peers. `fma_gflops` ({threads: GFLOP/s},
    from `fusebox machine`) gives the FMA peak: fusebox/fma = fusebox GFLOP/s / the peak at this
    thread count. `alone` ({runtime: [median of each round]}) times runtimes alone after the race.
    """
    row = {"model": model, "kind": kind, "threads": threads, "planner": planner, "flops": flops}
    for name, rounds in per_round.items():
        row[name + "_median_us"] = median(rounds)
        row[name + "_min_us"] = min(rounds)
    fb = per_round.get("fusebox")
    if fb and "torch" in per_round:
        row["fusebox/torch"] = ratio_within_rounds(fb, per_round["torch"])
    if fb and "ort" in per_round:
        row["fusebox/ort"] = ratio_within_rounds(fb, per_round["ort"])
        if ort_floor_us is not None:
            row["ort_floor_us"] = ort_floor_us
            row["fusebox/(ort-floor)"] = fair_ratio_within_rounds(fb, per_round["ort"], ort_floor_us)
    if fb:
        achieved = gflops(flops, row["fusebox_median_us"])
        if achieved:
            row["fusebox_gflops"] = achieved
            gemm = per_round.get("gemm")
            if gemm and gemm_flops:
                row["gemm_peak_gflops"] = gflops(gemm_flops, median(gemm))
                # (gemm_flops / gemm_us) / (flops / fusebox_us), round by round
                row["peak/fusebox"] = median([gemm_flops * f / (flops * g) for f, g in zip(fb, gemm)])
            fma = fma_peak_at(fma_gflops, threads)
            if fma:
                row["fma_peak_gflops"] = fma
                row["fusebox/fma"] = achieved / fma
    for name, rounds in (alone or {}).items():
        if rounds:
            row[name + "_alone_median_us"] = median(rounds)
            row[name + "_alone_min_us"] = min(rounds)
    return row


def per_op_ns(t1_rounds, tn_rounds, n):
    """Extra ns per op of an n-op chain over a 1-op chain: median over rounds of (t_n - t_1) / (n - 1)."""
    return median([(tn - t1) * 1000.0 / (n - 1) for t1, tn in zip(t1_rounds, tn_rounds)])


def dispatch_row(runtime, label, threads, t1_rounds, tn_rounds, n):
    return {"runtime": runtime, "label": label, "threads": threads, "t1_us": median(t1_rounds),
            "tn_us": median(tn_rounds), "n": n, "ns_per_op": per_op_ns(t1_rounds, tn_rounds, n)}


# ---------------------------------------------------------------------------------------------
# Targets


def threads_text(t):
    return f"{t} thread{'s' if t != 1 else ''}"


def where(row):
    return f"{row['model']} at {threads_text(row['threads'])}"


def _worst(rows, key):
    """The row with the largest value of `key` (the one that decides a <= target)."""
    return max(rows, key=lambda r: r[key])


def _verdict(value, limit):
    return "met" if value <= limit else "missed"


def _threads_note(rows, wanted=(1, 2)):
    got = sorted({r["threads"] for r in rows})
    missing = [t for t in wanted if t not in got]
    return f"; not run at {' or '.join(map(str, missing))} threads" if missing else ""


def targets(rows, dispatch, missing):
    """One (title, status, detail) per target. status: met | missed | not measured.

    `missing` maps a runtime ("torch", "ort") or "peak" to why it has no figures (e.g. "PyTorch
    not installed"); rows simply lack what did not run. `dispatch` is None when not run.
    """
    out = []

    def not_measured(title, why):
        out.append((title, "not measured", why))

    # 1. eager PyTorch, MLP batch 1 at 2 threads.
    title = f"fusebox <= {TORCH_MLP_B1_2T}x eager PyTorch median on MLP batch 1 at 2 threads"
    sel = [r for r in rows if r.get("kind") == "mlp_b1" and r["threads"] == 2 and "fusebox/torch" in r]
    if sel:
        r = _worst(sel, "fusebox/torch")
        out.append((title, _verdict(r["fusebox/torch"], TORCH_MLP_B1_2T), fmt_ratio(r["fusebox/torch"])))
    elif "torch" in missing:
        not_measured(title, missing["torch"])
    else:
        not_measured(title, "MLP batch 1 was not run at 2 threads")

    # 2. eager PyTorch everywhere else.
    title = f"fusebox <= {TORCH_ELSEWHERE}x eager PyTorch median on every other model and thread count"
    sel = [r for r in rows if "fusebox/torch" in r and not (r.get("kind") == "mlp_b1" and r["threads"] == 2)]
    if sel:
        r = _worst(sel, "fusebox/torch")
        out.append((title, _verdict(r["fusebox/torch"], TORCH_ELSEWHERE),
                    f"worst {fmt_ratio(r['fusebox/torch'])}, {where(r)}{_threads_note(sel)}"))
    elif "torch" in missing:
        not_measured(title, missing["torch"])
    else:
        not_measured(title, "no other model ran under eager PyTorch")

    # 3. ONNX Runtime, every model, 1 and 2 threads; the fair figure decides.
    title = f"fusebox <= {ORT_ALL}x ONNX Runtime on every model at 1 and 2 threads"
    sel = [r for r in rows if "fusebox/(ort-floor)" in r]
    if sel:
        fair = _worst(sel, "fusebox/(ort-floor)")
        raw = _worst(sel, "fusebox/ort")
        out.append((title, _verdict(fair["fusebox/(ort-floor)"], ORT_ALL),
                    f"the fair figure, against ORT minus its binding floor: worst {fmt_ratio(fair['fusebox/(ort-floor)'])}, "
                    f"{where(fair)}; against ORT as measured: worst {fmt_ratio(raw['fusebox/ort'])}, {where(raw)}, "
                    f"{_verdict(raw['fusebox/ort'], ORT_ALL)}{_threads_note(sel)}"))
    elif "ort" in missing:
        not_measured(title, missing["ort"])
    else:
        not_measured(title, "no model ran under ONNX Runtime")

    # 4. Roofline on the compute-bound shapes.
    title = (f"fusebox GFLOP/s within {ROOFLINE_GAP}x of the GEMM peak on the compute-bound shapes "
             "(MLP batch 64, the 4-layer stack)")
    bound = [r for r in rows if r.get("kind") in COMPUTE_BOUND]
    sel = [r for r in bound if "peak/fusebox" in r]
    if sel:
        r = _worst(sel, "peak/fusebox")
        out.append((title, _verdict(r["peak/fusebox"], ROOFLINE_GAP),
                    f"worst {r['peak/fusebox']:.2f}x: {r['fusebox_gflops']:.0f} of {r['gemm_peak_gflops']:.0f} GFLOP/s, "
                    f"{where(r)}{_threads_note(sel)}"))
    elif not bound:
        not_measured(title, "neither MLP batch 64 nor the 4-layer stack was run")
    else:
        not_measured(title, missing.get("peak", "no GEMM peak or FLOP count for these rows"))

    # 5. Dispatch.
    title = (f"dispatch: a chain of 1000 tiny element-wise ops (passes off, compiled executor) costs "
             f"<= {DISPATCH_NS:.0f} ns per op more than a chain of one")
    fb = [d for d in (dispatch or []) if d["runtime"] == "fusebox"]
    if fb:
        d = _worst(fb, "ns_per_op")
        peers = [p for p in dispatch if p["runtime"] == "ort"]  # the fair peer: its optimizations off too
        peer_text = ", ".join(f"{p['ns_per_op']:.0f} ns/op at {threads_text(p['threads'])}" for p in peers)
        out.append((title, _verdict(d["ns_per_op"], DISPATCH_NS),
                    f"fusebox worst {d['ns_per_op']:.1f} ns/op, at {threads_text(d['threads'])}"
                    + (f"; ONNX Runtime with its optimizations disabled: {peer_text}" if peers else "")))
    else:
        not_measured(title, "the dispatch race was not run" if dispatch is None else "fusebox did not run it")
    return out


def targets_markdown(verdicts):
    lines = ["### Targets", ""]
    for title, status, detail in verdicts:
        lines.append(f"- {title}: {status} ({detail})")
    return lines


# ---------------------------------------------------------------------------------------------
# Tables


def fmt_us(us):
    """Microseconds: one decimal, two below 10 us (a tiny model's call is well under a microsecond)."""
    return f"{us:.2f}" if abs(us) < 10 else f"{us:.1f}"


def fmt_ratio(x):
    """Two decimals; two significant digits below 0.1, so a tiny ratio does not print as 0.00."""
    return f"{x:.2f}" if abs(x) >= 0.1 or x == 0 else f"{x:.2g}"


def fmt_gflops(x):
    return f"{x:.1f}"


def _latency(row, name):
    if name + "_median_us" not in row:
        return "-"
    return f"{fmt_us(row[name + '_median_us'])} ({fmt_us(row[name + '_min_us'])})"


def _num(row, key, fmt=fmt_ratio):
    return fmt(row[key]) if row.get(key) is not None else "-"


RUNTIME_NAMES = {"torch": "torch", "ort": "ORT", "fusebox": "fusebox"}


def race_table(rows):
    """The race table; a "<runtime> alone" column follows the runtime's own for each runtime that
    some row timed alone (--alone)."""
    alone = [n for n in RUNTIME_NAMES if any(n + "_alone_median_us" in r for r in rows)]

    def latencies(r, name):
        cells = [_latency(r, name)]
        if name in alone:
            cells.append(_latency(r, name + "_alone"))
        return cells

    head = ["model", "threads", "planner"]
    for name, shown in RUNTIME_NAMES.items():
        head.append(f"{shown} median (min) us")
        if name in alone:
            head.append(f"{shown} alone median (min) us")
        if name == "ort":
            head.append("ORT floor us")
    head += ["fusebox/torch", "fusebox/ORT", "fusebox/(ORT-floor)", "fusebox GFLOP/s", "GEMM peak GFLOP/s",
             "GEMM peak / fusebox", "fusebox / FMA peak"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["model"], str(r["threads"]), r.get("planner") or "-"]
        cells += latencies(r, "torch") + latencies(r, "ort") + [_num(r, "ort_floor_us", fmt_us)]
        cells += latencies(r, "fusebox")
        cells += [_num(r, "fusebox/torch"), _num(r, "fusebox/ort"), _num(r, "fusebox/(ort-floor)"),
                  _num(r, "fusebox_gflops", fmt_gflops), _num(r, "gemm_peak_gflops", fmt_gflops),
                  _num(r, "peak/fusebox"), _num(r, "fusebox/fma")]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def dispatch_table(drows):
    n = drows[0]["n"] if drows else 1000
    lines = [f"| runtime | threads | chain of 1 median us | chain of {n} median us | ns per op = (t{n} - t1) / {n - 1} |",
             "|---|---|---|---|---|"]
    for d in drows:
        lines.append(f"| {d['label']} | {d['threads']} | {d['t1_us']:.2f} | {fmt_us(d['tn_us'])} | {d['ns_per_op']:.1f} |")
    return lines


def report(header, rows, drows, dispatch_notes, verdicts):
    """The whole Markdown file: header lines, the race table, the dispatch table, the targets."""
    lines = list(header) + [""] + race_table(rows)
    if drows:
        lines += ["", "### Dispatch", ""] + list(dispatch_notes) + [""] + dispatch_table(drows)
    lines += [""] + targets_markdown(verdicts)
    return "\n".join(lines) + "\n"


def write_atomically(path, text):
    """Write `text` to `path` through a temporary file and os.replace (no half-written file)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)
