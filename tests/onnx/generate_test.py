#!/usr/bin/python3
"""`fusebox generate` against PyTorch's greedy loop over the same module (issue 37).

    /usr/bin/python3 tests/onnx/generate_test.py BUILD/app/cli/fusebox WORKDIR

The GPT-style decoder of assets/models/export_models.py (gpt(): GPT-2's vocabulary of 50257, two
pre-norm blocks, an LM head of its own) is exported into WORKDIR with its KV
cache as inputs and outputs under Optimum's names (export_gpt). PyTorch then generates 32 tokens
greedily from an 8-token prompt: a prefill over the prompt with empty caches, then one step per
token with the last token and the presents fed back as the pasts. `fusebox generate` runs the
exported file from the same prompt (--json, --save-logits). Every generated token must be
PyTorch's, and each step's last-position logits within 1e-4 of PyTorch's. The run at 2 threads
must give the same tokens. Needs Debian's python3-torch; without it the test says so and exits 77
(CTest: skipped).

Exit 0: all match; 1: a mismatch or a failed run (each named); 2: usage; 77: no PyTorch.
"""
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODELS = os.path.join(ROOT, "assets", "models")
TOKENS = 32
ATOL = 1e-4


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    fusebox, workdir = sys.argv[1], sys.argv[2]
    try:
        import torch
    except ImportError:
        print("generate_test: skipped: PyTorch (Debian python3-torch) is not installed")
        return 77
    torch.set_num_threads(1)
    sys.path.insert(0, MODELS)
    import export_models as em

    os.makedirs(workdir, exist_ok=True)
    model = em.gpt().eval()
    path = os.path.join(workdir, "gpt.onnx")
    em.export_gpt(model, path)
    prompt = [int(t) for t in np.random.default_rng(37).integers(0, 50257, size=8)]
    prompt_path = os.path.join(workdir, "prompt.npy")
    np.save(prompt_path, np.array(prompt, dtype=np.int64))
    want_tokens, want_logits = em.greedy(model, prompt, TOKENS)
    want_logits = want_logits.astype(np.float64)

    failures = []
    for threads in (1, 2):
        logits_path = os.path.join(workdir, f"logits_t{threads}.npy")
        r = subprocess.run([fusebox, "generate", path, "--prompt", prompt_path, "--tokens", str(TOKENS),
                            "--threads", str(threads), "--json", "--save-logits", logits_path],
                           capture_output=True, text=True)
        if r.returncode != 0:
            failures.append(f"threads {threads}: exit {r.returncode}: {r.stderr.strip()}")
            continue
        got = json.loads(r.stdout)
        if got["tokens"] != want_tokens:
            failures.append(f"threads {threads}: tokens {got['tokens']}, PyTorch's {want_tokens}")
        if got["kv"]["mapping"] != "Hugging Face / Optimum names (past_key_values.* -> present.*)":
            failures.append(f"threads {threads}: mapping '{got['kv']['mapping']}'")
        steps = got["steps"]
        if [s["phase"] for s in steps] != ["prefill"] + ["decode"] * (TOKENS - 1):
            failures.append(f"threads {threads}: phases {[s['phase'] for s in steps]}")
        # The cache: 2 layers x (key, value) x 4 heads x 32 x 4 bytes per position.
        for i, s in enumerate(steps):
            if s["kv_bytes"] != (s["past"] + s["seq"]) * 2 * 2 * 4 * 32 * 4:
                failures.append(f"threads {threads}: step {i} kv_bytes {s['kv_bytes']} at {s['past'] + s['seq']} positions")
                break
        logits = np.load(logits_path).astype(np.float64)
        if logits.shape != want_logits.shape:
            failures.append(f"threads {threads}: logits {logits.shape}, PyTorch's {want_logits.shape}")
            continue
        worst = np.abs(logits - want_logits).max(axis=1)
        bad = [int(i) for i in np.nonzero(~(worst <= ATOL))[0]]
        if bad:
            failures.append(f"threads {threads}: logits differ past {ATOL} at steps {bad[:5]} (worst {worst.max():.3g})")
        print(f"threads {threads}: {len(got['tokens'])} tokens as PyTorch's: {got['tokens'] == want_tokens}; "
              f"worst |logits - PyTorch| {worst.max():.3g} over {len(worst)} steps; "
              f"ttft {got['ttft_ms']:.2f} ms, decode median {got['decode_ms']['median']:.2f} ms")
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
