#!/usr/bin/env python3
"""`fusebox generate --out` against an independent reading of the trace it writes: a short
generation over assets/models/gpt_small_opset17.onnx is recorded into OUT, then trace_totals.py
(Python's standard library, none of fusebox's code) reads OUT/trace.json and checks the phases
`fusebox trace --json` reports: one prefill step of the prompt's tokens and one decode step a
token, each step's work its ops (a CPU recording). The step count and tokens are checked here too.
Usage: generation_totals.py FUSEBOX SOURCE_DIR OUT"""
import json
import subprocess
import sys

import trace_totals


def main():
    fusebox, source, out = sys.argv[1:4]
    model = source + "/assets/models/gpt_small_opset17.onnx"
    subprocess.run([fusebox, "generate", model, "--prompt-len", "5", "--tokens", "7", "--threads", "2",
                    "--out", out], check=True, stdout=subprocess.DEVNULL)
    trace = out + "/trace.json"
    report = json.loads(subprocess.run([fusebox, "trace", trace, "--json"], check=True,
                                       capture_output=True, text=True).stdout)
    phases = {p["name"]: p for p in report["phases"]["phases"]}
    want = {"prefill": (1, 5), "decode": (6, 6)}  # (steps, tokens)
    got = {n: (p["steps"], p["tokens"]) for n, p in phases.items()}
    if got != want or report["phases"]["work"] != "cpu":
        print(f"{trace}: phases {got}, work {report['phases']['work']}; expected {want}, cpu",
              file=sys.stderr)
        return 1
    sys.argv = [sys.argv[0], fusebox, trace]
    return trace_totals.main()


if __name__ == "__main__":
    sys.exit(main())
