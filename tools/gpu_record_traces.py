#!/usr/bin/env python3
"""Record what a GPU generate loop looks like to the profilers fusebox reads, on a lent GPU.

A small GPT-style decoder (random weights, bf16) generates greedily: one prefill over the prompt,
then one decode step per token with a static KV cache. It is recorded three ways:

  gpu_record_traces.py --mode eager --out T.json.gz   decode steps launched op by op
  gpu_record_traces.py --mode graph --out T.json.gz   each decode step one CUDA graph replay
  gpu_record_traces.py --mode ncu                     prefill + 2 eager decode steps between
      cudaProfilerStart/Stop, for `ncu --profile-from-start off` (same kernels as the traces)

The traces are PyTorch profiler (kineto) Chrome traces, with record_function ranges "prefill" and
"decode_step"; what the loop did (sizes, steps, wall time under the profiler, the first tokens)
goes to stdout as JSON.
Run by tools/gpu-record.sh on a lent GPU; the files it writes are the project's own recordings.
"""
import argparse
import gzip
import json
import os
import shutil
import sys
import time

import torch
import torch.nn.functional as F


def attention(q, k, v, mask=None, causal=False):
    """F.scaled_dot_product_attention where there is one (PyTorch >= 2.0), else the same math."""
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)
    s = (q @ k.transpose(-2, -1)) / (q.shape[-1] ** 0.5)
    if causal:
        mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).tril()
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    return s.softmax(-1) @ v


class Block(torch.nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
        self.ln2 = torch.nn.LayerNorm(d)
        self.fc1 = torch.nn.Linear(d, 4 * d)
        self.fc2 = torch.nn.Linear(4 * d, d)

    def split(self, t):
        b, s, d = t.shape
        return t.view(b, s, self.heads, d // self.heads).transpose(1, 2)

    def prefill(self, x, k_cache, v_cache):
        q, k, v = (self.split(t) for t in self.qkv(self.ln1(x)).chunk(3, dim=-1))
        p = x.shape[1]
        k_cache[:, :, :p].copy_(k)
        v_cache[:, :, :p].copy_(v)
        a = attention(q, k, v, causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(x.shape))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))

    def decode(self, x, k_cache, v_cache, pos, mask):
        # x [B, 1, d]; pos a 1-element device tensor; mask [L] bool, True up to pos (static shapes,
        # so the step can be captured as a CUDA graph).
        q, k, v = (self.split(t) for t in self.qkv(self.ln1(x)).chunk(3, dim=-1))
        k_cache.index_copy_(2, pos, k)
        v_cache.index_copy_(2, pos, v)
        a = attention(q, k_cache, v_cache, mask)
        x = x + self.proj(a.transpose(1, 2).reshape(x.shape))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))


class Decoder(torch.nn.Module):
    def __init__(self, vocab, d, heads, layers):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, d)
        self.blocks = torch.nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln = torch.nn.LayerNorm(d)
        self.head = torch.nn.Linear(d, vocab, bias=False)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mode", choices=["eager", "graph", "ncu"], required=True)
    p.add_argument("--out", help="the trace (.json.gz); not for --mode ncu")
    p.add_argument("--device", default="cuda")
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--prompt", type=int, default=256)
    p.add_argument("--steps", type=int, default=32)
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--d", type=int, default=1024)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--vocab", type=int, default=32000)
    a = p.parse_args()
    if a.mode != "ncu" and not a.out:
        p.error("--out is needed for --mode eager and graph")
    dev = torch.device(a.device)
    cuda = dev.type == "cuda"
    dtype = torch.bfloat16 if cuda else torch.float32
    torch.manual_seed(0)
    model = Decoder(a.vocab, a.d, a.heads, a.layers).to(dev, dtype).eval()
    cap = a.prompt + a.steps + 1
    hd = a.d // a.heads
    caches = [(torch.zeros(a.batch, a.heads, cap, hd, device=dev, dtype=dtype),
               torch.zeros(a.batch, a.heads, cap, hd, device=dev, dtype=dtype)) for _ in range(a.layers)]
    prompt = torch.randint(0, a.vocab, (a.batch, a.prompt), device=dev)
    tok = torch.zeros(a.batch, 1, dtype=torch.long, device=dev)
    pos = torch.zeros(1, dtype=torch.long, device=dev)
    ar = torch.arange(cap, device=dev)

    def prefill():
        with torch.profiler.record_function("prefill"):
            x = model.emb(prompt)
            for blk, (kc, vc) in zip(model.blocks, caches):
                x = blk.prefill(x, kc, vc)
            tok.copy_(model.head(model.ln(x[:, -1:])).argmax(-1))
            pos.fill_(a.prompt)

    def step():
        mask = ar <= pos
        x = model.emb(tok)
        for blk, (kc, vc) in zip(model.blocks, caches):
            x = blk.decode(x, kc, vc, pos, mask)
        tok.copy_(model.head(model.ln(x)).argmax(-1))

    with torch.no_grad():
        prefill()  # warm-up: cuBLAS handles, kernels chosen
        step()
        graph = None
        if a.mode == "graph":
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(3):
                    step()
            torch.cuda.current_stream().wait_stream(s)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                step()
        if cuda:
            torch.cuda.synchronize()

        def generate(steps):
            prefill()
            out = []
            for _ in range(steps):
                with torch.profiler.record_function("decode_step"):
                    if graph is not None:
                        graph.replay()
                    else:
                        step()
                    out.append(tok.clone())
                    pos.add_(1)
            return out

        if a.mode == "ncu":
            torch.cuda.synchronize()
            torch.cuda.profiler.start()
            generate(2)
            torch.cuda.synchronize()
            torch.cuda.profiler.stop()
            print(json.dumps({"mode": "ncu", "decode_steps": 2}))
            return 0

        acts = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if cuda else [])
        with torch.profiler.profile(activities=acts) as prof:
            t0 = time.perf_counter()
            out = generate(a.steps)
            if cuda:
                torch.cuda.synchronize()
            wall = time.perf_counter() - t0
        raw = a.out[:-3] if a.out.endswith(".gz") else a.out
        prof.export_chrome_trace(raw)
        if a.out.endswith(".gz"):
            with open(raw, "rb") as src, gzip.open(a.out, "wb", compresslevel=9) as dst:
                shutil.copyfileobj(src, dst)
            os.remove(raw)
        tokens = torch.cat(out, dim=1)
        print(json.dumps({"mode": a.mode, "device": torch.cuda.get_device_name() if cuda else "cpu",
                          "torch": torch.__version__, "batch": a.batch, "prompt": a.prompt, "steps": a.steps,
                          "layers": a.layers, "d": a.d, "heads": a.heads, "vocab": a.vocab,
                          "wall_s_under_profiler": round(wall, 6), "first_tokens": tokens[0, :8].tolist()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
