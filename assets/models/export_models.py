#!/usr/bin/python3
"""Exports fusebox's builtin models from PyTorch to ONNX, with inputs and PyTorch's outputs.

Run with Debian's python3-torch + python3-onnx (+ python3-torchvision for the conv nets):  /usr/bin/python3 assets/models/export_models.py

mlp() and transformer() are the workbench's models at their default sizes (the builtin `mlp` and
`transformer`); tests/bench/peers/race.py exports those. The committed assets are the same
architectures at smaller sizes, so the repository stays small (weights.bin under 1 MB): what the
tests need from them is the exporter's spelling of each op, not the size. Makes, next to this script:
  mlp_opset{13,17}.onnx          nn.Sequential(Linear 784-64, ReLU, Linear 64-64, ReLU, Linear 64-10)
  transformer_opset{13,17}.onnx  nn.TransformerEncoderLayer(d 128, heads 4, ffn 256, gelu, dropout 0,
                                 batch_first, norm_first=False), input [1, 32, 128]
  stack_opset{13,17}.onnx        two such layers (d 64, heads 4, ffn 128, seq 16), weights inline
  decoder_opset{13,17}.onnx      a GPT-2 / nanoGPT pre-norm decoder block (d 128, heads 4, ffn 512,
                                 seq 32): one fused QKV Linear d->3d split three ways, a causal
                                 mask as a registered tril buffer applied with masked_fill
                                 (exports as Where), tanh GELU; weights inline
  decoder_nomask_opset{13,17}.onnx  the same block (same weights) without the mask
  lstm_opset17.onnx              nn.LSTM(16, 32, 2 layers, batch_first) and a Linear 32->8 on every
                                 step, input [2, 7, 16]
  bigru_opset17.onnx             a bidirectional nn.GRU(16, 24, batch_first) and a Linear 48->8
  gpt_small_opset17.onnx         Gpt (below) with a 512-token vocabulary, d 32, 2 heads, 2 layers: its KV
                                 cache as inputs and outputs under Optimum's names; gpt_small.prompt.npy,
                                 and PyTorch's 16 greedy tokens and each step's logits for it
                                 (gpt_small.tokens.npy, gpt_small.logits.npy)
  gpt_small_stacked_opset17.onnx the same model with its cache as one tensor (past -> present)
  gpt_small_static_opset17.onnx  the same model with a static cache (Hugging Face's StaticCache): past
                                 preallocated [batch, heads, cache, head_dim] by the caller, this
                                 call's keys and values written into it at cache_position
                                 (ScatterElements), present of past's shape; no .npy files of its
                                 own: its greedy tokens and logits must match gpt_small's
  swin_attn_opset17.onnx         torchvision's ShiftedWindowAttention (Swin's masked attention: dim 32,
                                 window 4 x 4, shift 2 x 2, 2 heads) on [2, 10, 10, 32], padded to
                                 12 x 12; the shift mask is built with slice assignments (ScatterND)
  weights.bin                    the mlp and transformer weights as ONNX external data, shared by both
                                 opsets (identical tensors are stored once)
  mobilenet_v3_small_opset17.onnx     torchvision's MobileNetV3-Small (reduced tail, 100 classes) at
                                 224 x 224, batch 1, random weights; BatchNormalization folded by the exporter (eval mode)
  mobilenet_v3_small_bn_opset17.onnx  the same network with BatchNormalization kept as nodes
                                 (folding it into the Convs is then fusebox's work)
  <model>.x.npy                  the input; <model>.<output>.npy: PyTorch's output for it

Pass model names to export only those (e.g. `export_models.py decoder decoder_nomask`): the
other files, and weights.bin, are then left as they are.

Opset 13 spells LayerNorm as ReduceMean/Sub/Pow/Sqrt/Div, opset 17 as LayerNormalization; GELU is
Div/Erf/Add/Mul/Mul at both. The tests load every file, run it with all passes on and compare.
"""
import hashlib
import math
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
WEIGHTS = "weights.bin"


def mlp():
    torch.manual_seed(1)
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))


def block(d, heads, ffn):
    return nn.TransformerEncoderLayer(d_model=d, nhead=heads, dim_feedforward=ffn, dropout=0.0,
                                      activation="gelu", batch_first=True, norm_first=False)


def transformer():
    torch.manual_seed(2)
    return block(256, 4, 1024)


def stack():
    torch.manual_seed(3)
    return nn.Sequential(block(64, 4, 128), block(64, 4, 128))


class CausalSelfAttention(nn.Module):
    """nanoGPT's attention: one Linear d->3d split into q, k, v; the causal mask a tril buffer."""

    def __init__(self, d, heads, max_seq, causal):
        super().__init__()
        self.heads = heads
        self.causal = causal
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.register_buffer("bias", torch.tril(torch.ones(max_seq, max_seq)).view(1, 1, max_seq, max_seq))

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.c_attn(x).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        if self.causal:
            att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
        att = torch.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(b, t, c)
        return self.c_proj(y)


class DecoderBlock(nn.Module):
    """GPT-2's pre-norm block: x + attn(ln_1(x)), then x + mlp(ln_2(x)) with tanh GELU."""

    def __init__(self, d, heads, ffn, max_seq, causal):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = CausalSelfAttention(d, heads, max_seq, causal)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, ffn), nn.GELU(approximate="tanh"), nn.Linear(ffn, d))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


def decoder():
    torch.manual_seed(4)
    return DecoderBlock(128, 4, 512, 64, causal=True)


def decoder_nomask():
    torch.manual_seed(4)
    return DecoderBlock(128, 4, 512, 64, causal=False)


class CachedAttention(CausalSelfAttention):
    """The same attention over a KV cache: this call's keys and values are appended to the past
    ones ([batch, heads, past, head_dim]) and returned as the present; query i (position past + i)
    sees keys 0 .. past + i."""

    def forward(self, x, past_k, past_v):
        b, t, c = x.size()
        q, k, v = self.c_attn(x).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = torch.cat([past_k, k.view(b, t, self.heads, c // self.heads).transpose(1, 2)], dim=2)
        v = torch.cat([past_v, v.view(b, t, self.heads, c // self.heads).transpose(1, 2)], dim=2)
        past = past_k.size(2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, past:past + t, :past + t] == 0, float("-inf"))
        y = torch.softmax(att, dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, c)), k, v


class Gpt(nn.Module):
    """A GPT-2-shaped language model whose KV cache is inputs and outputs, as Hugging Face Optimum
    exports one ("decoder with past"): input_ids [batch, seq] and past_key_values.{i}.key/.value
    [batch, heads, past, head_dim] in; logits [batch, seq, vocab] and present.{i}.key/.value (the
    past with this call's seq appended) out. Learned positions from `past`, pre-norm blocks, a
    final LayerNorm and an LM head of its own (LLaMA's; tied to the embedding, as GPT-2's is, a
    randomly initialized model only repeats its last token, since each token's embedding dominates
    the residual stream)."""

    def __init__(self, vocab=50257, d=128, heads=4, ffn=512, layers=2, max_seq=1024):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(max_seq, d)
        self.blocks = nn.ModuleList()
        for _ in range(layers):
            blk = DecoderBlock(d, heads, ffn, max_seq, causal=True)
            blk.attn = CachedAttention(d, heads, max_seq, causal=True)
            self.blocks.append(blk)
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.heads, self.layers = heads, layers

    def forward(self, input_ids, *past):
        past_len = past[0].size(2)
        pos = torch.arange(past_len, past_len + input_ids.size(1), dtype=torch.long).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(pos)
        present = []
        for i, blk in enumerate(self.blocks):
            a, k, v = blk.attn(blk.ln_1(x), past[2 * i], past[2 * i + 1])
            x = x + a
            x = x + blk.mlp(blk.ln_2(x))
            present += [k, v]
        return (self.lm_head(self.ln_f(x)), *present)


def gpt():
    torch.manual_seed(10)
    return Gpt()


def gpt_small():
    torch.manual_seed(11)
    return Gpt(vocab=512, d=32, heads=2, ffn=64, layers=2, max_seq=64)


def greedy(model, prompt, tokens):
    """PyTorch's greedy loop over a Gpt with its KV cache: the generated ids and each step's
    last-position logits ([steps, vocab])."""
    heads, head_dim = model.heads, model.wte.embedding_dim // model.heads
    past = [torch.zeros(1, heads, 0, head_dim) for _ in range(2 * model.layers)]
    ids = torch.tensor([prompt], dtype=torch.long)
    out, rows = [], []
    with torch.no_grad():
        while len(out) < tokens:
            logits, *past = model(ids, *past)
            rows.append(logits[0, -1].numpy())
            out.append(int(rows[-1].argmax()))
            ids = torch.tensor([[out[-1]]], dtype=torch.long)
    return out, np.stack(rows)


def export_gpt_small():
    """gpt_small_opset17.onnx (a Gpt with a 512-token vocabulary, d 32, 2 heads, 2 layers) and, for
    its 6-token prompt, PyTorch's 16 greedy tokens and each step's logits."""
    model = gpt_small().eval()
    path = os.path.join(HERE, "gpt_small_opset17.onnx")
    export_gpt(model, path)
    prompt = [7, 300, 42, 511, 0, 128]
    tokens, logits = greedy(model, prompt, 16)
    np.save(os.path.join(HERE, "gpt_small.prompt.npy"), np.array(prompt, dtype=np.int64))
    np.save(os.path.join(HERE, "gpt_small.tokens.npy"), np.array(tokens, dtype=np.int64))
    np.save(os.path.join(HERE, "gpt_small.logits.npy"), logits.astype(np.float32))
    onnx.checker.check_model(path)
    print(f"gpt_small_opset17.onnx: tokens {tokens}")


class StackedCache(nn.Module):
    """A Gpt whose cache is one tensor, [2 * layers, batch, heads, past, head_dim] (each layer's
    key, then value), in as `past` and out as `present`: the other layout generate recognises."""

    def __init__(self, gpt):
        super().__init__()
        self.gpt = gpt

    def forward(self, input_ids, past):
        logits, *present = self.gpt(input_ids, *past.unbind(0))
        return logits, torch.stack(present)


def export_gpt_small_stacked():
    """gpt_small_stacked_opset17.onnx: gpt_small's weights with the stacked cache."""
    model = StackedCache(gpt_small().eval()).eval()
    path = os.path.join(HERE, "gpt_small_stacked_opset17.onnx")
    g = model.gpt
    past = torch.zeros(2 * g.layers, 1, g.heads, 2, g.wte.embedding_dim // g.heads)
    torch.onnx.export(model, (torch.zeros(1, 3, dtype=torch.long), past), path,
                      input_names=["input_ids", "past"], output_names=["logits", "present"],
                      dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"},
                                    "past": {1: "batch", 3: "past"}, "present": {1: "batch", 3: "past+seq"}},
                      opset_version=17, do_constant_folding=True)
    onnx.checker.check_model(path)
    print("gpt_small_stacked_opset17.onnx")


class StaticCache(nn.Module):
    """A Gpt over a preallocated KV cache, as Hugging Face's StaticCache exports one: every past is
    [batch, heads, cache, head_dim] at a length the caller chose (zeros beyond what was written),
    and each call writes its keys and values into it at `cache_position` ([seq], the positions of
    this call's tokens) with a scatter (ScatterElements, axis 2). In the graph present is a new
    tensor, past with those rows replaced; it has past's shape, so a runtime can write it in place
    and keep one buffer per past/present pair. Query i sees keys 0 ..
    cache_position[i]: the mask compares an arange over the cache with cache_position, so the
    cache length stays dynamic in the export, and the positions for wpe are cache_position itself
    (the cache's length says nothing about how much of it is written)."""

    def __init__(self, gpt):
        super().__init__()
        self.gpt = gpt

    @staticmethod
    def attend(attn, x, cache_position, past_k, past_v):
        b, t, c = x.size()
        heads = attn.heads
        q, k, v = attn.c_attn(x).split(c, dim=2)
        q = q.view(b, t, heads, c // heads).transpose(1, 2)
        k = k.view(b, t, heads, c // heads).transpose(1, 2)
        v = v.view(b, t, heads, c // heads).transpose(1, 2)
        index = cache_position.view(1, 1, t, 1).expand(b, heads, t, c // heads)
        k = past_k.scatter(2, index, k)
        v = past_v.scatter(2, index, v)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        # Unwritten slots (j > every cache_position) are masked too: their zeros never count.
        masked = torch.arange(k.size(2), dtype=torch.long).unsqueeze(0) > cache_position.unsqueeze(1)
        att = att.masked_fill(masked, float("-inf"))
        y = torch.softmax(att, dim=-1) @ v
        return attn.c_proj(y.transpose(1, 2).contiguous().view(b, t, c)), k, v

    def forward(self, input_ids, cache_position, *past):
        g = self.gpt
        x = g.wte(input_ids) + g.wpe(cache_position).unsqueeze(0)
        present = []
        for i, blk in enumerate(g.blocks):
            a, k, v = self.attend(blk.attn, blk.ln_1(x), cache_position, past[2 * i], past[2 * i + 1])
            x = x + a
            x = x + blk.mlp(blk.ln_2(x))
            present += [k, v]
        return (g.lm_head(g.ln_f(x)), *present)


def greedy_static(model, prompt, tokens, cache_len):
    """greedy() over a StaticCache: the cache starts as zeros [1, heads, cache_len, head_dim] per
    past, the prompt is prefilled at positions 0 .. P-1, then one token per step at P, P+1, ...;
    each present is fed back as the past. The generated ids and each step's last-position logits."""
    g = model.gpt
    heads, head_dim = g.heads, g.wte.embedding_dim // g.heads
    past = [torch.zeros(1, heads, cache_len, head_dim) for _ in range(2 * g.layers)]
    ids = torch.tensor([prompt], dtype=torch.long)
    position = torch.arange(len(prompt), dtype=torch.long)
    out, rows = [], []
    with torch.no_grad():
        while len(out) < tokens:
            logits, *past = model(ids, position, *past)
            rows.append(logits[0, -1].numpy())
            out.append(int(rows[-1].argmax()))
            position = position[-1:] + 1
            ids = torch.tensor([[out[-1]]], dtype=torch.long)
    return out, np.stack(rows)


# The ops gpt_small_static_opset17.onnx may hold: gpt_small's, plus the scatter into the cache and
# the mask's Range/compare (Identity: the exporter stores identical initializers, the LayerNorms'
# ones and zeros, once). A new one means the exporter spelled something differently.
STATIC_OPS = {"Identity", "Gather", "Add", "Mul", "Div", "Sub", "MatMul", "Transpose", "Reshape", "Split",
              "Slice", "Softmax", "Where", "Equal", "Less", "LessOrEqual", "Greater", "Range", "Unsqueeze",
              "Expand", "Shape", "Cast", "LayerNormalization", "ReduceMean", "Pow", "Sqrt", "Concat",
              "ConstantOfShape", "Constant", "Erf", "Tanh", "ScatterElements"}


def export_gpt_small_static():
    """gpt_small_static_opset17.onnx: gpt_small's weights (the same seed) with a static KV cache
    (StaticCache). Inputs input_ids [batch, seq], cache_position [seq] and past_key_values.{i}.key/
    .value [batch, heads, cache, head_dim]; outputs logits and present.{i}.key/.value, present under
    the same dim name as past. Exported with a cache of 8 and 3 ids. No .npy files of its own:
    PyTorch's greedy loop over it must give gpt_small.tokens.npy exactly and gpt_small.logits.npy
    within 1e-5 (the growing cache's reference, which export_gpt_small writes) with a cache just
    long enough (22 = 6 + 16) and a longer one (32), so the tests compare against those."""
    model = StaticCache(gpt_small().eval()).eval()
    g = model.gpt
    path = os.path.join(HERE, "gpt_small_static_opset17.onnx")
    names_in = ["input_ids", "cache_position"] + [f"past_key_values.{i}.{kv}" for i in range(g.layers)
                                                  for kv in ("key", "value")]
    names_out = ["logits"] + [f"present.{i}.{kv}" for i in range(g.layers) for kv in ("key", "value")]
    axes = {"input_ids": {0: "batch", 1: "seq"}, "cache_position": {0: "seq"},
            "logits": {0: "batch", 1: "seq"}}
    for n in names_in[2:] + names_out[1:]:
        axes[n] = {0: "batch", 2: "cache"}
    past = [torch.zeros(1, g.heads, 8, g.wte.embedding_dim // g.heads) for _ in range(2 * g.layers)]
    example = (torch.zeros(1, 3, dtype=torch.long), torch.arange(3, dtype=torch.long), *past)
    torch.onnx.export(model, example, path, input_names=names_in, output_names=names_out,
                      dynamic_axes=axes, opset_version=17, do_constant_folding=True)
    onnx.checker.check_model(path)
    ops = [n.op_type for n in onnx.load(path).graph.node]
    assert ops.count("ScatterElements") == 2 * g.layers, ops
    assert set(ops) <= STATIC_OPS, sorted(set(ops) - STATIC_OPS)
    prompt = np.load(os.path.join(HERE, "gpt_small.prompt.npy")).tolist()
    want_tokens = np.load(os.path.join(HERE, "gpt_small.tokens.npy")).tolist()
    want_logits = np.load(os.path.join(HERE, "gpt_small.logits.npy"))
    for cache_len in (len(prompt) + len(want_tokens), 32):
        tokens, logits = greedy_static(model, prompt, len(want_tokens), cache_len)
        diff = float(np.abs(logits - want_logits).max())
        assert tokens == want_tokens and diff <= 1e-5, (cache_len, tokens, diff)
        print(f"gpt_small_static_opset17.onnx: cache {cache_len}, tokens {tokens}, "
              f"max logit diff {diff:.3g}")
    counts = {op: ops.count(op) for op in sorted(set(ops))}
    print(f"gpt_small_static_opset17.onnx: {len(ops)} nodes, ops {counts}")


def export_gpt(model, path, opset=17):
    """Exports a Gpt with dynamic batch, seq and past (dim names batch, seq, past, past+seq) and
    Optimum's input and output names; returns those names."""
    layers, heads = model.layers, model.heads
    head_dim = model.wte.embedding_dim // heads
    names_in = ["input_ids"] + [f"past_key_values.{i}.{kv}" for i in range(layers) for kv in ("key", "value")]
    names_out = ["logits"] + [f"present.{i}.{kv}" for i in range(layers) for kv in ("key", "value")]
    ids = torch.zeros(1, 3, dtype=torch.long)
    past = [torch.zeros(1, heads, 2, head_dim) for _ in range(2 * layers)]
    axes = {"input_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}
    for n in names_in[1:]:
        axes[n] = {0: "batch", 2: "past"}
    for n in names_out[1:]:
        axes[n] = {0: "batch", 2: "past+seq"}
    torch.onnx.export(model, (ids, *past), path, input_names=names_in, output_names=names_out,
                      dynamic_axes=axes, opset_version=opset, do_constant_folding=True)
    return names_in, names_out


class Recurrent(nn.Module):
    """A recurrent layer (batch first) and a Linear head over every step's output."""

    def __init__(self, rnn, width):
        super().__init__()
        self.rnn = rnn
        self.head = nn.Linear(width, 8)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.head(y)


def lstm():
    torch.manual_seed(7)
    return Recurrent(nn.LSTM(16, 32, num_layers=2, batch_first=True), 32)


def bigru():
    torch.manual_seed(8)
    return Recurrent(nn.GRU(16, 24, batch_first=True, bidirectional=True), 48)


def swin_attn():
    from torchvision.models.swin_transformer import ShiftedWindowAttention
    torch.manual_seed(9)
    return ShiftedWindowAttention(32, [4, 4], [2, 2], 2)


def mlp_asset():
    torch.manual_seed(1)
    return nn.Sequential(nn.Linear(784, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))


def transformer_asset():
    torch.manual_seed(2)
    return block(128, 4, 256)


def mobilenet_v3_small():
    """torchvision's MobileNetV3-Small (random weights, no download). Its BatchNormalization
    statistics are calibrated on random images (train mode, cumulative averages), as training would
    leave them: with the default ones (mean 0, variance 1) the activations of a randomly initialized
    net shrink layer after layer and the logits come out near 1e-9, too small for a comparison to
    mean anything (the classifier gets nn.Linear's default init for the same reason: logits of
    order 0.1 instead of 0.03). Exported as PyTorch users export it (eval mode): the exporter folds
    every BatchNormalization into its Conv."""
    import torchvision  # Debian's python3-torchvision; only the conv nets need it
    torch.manual_seed(5)
    # reduced_tail (torchvision's own variant: the last stage's channels halved) and 100 classes
    # keep each export near 2.6 MB instead of 10 MB; every block type and op is the same.
    model = torchvision.models.mobilenet_v3_small(weights=None, reduced_tail=True, num_classes=100)
    for m in model.modules():
        if isinstance(m, nn.Linear):
            m.reset_parameters()  # PyTorch's default init, not torchvision's N(0, 0.01)
        if isinstance(m, nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None  # cumulative average over the calibration batches
    model.train()
    with torch.no_grad():
        for _ in range(4):
            model(torch.rand(4, 3, 224, 224) * 2 - 1)
    return model.eval()


def mobilenet_v3_small_bn():
    """The same network, the same weights, with BatchNormalization kept as nodes (training=PRESERVE,
    no constant folding): folding it into the Convs is then fusebox's work."""
    return mobilenet_v3_small()


def resnet18():
    """torchvision's ResNet-18 (random weights, no download), its BatchNormalization statistics
    calibrated as MobileNetV3-Small's are. Not one of MODELS: its weights are 45 MB, so the race
    (tests/bench/peers/race.py) and tests/onnx/torchvision_models_test.py export it into the build
    directory instead of the repository."""
    import torchvision
    torch.manual_seed(7)
    model = torchvision.models.resnet18(weights=None)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None
    model.train()
    with torch.no_grad():
        for _ in range(2):
            model(torch.rand(4, 3, 224, 224) * 2 - 1)
    return model.eval()


MODELS = [
    # name, constructor, input shape, output name, external weights, opsets, how the exporter runs
    ("mlp", mlp_asset, (1, 784), "logits", True, (13, 17), {}),
    ("transformer", transformer_asset, (1, 32, 128), "y", True, (13, 17), {}),
    ("stack", stack, (1, 16, 64), "y", False, (13, 17), {}),
    ("decoder", decoder, (1, 32, 128), "y", False, (13, 17), {}),
    ("decoder_nomask", decoder_nomask, (1, 32, 128), "y", False, (13, 17), {}),
    # The recurrent layers (PyTorch's gate order is reordered into ONNX's by the exporter).
    ("lstm", lstm, (2, 7, 16), "y", False, (17,), {}),
    ("bigru", bigru, (2, 7, 16), "y", False, (17,), {}),
    # Swin's shifted-window attention, whose mask is written with ScatterND.
    ("swin_attn", swin_attn, (2, 10, 10, 32), "y", False, (17,), {}),
    # The conv nets, opset 17 only.
    ("mobilenet_v3_small", mobilenet_v3_small, (1, 3, 224, 224), "y", False, (17,), {}),
    ("mobilenet_v3_small_bn", mobilenet_v3_small_bn, (1, 3, 224, 224), "y", False, (17,),
     {"do_constant_folding": False, "training": torch.onnx.TrainingMode.PRESERVE}),
]


class SharedWeights:
    """One external-data file; tensors with identical bytes are stored once (64-byte aligned)."""

    def __init__(self, path):
        self.path = path
        self.offsets = {}
        self.data = bytearray()

    def place(self, raw):
        key = hashlib.sha256(raw).hexdigest()
        if key not in self.offsets:
            self.data += b"\0" * (-len(self.data) % 64)
            self.offsets[key] = len(self.data)
            self.data += raw
        return self.offsets[key]

    def externalize(self, model):
        for t in model.graph.initializer:
            raw = onnx.numpy_helper.to_array(t).tobytes()
            if len(raw) < 1024:
                continue  # small tensors stay inline
            offset = self.place(raw)
            t.ClearField("raw_data")
            t.ClearField("float_data")
            t.ClearField("int64_data")
            t.data_location = onnx.TensorProto.EXTERNAL
            del t.external_data[:]
            for k, v in (("location", WEIGHTS), ("offset", str(offset)), ("length", str(len(raw)))):
                e = t.external_data.add()
                e.key, e.value = k, v

    def write(self):
        with open(self.path, "wb") as f:
            f.write(self.data)


def main():
    only = set(sys.argv[1:])
    if not only or "gpt_small" in only:  # its inputs are the ids and the cache, not one x
        export_gpt_small()
        export_gpt_small_stacked()
        export_gpt_small_static()  # after export_gpt_small: it checks itself against its .npy files
        only.discard("gpt_small")
        if not only and len(sys.argv) > 1:
            return
    unknown = only - {m[0] for m in MODELS}
    if unknown:
        sys.exit(f"unknown model(s) {' '.join(sorted(unknown))}; known: {' '.join(m[0] for m in MODELS)}")
    external_models = {m[0] for m in MODELS if m[4]}
    if only & external_models and not external_models <= only:
        sys.exit(f"{WEIGHTS} holds the weights of {' '.join(sorted(external_models))}: export them together")
    shared = SharedWeights(os.path.join(HERE, WEIGHTS))
    written = []
    for name, make, shape, out_name, external, opsets, how in MODELS:
        if only and name not in only:
            continue
        model = make().eval()
        torch.manual_seed(100)
        x = torch.rand(*shape) * 2 - 1
        with torch.no_grad():
            y = model(x)
        np.save(os.path.join(HERE, f"{name}.x.npy"), x.numpy())
        np.save(os.path.join(HERE, f"{name}.{out_name}.npy"), y.numpy())
        for opset in opsets:
            path = os.path.join(HERE, f"{name}_opset{opset}.onnx")
            # Export with autograd on: nn.TransformerEncoderLayer's fused fast path is then off and
            # the exporter sees the primitive ops.
            torch.onnx.export(model, (x,), path, input_names=["x"], output_names=[out_name],
                              opset_version=opset, **{"do_constant_folding": True, **how})
            m = onnx.load(path)
            if external:
                shared.externalize(m)
            onnx.save(m, path)
            written.append(path)
            ops = sorted({n.op_type for n in m.graph.node})
            print(f"{os.path.basename(path)}: {len(m.graph.node)} nodes, ops {' '.join(ops)}")
    if shared.data:  # the external weights are rewritten only with the models that use them
        shared.write()
        print(f"{WEIGHTS}: {len(shared.data)} bytes")
    for path in written:
        onnx.checker.check_model(path)


if __name__ == "__main__":
    main()
