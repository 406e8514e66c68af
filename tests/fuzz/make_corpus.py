#!/usr/bin/env python3
"""Writes the fuzz corpus (issue 23: "every file in and out trusted") into a folder.

Usage: make_corpus.py SOURCE_DIR OUT_DIR

OUT_DIR gets the bad (and a few good) input files and cases.json, the list of cases that
run_corpus.py runs. Each case: the tool (fusebox or fusebox-ui), its arguments ({C} stands for
OUT_DIR, {W} for the case's own empty work folder), the exit codes allowed, the fragments stderr
must hold when the exit is not 0 (the bad file's name, and the JSON pointer / node / input where
there is one), and a timeout. Everything is seeded: the same sources give the same corpus.

The contract (issue 23): bad input exits 2 with a message naming the file and the place; valid
input exits 0; never 1, a signal, a hang or a sanitizer report.

Only Python's standard library: the ONNX models are mutated as bytes, and the few hand-made
models are written by the small protobuf encoder below (no onnx package).
"""
import gzip
import json
import os
import random
import shutil
import sqlite3
import stat
import struct
import sys

# Cases that fail against today's binaries, with the bug each one shows. run_corpus.py reports
# them as "known" (not failures) unless --strict; a known case that passes is reported as
# "fixed: remove from KNOWN_FAILING". Empty this as the fixes land.
KNOWN_FAILING = {
}

HANG_TIMEOUT = 3     # special files (FIFO, /dev/zero): a correct reader refuses them at once
DEFAULT_TIMEOUT = 20

# ---------------------------------------------------------------------------------------------
# A minimal protobuf writer for hand-made ONNX models (field numbers from onnx.proto).


def _varint(n):
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field, wire):
    return _varint((field << 3) | wire)


def f_int(field, n):
    return _key(field, 0) + _varint(n)


def f_bytes(field, data):
    if isinstance(data, str):
        data = data.encode()
    return _key(field, 2) + _varint(len(data)) + data


FLOAT, INT64, UINT64 = 1, 7, 13


def tensor(name, dtype, dims, values):
    body = b"".join(f_int(1, d) for d in dims) + f_int(2, dtype) + f_bytes(8, name)
    if dtype == FLOAT:
        raw = struct.pack("<%df" % len(values), *values)
    else:
        raw = struct.pack("<%dq" % len(values), *values)
    return body + f_bytes(9, raw)


def value_info(name, dtype, dims):
    shape = b""
    for d in dims:
        shape += f_bytes(1, f_bytes(2, d) if isinstance(d, str) else f_int(1, d))
    tensor_type = f_int(1, dtype) + f_bytes(2, shape)
    return f_bytes(1, name) + f_bytes(2, f_bytes(1, tensor_type))


def attr_int(name, value):
    return f_bytes(1, name) + f_int(3, value) + f_int(20, 2)  # type INT


def attr_ints(name, values):
    return f_bytes(1, name) + b"".join(f_int(8, v) for v in values) + f_int(20, 7)  # type INTS


def node(op, inputs, outputs, name, attrs=()):
    body = b"".join(f_bytes(1, i) for i in inputs) + b"".join(f_bytes(2, o) for o in outputs)
    body += f_bytes(3, name) + f_bytes(4, op) + b"".join(f_bytes(5, a) for a in attrs)
    return body


def model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = b"".join(f_bytes(1, n) for n in nodes) + f_bytes(2, "fuzz")
    graph += b"".join(f_bytes(5, t) for t in initializers)
    graph += b"".join(f_bytes(11, v) for v in inputs) + b"".join(f_bytes(12, v) for v in outputs)
    return f_int(1, 8) + f_bytes(2, "fuzz") + f_bytes(7, graph) + f_bytes(8, f_bytes(1, "") + f_int(2, opset))


def npy(descr, shape, data, version=1):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    return npy_raw(header, data, version)


def npy_raw(header, data=b"", version=1):
    h = header.encode("latin1") if isinstance(header, str) else header
    pad = 64 - (10 + len(h) + 1) % 64
    h = h + b" " * pad + b"\n"
    if version == 1:
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + data
    return b"\x93NUMPY\x02\x00" + struct.pack("<I", len(h)) + h + data


# ---------------------------------------------------------------------------------------------


class Corpus:
    def __init__(self, src, out):
        self.src, self.out = src, out
        self.cases = []
        self.names = set()

    def write(self, rel, data):
        path = os.path.join(self.out, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        return "{C}/" + rel

    def case(self, name, kind, args, exit=(2,), stderr=(), tool="fusebox", timeout=DEFAULT_TIMEOUT,
             machine_cache=None, device_out=None, rlimits=None, max_rss_mb=None):
        assert name not in self.names, name
        self.names.add(name)
        c = {"name": name, "kind": kind, "tool": tool, "args": list(args), "exit": list(exit),
             "stderr": list(stderr), "timeout": timeout}
        if machine_cache is not None:
            c["machine_cache"] = machine_cache
        if device_out:
            c["device_out"] = device_out   # {"name": ..., "major": .., "minor": ..}: made in {W}
        if rlimits:
            c["rlimits"] = rlimits         # {"as_mb": .., "fsize_kb": .., "nofile": ..}: set in the child
        if max_rss_mb:
            c["max_rss_mb"] = max_rss_mb   # its peak resident memory may not pass this
        if name in KNOWN_FAILING:
            c["known"] = KNOWN_FAILING[name]
        self.cases.append(c)


QUICK = ["--iters", "1", "--warmup", "0"]


def onnx_mutations(cp):
    """Byte-flipped and truncated copies of the shipped models (seeded)."""
    models = os.path.join(cp.src, "assets", "models")
    # The mlp's weights live beside it in weights.bin (external data): copy it along.
    shutil.copy(os.path.join(models, "weights.bin"), os.path.join(cp.out, "onnx", "weights.bin"))
    plan = [  # model, flips via inspect, flips via run, truncations via inspect, truncations via run
        ("mlp_opset13", 8, 6, 4, 2),
        ("transformer_opset17", 8, 5, 4, 2),
        ("stack_opset17", 4, 2, 2, 1),
    ]
    for stem, n_insp, n_run, t_insp, t_run in plan:
        data = open(os.path.join(models, stem + ".onnx"), "rb").read()
        rng = random.Random("fusebox-fuzz-" + stem)
        for i in range(n_insp + n_run):
            buf = bytearray(data)
            for _ in range(rng.randint(1, 4)):
                # Half the flips land in the first 4 KiB (the graph's structure), half anywhere.
                pos = rng.randrange(min(len(buf), 4096)) if rng.random() < 0.5 else rng.randrange(len(buf))
                buf[pos] = rng.choice([0x00, 0xFF, 0x80, 0x7F, rng.randrange(256), buf[pos] ^ (1 << rng.randrange(8))])
            name = "%s_flip%02d.onnx" % (stem, i)
            path = cp.write("onnx/" + name, bytes(buf))
            if i < n_insp:
                cp.case("onnx/%s_flip%02d_inspect" % (stem, i), "onnx_flip", ["inspect", path], exit=(0, 2), stderr=[name])
            else:
                # Every other one with --json: the names a flip leaves may not be UTF-8.
                cp.case("onnx/%s_flip%02d_run" % (stem, i), "onnx_flip", ["run", path, "--passes", "none"] + QUICK
                        + (["--json"] if i % 2 else []), exit=(0, 2), stderr=[name])
        for i in range(t_insp + t_run):
            cut = rng.randrange(1, len(data)) if i else 0
            name = "%s_trunc%02d.onnx" % (stem, i)
            path = cp.write("onnx/" + name, data[:cut])
            # A truncated protobuf may still parse (a cut at a field boundary): 0 or 2.
            cmd = ["inspect", path] if i < t_insp else ["run", path] + QUICK
            cp.case("onnx/%s_trunc%02d_%s" % (stem, i, cmd[0]), "onnx_trunc", cmd, exit=(0, 2), stderr=[name])
    # Garbage that is not a protobuf at all, and a model whose external data is missing.
    cp.case("onnx/text_file", "onnx_hand", ["inspect", cp.write("onnx/text.onnx", "this is not a model\n")], stderr=["text.onnx"])
    cp.case("onnx/empty_file", "onnx_hand", ["run", cp.write("onnx/empty.onnx", b"")] + QUICK, stderr=["empty.onnx"])
    mlp = open(os.path.join(models, "mlp_opset13.onnx"), "rb").read()
    cp.case("onnx/missing_external_data", "onnx_hand", ["run", cp.write("onnx_noweights/mlp.onnx", mlp)] + QUICK,
            stderr=["mlp.onnx", "weights.bin"])
    short = open(os.path.join(models, "weights.bin"), "rb").read()[:1000]
    cp.write("onnx_shortweights/weights.bin", short)
    cp.case("onnx/short_external_data", "onnx_hand", ["run", cp.write("onnx_shortweights/mlp.onnx", mlp)] + QUICK,
            stderr=["mlp.onnx", "weights.bin"])


def onnx_hand(cp):
    """Hand-made models: each valid protobuf, each wrong in one place the importer must name."""
    x23 = value_info("x", FLOAT, [2, 3])
    m = model([node("Reshape", ["x", "shape"], ["y"], "reshape_huge")], [x23], [value_info("y", FLOAT, [])],
              [tensor("shape", INT64, [2], [1 << 62, 0])])
    cp.case("onnx/reshape_2p62_0", "onnx_hand", ["run", cp.write("hand/reshape_huge.onnx", m)] + QUICK,
            stderr=["reshape_huge.onnx", "reshape_huge"])
    m = model([node("Reshape", ["x", "shape"], ["y"], "reshape_zero", [attr_int("allowzero", 1)])], [x23],
              [value_info("y", FLOAT, [])], [tensor("shape", INT64, [2], [1 << 62, 0])])
    cp.case("onnx/reshape_2p62_0_allowzero", "onnx_hand", ["run", cp.write("hand/reshape_allowzero.onnx", m)] + QUICK,
            stderr=["reshape_allowzero.onnx", "reshape_zero"])
    # The shape as a model input: fusebox takes shapes as constants, and must say so.
    m = model([node("Reshape", ["x", "shape"], ["y"], "reshape_rt")], [x23, value_info("shape", INT64, [2])],
              [value_info("y", FLOAT, [])])
    cp.case("onnx/reshape_runtime_shape", "onnx_hand", ["run", cp.write("hand/reshape_runtime.onnx", m), "--input",
            "shape=" + cp.write("hand/shape_2p62_0.npy", npy("<i8", "(2,)", struct.pack("<2q", 1 << 62, 0)))] + QUICK,
            stderr=["reshape_runtime.onnx", "reshape_rt"])
    # An empty tensor (a 0 dim) reshaped with allowzero to [2^62, 0]: zero elements either way.
    for label, src, inputs, inits in (
            ("input", "x", [value_info("x", FLOAT, [0, 3])], []),
            ("initializer", "e", [value_info("x", FLOAT, [2])], [tensor("e", FLOAT, [0, 3], [])])):
        m = model([node("Reshape", [src, "shape"], ["y"], "reshape_empty", [attr_int("allowzero", 1)]),
                   node("Relu", ["y"], ["z"], "relu")],
                  inputs, [value_info("z", FLOAT, [])], inits + [tensor("shape", INT64, [2], [1 << 62, 0])])
        path = cp.write("hand/reshape_empty_%s.onnx" % label, m)
        for passes in ("none", "all"):
            cp.case("onnx/reshape_empty_%s_to_2p62_0_passes_%s" % (label, passes), "onnx_hand",
                    ["run", path, "--passes", passes] + QUICK, exit=(0, 2), stderr=["reshape_empty_%s.onnx" % label])
    m = model([node("Reshape", ["x", "shape"], ["y"], "reshape_bad")], [x23], [value_info("y", FLOAT, [])],
              [tensor("shape", INT64, [2], [4, 4])])
    cp.case("onnx/reshape_wrong_count", "onnx_hand", ["run", cp.write("hand/reshape_count.onnx", m)] + QUICK,
            stderr=["reshape_count.onnx", "reshape_bad"])
    # Attributes of 2^32: a blocksize whose square overflows int64, and pool windows of 2^64 taps
    # over a 2x2 input (pads just under the kernel, strides of the kernel: a 2x2 output): refused,
    # or pooled in the work the output needs, never a division by zero or a loop over the window.
    x1444 = value_info("x", FLOAT, [1, 4, 4, 4])
    m = model([node("DepthToSpace", ["x"], ["y"], "d2s_huge", [attr_int("blocksize", 1 << 32)])], [x1444],
              [value_info("y", FLOAT, [])])
    cp.case("onnx/depth_to_space_blocksize_2p32", "onnx_hand", ["run", cp.write("hand/d2s_huge.onnx", m)] + QUICK,
            stderr=["d2s_huge.onnx", "d2s_huge"])
    m = model([node("SpaceToDepth", ["x"], ["y"], "s2d_huge", [attr_int("blocksize", 1 << 32)])], [x1444],
              [value_info("y", FLOAT, [])])
    cp.case("onnx/space_to_depth_blocksize_2p32", "onnx_hand", ["run", cp.write("hand/s2d_huge.onnx", m)] + QUICK,
            stderr=["s2d_huge.onnx", "s2d_huge"])
    k = 1 << 32
    m = model([node("AveragePool", ["x"], ["y"], "pool_huge",
                    [attr_ints("kernel_shape", [k, k]), attr_ints("pads", [k - 1, k - 1, k - 1, k - 1]),
                     attr_ints("strides", [k, k]), attr_int("count_include_pad", 1)])],
              [value_info("x", FLOAT, [1, 1, 2, 2])], [value_info("y", FLOAT, [])])
    cp.case("onnx/average_pool_kernel_2p32", "onnx_hand", ["run", cp.write("hand/pool_huge.onnx", m), "--passes",
            "none"] + QUICK, exit=(0, 2), stderr=["pool_huge.onnx"])
    # Window arithmetic past 2^63: pads of 2^63-1 wrapped to a [1,4,2,2] output and ran; pads of
    # 2^62 were refused for the wrong reason; a ConvTranspose output_padding of 2^63-1 wrapped.
    w4411 = tensor("w", FLOAT, [4, 4, 1, 1], [0.5] * 16)
    big = (1 << 63) - 1
    for label, pads in (("max", [big] * 4), ("2p62", [1 << 62] * 4)):
        m = model([node("Conv", ["x", "w"], ["y"], "conv_pads_" + label, [attr_ints("pads", pads)])], [x1444],
                  [value_info("y", FLOAT, [])], [w4411])
        cp.case("onnx/conv_pads_%s" % label, "onnx_hand",
                ["run", cp.write("hand/conv_pads_%s.onnx" % label, m), "--passes", "none"] + QUICK,
                stderr=["conv_pads_%s.onnx" % label, "conv_pads_" + label, "passes 2^63"])
    m = model([node("ConvTranspose", ["x", "w"], ["y"], "convt_outpad", [attr_ints("output_padding", [big, big]),
                                                                          attr_ints("strides", [big, big])])],
              [x1444], [value_info("y", FLOAT, [])], [w4411])
    cp.case("onnx/conv_transpose_output_padding_max", "onnx_hand",
            ["run", cp.write("hand/convt_outpad.onnx", m), "--passes", "none"] + QUICK,
            stderr=["convt_outpad.onnx", "convt_outpad", "passes 2^63"])
    # A Flatten axis of -2^63 was cut to an int (0) and accepted.
    m = model([node("Flatten", ["x"], ["y"], "flatten_min", [attr_int("axis", -(1 << 63))])],
              [value_info("x", FLOAT, [4, 2])], [value_info("y", FLOAT, [])])
    cp.case("onnx/flatten_axis_int64_min", "onnx_hand",
            ["run", cp.write("hand/flatten_min.onnx", m), "--passes", "none"] + QUICK,
            stderr=["flatten_min.onnx", "flatten_min", "-9223372036854775808 out of range"])
    # An initializer also listed as a graph input (older exporters), fed with --input: says it is
    # a weight of the model, not "no input".
    m = model([node("MatMul", ["a", "x"], ["y"], "mm")], [value_info("a", FLOAT, [2, 3]), value_info("x", FLOAT, [3, 2])],
              [value_info("y", FLOAT, [2, 2])], [tensor("x", FLOAT, [3, 2], [1.0] * 6)])
    cp.case("onnx/initializer_fed_as_input", "onnx_hand",
            ["run", cp.write("hand/init_input.onnx", m), "--input", "x={W}/x.npy"] + QUICK,
            stderr=["init_input.onnx", "'x' is one of the model's initializers", "its inputs: a"])
    m = model([node("Gather", ["x", "idx"], ["y"], "gather_oob", [attr_int("axis", 0)])],
              [value_info("x", FLOAT, [4, 2])], [value_info("y", FLOAT, [1, 2])], [tensor("idx", INT64, [1], [7])])
    cp.case("onnx/gather_index_out_of_range", "onnx_hand",
            ["run", cp.write("hand/gather_oob.onnx", m), "--passes", "none"] + QUICK, stderr=["gather_oob"])
    m = model([node("Gather", ["x", "idx"], ["y"], "gather_neg", [attr_int("axis", 0)])],
              [value_info("x", FLOAT, [4, 2])], [value_info("y", FLOAT, [1, 2])], [tensor("idx", INT64, [1], [-9])])
    cp.case("onnx/gather_index_negative", "onnx_hand",
            ["run", cp.write("hand/gather_neg.onnx", m), "--passes", "none"] + QUICK, stderr=["gather_neg"])
    m = model([node("Gather", ["x", "idx"], ["y"], "gather_in", [attr_int("axis", 0)])],
              [value_info("x", FLOAT, [4, 2]), value_info("idx", INT64, [1])], [value_info("y", FLOAT, [1, 2])])
    gin = cp.write("hand/gather_input.onnx", m)
    for label, v in (("7", 7), ("neg9", -9), ("2p62", 1 << 62)):
        idx = cp.write("hand/idx_%s.npy" % label, npy("<i8", "(1,)", struct.pack("<q", v)))
        for ex in ("eager", "compiled"):
            cp.case("onnx/gather_input_index_%s_%s" % (label, ex), "onnx_hand",
                    ["run", gin, "--input", "idx=" + idx, "--executor", ex] + QUICK, stderr=["gather_in"])
    cp.case("onnx/gather_input_index_valid", "valid",
            ["run", gin, "--input", "idx=" + cp.write("hand/idx_3.npy", npy("<i8", "(1,)", struct.pack("<q", 3)))] + QUICK,
            exit=(0,))
    m = model([node("Gather", ["x", "idx"], ["y"], "gather_axis", [attr_int("axis", 5)])],
              [value_info("x", FLOAT, [4, 2])], [value_info("y", FLOAT, [1, 2])], [tensor("idx", INT64, [1], [0])])
    cp.case("onnx/gather_axis_out_of_range", "onnx_hand", ["run", cp.write("hand/gather_axis.onnx", m)] + QUICK,
            stderr=["gather_axis.onnx", "gather_axis"])
    m = model([node("Cast", ["x"], ["y"], "cast_bad", [attr_int("to", (1 << 32) + 7)])],
              [value_info("x", FLOAT, [2])], [value_info("y", INT64, [2])])
    cp.case("onnx/cast_to_2p32_plus_7", "onnx_hand", ["run", cp.write("hand/cast_bad.onnx", m)] + QUICK,
            stderr=["cast_bad.onnx", "cast_bad"])
    cp.case("onnx/cast_to_2p32_plus_7_inspect", "onnx_hand", ["inspect", "{C}/hand/cast_bad.onnx"], exit=(0, 2),
            stderr=["cast_bad.onnx"])
    m = model([node("Relu", ["x"], ["y"], "relu")], [value_info("x", FLOAT, [-3, 4])], [value_info("y", FLOAT, [])])
    cp.case("onnx/negative_input_dim", "onnx_hand", ["run", cp.write("hand/neg_dim.onnx", m)] + QUICK,
            stderr=["neg_dim.onnx", "'x'"])
    m = model([node("Relu", ["x"], ["y"], "relu")], [value_info("x", FLOAT, [1 << 40, 1 << 40])],
              [value_info("y", FLOAT, [])])
    cp.case("onnx/huge_input_dims", "onnx_hand", ["run", cp.write("hand/huge_dim.onnx", m)] + QUICK,
            stderr=["huge_dim.onnx", "'x'"])
    m = model([node("Relu", ["nowhere"], ["y"], "relu_dangling")], [value_info("x", FLOAT, [2])], [value_info("y", FLOAT, [2])])
    cp.case("onnx/dangling_input", "onnx_hand", ["run", cp.write("hand/dangling.onnx", m)] + QUICK,
            stderr=["dangling.onnx", "nowhere"])
    m = model([node("NoSuchOp", ["x"], ["y"], "mystery")], [value_info("x", FLOAT, [2])], [value_info("y", FLOAT, [2])])
    cp.case("onnx/unknown_op", "onnx_hand", ["run", cp.write("hand/unknown_op.onnx", m)] + QUICK,
            stderr=["unknown_op.onnx", "NoSuchOp"])
    cp.case("onnx/unknown_op_inspect_strict", "onnx_hand", ["inspect", "--strict", "{C}/hand/unknown_op.onnx"],
            stderr=["unknown_op.onnx"])
    m = model([node("Relu", ["x"], ["y"], "a"), node("Relu", ["y"], ["x2"], "b")],
              [value_info("x", FLOAT, [2])], [value_info("x2", FLOAT, [2]), value_info("x2", FLOAT, [2])])
    cp.case("onnx/duplicate_output", "onnx_hand", ["run", cp.write("hand/dup_output.onnx", m)] + QUICK, exit=(0, 2),
            stderr=["dup_output.onnx"])
    m = model([node("Relu", ["y"], ["x"], "cyc_a"), node("Relu", ["x"], ["y"], "cyc_b")], [], [value_info("y", FLOAT, [2])])
    cp.case("onnx/cycle", "onnx_hand", ["run", cp.write("hand/cycle.onnx", m)] + QUICK, stderr=["cycle.onnx"])

    # Names that are not UTF-8 (protobuf strings must be, but nothing enforces it), through every
    # report that writes names: JSON needs valid UTF-8.
    m = model([node("Relu", ["x"], [b"y\xff"], b"relu\xfe"), node("Relu", [b"y\xff"], ["z"], "relu2")],
              [value_info("x", FLOAT, [2])], [value_info("z", FLOAT, [2])])
    bad8 = cp.write("hand/non_utf8_names.onnx", m)
    for label, args in (("run", ["run", bad8, "--passes", "none"] + QUICK),
                        ("run_json", ["run", bad8, "--passes", "none", "--json"] + QUICK),
                        ("plan_json", ["plan", bad8, "--passes", "none", "--json"]),
                        ("inspect", ["inspect", bad8]),
                        ("graph", ["graph", bad8, "--passes", "none", "--out", "{W}/g.svg"]),
                        ("profile", ["profile", bad8, "--passes", "none", "--profile-runs", "1", "--out", "{W}/p"] + QUICK)):
        cp.case("onnx/non_utf8_names_" + label, "onnx_hand", args, exit=(0, 2), stderr=["non_utf8_names.onnx"])
    # Broken models through the other commands that read one.
    for label, args in (("plan_cast_bad", ["plan", "{C}/hand/cast_bad.onnx"]),
                        ("graph_text", ["graph", "{C}/onnx/text.onnx", "--out", "{W}/g.svg"]),
                        ("profile_dangling", ["profile", "{C}/hand/dangling.onnx", "--out", "{W}/p"] + QUICK),
                        ("compare_text", ["compare", "{C}/onnx/text.onnx", "--a", "passes=none", "--iters", "1",
                                          "--warmup", "0", "--profile-runs", "1"]),
                        ("plan_gather_axis", ["plan", "{C}/hand/gather_axis.onnx", "--json"])):
        cp.case("onnx/" + label, "onnx_hand", args, stderr=[label.split("_", 1)[1].replace("text", "text.onnx")])
    # Initializers wrong in one field each, feeding Add(x, w) with x f32[4,2].
    def ext(name, dims, entries):
        t = b"".join(f_int(1, d) for d in dims) + f_int(2, FLOAT) + f_bytes(8, name) + f_int(14, 1)
        return t + b"".join(f_bytes(13, f_bytes(1, k) + f_bytes(2, v)) for k, v in entries)
    x42 = value_info("x", FLOAT, [4, 2])
    inits = {
        "raw_short": tensor("w", FLOAT, [4, 2], [1.0]),
        "dtype_999": f_int(1, 4) + f_int(1, 2) + f_int(2, 999) + f_bytes(8, "w") + f_bytes(9, b"\0" * 32),
        "negative_dim": f_int(1, -4) + f_int(1, 2) + f_int(2, FLOAT) + f_bytes(8, "w") + f_bytes(9, b"\0" * 32),
        "huge_dims": f_int(1, 1 << 40) + f_int(1, 1 << 40) + f_int(2, FLOAT) + f_bytes(8, "w") + f_bytes(9, b"\0" * 32),
        "ext_dev_zero": ext("w", [4, 2], [("location", "/dev/zero")]),
        "ext_traversal": ext("w", [4, 2], [("location", "../../../../../../etc/passwd")]),
        "ext_missing": ext("w", [4, 2], [("location", "no_such.bin")]),
        "ext_offset_huge": ext("w", [4, 2], [("location", "weights.bin"), ("offset", str(1 << 62)), ("length", "32")]),
        "ext_offset_text": ext("w", [4, 2], [("location", "weights.bin"), ("offset", "lots")]),
        "ext_length_wrong": ext("w", [4, 2], [("location", "weights.bin"), ("offset", "0"), ("length", "4")]),
        "ext_no_location": ext("w", [4, 2], [("offset", "0")]),
        "ext_fifo": ext("w", [4, 2], [("location", "fifo.bin")]),
        "ext_dir": ext("w", [4, 2], [("location", "dir.bin")]),
    }
    os.mkfifo(os.path.join(cp.out, "onnx", "fifo.bin"))
    os.makedirs(os.path.join(cp.out, "onnx", "dir.bin"))
    for label, t in inits.items():
        m = model([node("Add", ["x", "w"], ["y"], "add_w")], [x42], [value_info("y", FLOAT, [4, 2])], [t])
        timeout = HANG_TIMEOUT if label in ("ext_dev_zero", "ext_fifo", "ext_dir") else DEFAULT_TIMEOUT
        cp.case("onnx/initializer_" + label, "onnx_hand", ["run", cp.write("onnx/init_%s.onnx" % label, m)] + QUICK,
                stderr=["init_%s.onnx" % label, "'w'"], timeout=timeout)
    m = model([node("Gather", ["x", "idx"], ["y"], "gather_fattr", [f_bytes(1, "axis") + _key(2, 5) + struct.pack("<f", 0.5)
                                                                    + f_int(20, 1)])],
              [value_info("x", FLOAT, [4, 2])], [value_info("y", FLOAT, [1, 2])], [tensor("idx", INT64, [1], [0])])
    cp.case("onnx/attribute_wrong_type", "onnx_hand", ["run", cp.write("hand/attr_float_axis.onnx", m)] + QUICK,
            stderr=["attr_float_axis.onnx", "gather_fattr"])
    m = model([node("Relu", ["x"], ["y"], "relu")], [value_info("x", FLOAT, [1] * 200)], [value_info("y", FLOAT, [])])
    cp.case("onnx/rank_200", "onnx_hand", ["run", cp.write("hand/rank_200.onnx", m)] + QUICK, exit=(0, 2),
            stderr=["rank_200.onnx"])
    # A dynamic dim N, and two inputs, for --dim and --input.
    m = model([node("Relu", ["x"], ["y"], "relu")], [value_info("x", FLOAT, ["N", 4])], [value_info("y", FLOAT, ["N", 4])])
    dyn = cp.write("hand/dynamic.onnx", m)
    cp.case("args/dim_valid", "valid", ["run", dyn, "--dim", "N=3"] + QUICK, exit=(0,))
    cp.case("args/dim_unknown_name", "args", ["run", dyn, "--dim", "N=3", "--dim", "bogus=5"] + QUICK, stderr=["bogus"])
    for label, value in [("negative", "-1"), ("zero_", "0"), ("text", "abc"), ("huge", "99999999999999999999"),
                         ("2p62", str(1 << 62)), ("empty", "")]:
        exit = (0, 2) if label == "zero_" else (2,)
        cp.case("args/dim_" + label.rstrip("_"), "args", ["run", dyn, "--dim", "N=" + value] + QUICK, exit=exit,
                stderr=["--dim N"])
    cp.case("args/dim_no_equals", "args", ["run", dyn, "--dim", "N"] + QUICK, stderr=["--dim"])
    cp.case("args/dim_missing", "args", ["run", dyn] + QUICK, stderr=["dynamic.onnx", "'N'"])
    m = model([node("Add", ["x", "y"], ["z"], "add")], [value_info("x", FLOAT, [2]), value_info("y", FLOAT, [2])],
              [value_info("z", FLOAT, [2])])
    two = cp.write("hand/two_inputs.onnx", m)
    a = cp.write("hand/a.npy", npy("<f4", "(2,)", struct.pack("<2f", 1, 2)))
    b = cp.write("hand/b.npy", npy("<f4", "(2,)", struct.pack("<2f", 3, 4)))
    cp.case("args/input_two_repeated", "valid", ["run", two, "--input", "x=" + a, "--input", "y=" + b] + QUICK, exit=(0,))
    cp.case("args/input_two_comma", "args", ["run", two, "--input", "x=%s,y=%s" % (a, b)] + QUICK, exit=(0,))
    cp.case("args/input_unknown_name", "args", ["run", two, "--input", "nope=" + a] + QUICK, stderr=["nope"])
    cp.case("args/input_missing_file", "args", ["run", two, "--input", "x={C}/hand/missing.npy"] + QUICK,
            stderr=["missing.npy"])
    cp.case("args/input_no_equals", "args", ["run", two, "--input", a] + QUICK, stderr=["--input"])
    c3 = cp.write("hand/c3.npy", npy("<f4", "(3,)", struct.pack("<3f", 1, 2, 3)))
    # Headers that fit the data but are not numpy's format: a reader that guesses reads them.
    for label, header in (("shape_not_tuple", "{'descr': '<f4', 'fortran_order': False, 'shape': 2, }"),
                          ("shape_list", "{'descr': '<f4', 'fortran_order': False, 'shape': [2], }"),
                          ("no_shape", "{'descr': '<f4', 'fortran_order': False, }"),
                          ("shape_unclosed", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, }"),
                          ("descr_unquoted", "{'descr': <f4, 'fortran_order': False, 'shape': (2,), }")):
        f = cp.write("hand/fits_%s.npy" % label, npy_raw(header, struct.pack("<2f", 1, 2)))
        cp.case("npy/fits_" + label, "npy", ["run", two, "--input", "x=" + f] + QUICK, stderr=["fits_%s.npy" % label])
    cp.case("args/input_wrong_shape", "args", ["run", two, "--input", "x=" + c3] + QUICK, stderr=["c3.npy", "x="])
    i64 = cp.write("hand/i64.npy", npy("<i8", "(2,)", struct.pack("<2q", 1, 2)))
    cp.case("args/input_wrong_dtype", "args", ["run", two, "--input", "x=" + i64] + QUICK, stderr=["i64.npy", "x="])


def npy_cases(cp):
    """Hand-broken .npy headers, fed to the shipped mlp's input x [1,784] f32."""
    models = os.path.join(cp.src, "assets", "models")
    shutil.copy(os.path.join(models, "mlp_opset13.onnx"), os.path.join(cp.out, "onnx", "mlp.onnx"))
    good = open(os.path.join(models, "mlp.x.npy"), "rb").read()
    body = good[128:]
    d = "'descr': '<f4', 'fortran_order': False"
    broken = {
        "truncated_magic": b"\x93NUM",
        "truncated_header": good[:40],
        "truncated_data": good[:600],
        "empty": b"",
        "bad_magic": b"\x93NUMPZ" + good[6:],
        "version_9": b"\x93NUMPY\x09\x00" + good[8:],
        "header_len_huge": good[:8] + b"\xff\xff" + good[10:],
        "v2_header_len_huge": b"\x93NUMPY\x02\x00\xff\xff\xff\x7f" + good[10:],
        "no_colons": npy_raw("{'descr' '<f4', 'fortran_order' False, 'shape' (1, 784), }", body),
        "shape_not_tuple": npy_raw("{%s, 'shape': 784, }" % d, body),
        "shape_unclosed": npy_raw("{%s, 'shape': (1, 784, }" % d, body),
        "shape_unclosed_eol": npy_raw("{%s, 'shape': (1, 784" % d, body),
        "descr_then_spaces": npy_raw("{'descr':" + " " * 40),
        "descr_unterminated": npy_raw("{'descr': '<f4, 'fortran_order': False, 'shape': (1, 784), }", body),
        "no_descr": npy_raw("{'fortran_order': False, 'shape': (1, 784), }", body),
        "no_shape": npy_raw("{%s, }" % d, body),
        "negative_dim": npy("<f4", "(1, -784)", body),
        "huge_dims": npy("<f4", "(4611686018427387904, 4611686018427387904)", body),
        "overflowing_dims": npy("<f4", "(99999999999999999999999, 1)", body),
        "dims_product_overflow": npy("<f4", "(4294967296, 4294967296, 16)", body),
        "empty_shape_tuple": npy("<f4", "()", body[:4]),
        "zero_dim": npy("<f4", "(0, 784)", b""),
        "fortran_order": npy_raw("{'descr': '<f4', 'fortran_order': True, 'shape': (1, 784), }", body),
        "big_endian": npy(">f4", "(1, 784)", body),
        "extra_key": npy_raw("{%s, 'shape': (1, 784), 'extra': 1, }" % d, body),
        "descr_unknown": npy("<c16", "(1, 784)", body),
        "descr_object": npy("|O", "(1, 784)", body),
        "wrong_count": npy("<f4", "(2, 784)", body),
        "non_ascii_header": npy_raw(b"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 784), '\xff\xfe': 1, }", body),
        "nul_in_header": npy_raw(b"{'descr': '<f4\x00', 'fortran_order': False, 'shape': (1, 784), }", body),
        "deep_nesting": npy_raw("{'descr': '<f4', 'fortran_order': False, 'shape': " + "(" * 500 + ")" * 500 + ", }", body),
        "not_a_dict": npy_raw("['<f4', False, (1, 784)]", body),
    }
    for label, data in broken.items():
        name = label + ".npy"
        path = cp.write("npy/" + name, data)
        # An extra key (numpy writes exactly three): reading the data right anyway is fine.
        exit = (0, 2) if label in ("non_ascii_header", "extra_key") else (2,)
        cp.case("npy/" + label, "npy", ["run", "{C}/onnx/mlp.onnx", "--input", "x=" + path] + QUICK, exit=exit,
                stderr=[name])
    cp.case("npy/valid", "valid", ["run", "{C}/onnx/mlp.onnx", "--input", "x=" + cp.write("npy/valid.npy", good)] + QUICK,
            exit=(0,))


VALID_SCENARIO = {
    "name": "fuzz",
    "model": "mlp",
    "settings": {"iters": 1, "warmup": 0, "profile_runs": 1},
    "steps": [{"title": "no passes", "set": {"passes": "none"}, "checks": [{"check": "op_present", "op": "Relu"}]}],
}


def json_cases(cp):
    """Settings files (via `settings --json --settings` and `run --settings`) and scenario files
    (via `check` and fusebox-ui)."""
    settings = {
        # name: (content, fragments besides the file's name)
        "not_json": ("{threads: 1", []),
        "empty": ("", []),
        "truncated": ('{"threads": 2, "passes": {"dce": tr', []),
        "number_1e999": ('{"threads": 1e999}', []),
        "number_neg_1e999": ('{"seed": -1e999}', []),
        "iters_1e999": ('{"iters": 1e999}', []),
        "threads_string": ('{"threads": "two"}', ["/threads"]),
        "threads_float": ('{"threads": 1.5}', ["/threads"]),
        "threads_huge": ('{"threads": 18446744073709551616}', ["/threads"]),
        "seed_negative": ('{"seed": -1}', ["/seed"]),
        "passes_number": ('{"passes": 5}', ["/passes"]),
        "pass_unknown": ('{"passes": {"no_such_pass": true}}', ["/passes/no_such_pass"]),
        "pass_not_bool": ('{"passes": {"dce": "maybe"}}', ["/passes/dce"]),
        "pattern_unknown": ('{"patterns": "gelu,nonsense"}', ["nonsense"]),
        "planner_unknown": ('{"planner": "perfect"}', ["/planner"]),
        "unknown_key": ('{"thread": 2}', ["/thread"]),
        "top_level_array": ("[1, 2, 3]", []),
        "top_level_string": ('"threads"', []),
        "null": ("null", []),
        "deep_nesting": ('{"passes": ' + "[" * 100000 + "]" * 100000 + "}", []),
        "nul_byte": ('{"planner": "first\x00fit"}', []),
        "nul_escaped": ('{"planner": "first\\u0000fit"}', ["/planner"]),
        "nul_outside": ('{"threads": 1}\x00', []),
        "model_empty": ('{"model": ""}', ["/model"]),
        "inputs_not_object": ('{"inputs": 7}', ["/inputs"]),
        "dims_negative": ('{"dims": {"N": -4}}', ["/dims/N"]),
        "dims_string": ('{"dims": {"N": "many"}}', ["/dims/N"]),
        "duplicate_key": ('{"threads": 1, "threads": 300}', []),
        "invalid_utf8": (b'{"planner": "\xff\xfe"}', []),
        "bom": (b'\xef\xbb\xbf{"threads": 1}', []),
    }
    for label, (content, frags) in settings.items():
        name = "s_" + label + ".json"
        path = cp.write("settings/" + name, content)
        exit = (0, 2) if label in ("bom", "duplicate_key", "nul_outside") else (2,)
        cp.case("settings/" + label, "settings_json", ["settings", "--json", "--settings", path], exit=exit,
                stderr=[name] + frags)
    cp.case("settings/input_missing_file_run", "settings_json",
            ["run", "{C}/onnx/mlp.onnx", "--settings", cp.write("settings/s_input_missing.json",
                                                                '{"inputs": {"x": "no_such.npy"}}')] + QUICK,
            stderr=["no_such.npy"])
    for label in ("number_1e999", "deep_nesting", "unknown_key", "nul_byte"):
        cp.case("settings/%s_run" % label, "settings_json",
                ["run", "mlp", "--settings", "{C}/settings/s_%s.json" % label] + QUICK, stderr=["s_%s.json" % label])
    cp.case("settings/valid", "valid", ["settings", "--json", "--settings",
                                         cp.write("settings/s_valid.json", '{"threads": 1, "passes": {"dce": false}}')],
            exit=(0,))

    def sc(**changes):
        s = json.loads(json.dumps(VALID_SCENARIO))
        for k, v in changes.items():
            if v is None:
                s.pop(k, None)
            else:
                s[k] = v
        return json.dumps(s)

    step = VALID_SCENARIO["steps"][0]
    scenarios = {
        "not_json": ('{"name": "x", steps: []}', []),
        "empty": ("", []),
        "truncated": (sc()[:70], []),
        "number_1e999": (sc(settings={"iters": 1e999}).replace("Infinity", "1e999"), []),
        "check_1e999": (sc(steps=[dict(step, checks=[{"check": "node_count", "equals": 1}])]).replace(
            '"equals": 1', '"equals": 1e999'), []),
        "name_empty": (sc(name=""), ["/name"]),
        "name_missing": (sc(name=None), ["name"]),
        "name_number": (sc(name=5), ["/name"]),
        "title_empty": (sc(steps=[dict(step, title="")]), ["/steps/0/title"]),
        "title_missing": (sc(steps=[{"set": {"passes": "none"}}]), ["/steps/0"]),
        "steps_not_array": (sc(steps={"a": 1}), ["/steps"]),
        "steps_empty": (sc(steps=[]), ["/steps"]),
        "step_not_object": (sc(steps=[5]), ["/steps/0"]),
        "unknown_key": (sc(colour="red"), ["/colour"]),
        "unknown_step_key": (sc(steps=[dict(step, colour="red")]), ["/steps/0/colour"]),
        "unknown_check": (sc(steps=[dict(step, checks=[{"check": "is_fast"}])]), ["/steps/0/checks/0"]),
        "check_wrong_type": (sc(steps=[dict(step, checks=[{"check": "node_count", "equals": "nine"}])]),
                             ["/steps/0/checks/0"]),
        "check_not_object": (sc(steps=[dict(step, checks=["node_count"])]), ["/steps/0/checks/0"]),
        "set_bad_value": (sc(steps=[dict(step, set={"threads": 0})]), ["/steps/0/set"]),
        "set_unknown_key": (sc(steps=[dict(step, set={"bogus": 1})]), ["/steps/0/set"]),
        "settings_wrong_type": (sc(settings={"iters": "many"}), ["/settings/iters"]),
        "model_empty": (sc(model=""), ["/model"]),
        "model_missing_file": (sc(model="no_such_model.onnx"), ["no_such_model.onnx"]),
        "model_and_trace": (sc(trace="t.json.gz"), []),
        "deep_nesting": ('{"name": "x", "steps": ' + "[" * 100000 + "]" * 100000 + "}", []),
        "nul_in_name": (sc(name="fu\x00zz"), []),
        "nul_byte_raw": (sc().replace('"fuzz"', '"fu\x00zz"'), []),
        "invalid_utf8": (sc().encode().replace(b'"fuzz"', b'"fu\xffzz"'), []),
        "top_level_array": ("[]", []),
        "step_ref_out_of_range": (sc(steps=[dict(step, checks=[{"check": "faster_than", "step": 99, "ratio": 1.0}])]),
                                  ["/steps/0/checks/0"]),
    }
    # Files a scenario names, relative to it: each broken, the message must name it.
    trace_step = {"title": "t", "checks": []}
    scenarios.update({
        "model_not_onnx": (sc(model="../onnx/text.onnx"), ["text.onnx"]),
        "model_dangling": (sc(model="../hand/dangling.onnx"), ["dangling.onnx", "nowhere"]),
        "model_loop": (sc(model="../special/loop_a.onnx"), ["loop_a.onnx"]),
        "model_dir": (sc(model="../special/dir.onnx"), ["dir.onnx"]),
        "input_broken_npy": (sc(model="../onnx/mlp.onnx", inputs={"x": "../npy/shape_not_tuple.npy"}),
                             ["shape_not_tuple.npy"]),
        "input_unknown_name": (sc(model="../onnx/mlp.onnx", inputs={"nope": "../npy/valid.npy"}), ["nope"]),
        "trace_not_json": (json.dumps({"name": "t", "trace": "../trace/t_not_json.json", "steps": [trace_step]}),
                           ["t_not_json.json"]),
        "trace_missing": (json.dumps({"name": "t", "trace": "../trace/none.json.gz", "steps": [trace_step]}),
                          ["none.json.gz"]),
    })
    for label, (content, frags) in scenarios.items():
        name = "sc_" + label + ".json"
        path = cp.write("scenario/" + name, content)
        exit = (0, 2) if label == "nul_in_name" else (2,)
        cp.case("scenario/" + label, "scenario_json", ["check", path], exit=exit, stderr=[name] + frags)
    cp.case("scenario/valid", "valid", ["check", cp.write("scenario/sc_valid.json", sc())], exit=(0,))
    cp.case("scenario/model_fifo", "special", ["check", cp.write("scenario/sc_model_fifo.json", sc(model="../special/fifo.onnx"))],
            stderr=["fifo.onnx"], timeout=HANG_TIMEOUT)
    cp.case("scenario/valid_and_broken", "scenario_json", ["check", "{C}/scenario/sc_valid.json",
                                                            "{C}/scenario/sc_name_empty.json"], stderr=["sc_name_empty.json"])


def trace_cases(cp):
    tdir = os.path.join(cp.src, "tests", "data", "traces")
    raw = gzip.decompress(open(os.path.join(tdir, "kineto_inference_small.json.gz"), "rb").read())
    gz = gzip.compress(raw, mtime=0)
    rng = random.Random("fusebox-fuzz-trace")
    traces = {
        "t_empty.json": b"",
        "t_not_json.json": b'{"traceEvents": [',
        "t_array.json": b"[1, 2]",
        "t_events_wrong_type.json": b'{"traceEvents": 5}',
        "t_event_bad_fields.json": b'{"traceEvents": [{"ph": "X", "ts": "soon", "dur": -1, "name": 5}]}',
        "t_1e999.json": b'{"traceEvents": [{"ph": "X", "cat": "kernel", "ts": 1e999, "dur": 1e999, "name": "k"}]}',
        "t_truncated.json": raw[: len(raw) // 2],
        "t_truncated.json.gz": gz[: len(gz) // 2],
        "t_not_gzip.json.gz": b"not gzip at all",
        "t_gzip_of_garbage.json.gz": gzip.compress(b"\x00\x01\x02garbage", mtime=0),
        "t_garbage.sqlite": b"SQLite format 3\x00" + bytes(rng.randrange(256) for _ in range(3000)),
        "t_empty.sqlite": b"",
        # fusebox trace --save's form (profiler/saved_trace.h): garbage after the header, a
        # version we do not write, and a zstd frame that claims 2^40 bytes (refused by the memory
        # budget before anything is allocated).
        "t_saved_garbage.fbx": b"FBXTRACE\x02\x00\x00\x00" + bytes(rng.randrange(256) for _ in range(3000)),
        "t_saved_version.fbx": b"FBXTRACE\x09\x00\x00\x00" + b"x" * 16,
        "t_saved_bomb.fbx": b"FBXTRACE\x02\x00\x00\x00" + b"\x28\xb5\x2f\xfd\xe0" + (1 << 40).to_bytes(8, "little")
        + b"\x00" * 64,
    }
    # An own-format op naming node 16,777,215: the node table would be 3.8 GB for a 1 KB file.
    traces["t_node_index_16m.json"] = json.dumps({"traceEvents": [{
        "ph": "X", "cat": "cpu_op", "name": "Relu", "pid": 1, "tid": 1, "ts": 10, "dur": 5,
        "args": {"Node Index": (1 << 24) - 1, "Op Type": "Relu", "Node": "r", "Input Dims": [[1]],
                 "Output Dims": [[1]], "FLOPs": 1, "Bytes": 4, "Arena Offsets": [0], "Arena Live Bytes": 4}}]}).encode()
    for name, data in traces.items():
        path = cp.write("trace/" + name, data)
        # A top-level array is Chrome's JSON Array Format: its non-object events are skipped with
        # a warning naming the file, as are events with fields of the wrong type.
        exit = (0, 2) if name in ("t_array.json", "t_event_bad_fields.json") else (2,)
        cp.case("trace/" + name.split(".")[0][2:] + ("_gz" if name.endswith(".gz") else "_sqlite" if name.endswith("sqlite") else ""),
                "trace", ["trace", path], exit=exit, stderr=[name])
    sqlite = open(os.path.join(tdir, "nsys_a100_cloverleaf.sqlite"), "rb").read()
    cp.case("trace/truncated_sqlite", "trace", ["trace", cp.write("trace/t_cut.sqlite", sqlite[: len(sqlite) // 3])],
            stderr=["t_cut.sqlite"])
    good = cp.write("trace/t_valid.json.gz", gz)
    cp.case("trace/valid", "valid", ["trace", good], exit=(0,))
    cp.case("trace/chrome_out_missing_dir", "output", ["trace", good, "--chrome", "{W}/no/such/dir/t.json"],
            exit=(0, 2), stderr=["t.json"])
    cp.case("trace/sqlite_out_is_dir", "output", ["trace", good, "--sqlite", "{W}"], stderr=["{W}"])
    cp.case("trace/save_out_missing_dir", "output", ["trace", good, "--save", "{W}/no/such/dir/t.fbx"],
            exit=(0, 2), stderr=["t.fbx"])
    # compare's recordings
    for name, data in {"p_empty.json": "", "p_object.json": "{}", "p_array.json": "[]",
                       "p_wrong_types.json": '{"nodes": 5, "ops": "x", "total_ms": "long"}'}.items():
        path = cp.write("compare/" + name, data)
        cp.case("compare/" + name[2:-5], "compare_json", ["compare", path, path], stderr=[name])


def limits_cases(cp):
    """Issue 39: budgets before allocation, resource limits, and integers past int64."""
    # A uint64 index of 2^64-1 (raw_data, then uint64_data) would read as -1, the last row.
    for label, body in (("raw", f_bytes(9, struct.pack("<Q", (1 << 64) - 1))),
                        ("data", f_bytes(11, _varint((1 << 64) - 1)))):
        idx = f_int(1, 1) + f_int(2, UINT64) + f_bytes(8, "idx") + body
        m = model([node("Gather", ["x", "idx"], ["y"], "gather_u64", [attr_int("axis", 0)])],
                  [value_info("x", FLOAT, [4, 2])], [value_info("y", FLOAT, [1, 2])], [idx])
        cp.case("limits/gather_uint64_index_%s" % label, "limits",
                ["run", cp.write("limits/gather_u64_%s.onnx" % label, m)] + QUICK,
                stderr=["gather_u64_%s.onnx" % label, "idx", "18446744073709551615"])
    # A 37 GiB input is refused by the memory budget before it is made (it was made first).
    m = model([node("Relu", ["x"], ["y"], "relu")], [value_info("x", FLOAT, [100000, 100000])],
              [value_info("y", FLOAT, [100000, 100000])])
    cp.case("limits/input_100000_square", "limits", ["run", cp.write("limits/huge_input.onnx", m)] + QUICK,
            stderr=["huge_input.onnx", "memory budget"], max_rss_mb=400)
    # A gzip bomb: about 4 MB of gzip members that inflate to 1 GiB of kernel events. Under a
    # 1 GiB address-space limit it is refused for its inflate ratio (250 times) once 64 MiB of it
    # is read, before the event budget is reached.
    head = b'{"traceEvents": [\n'
    event = (b'{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1, '
             b'"args": {"correlation": 1, "device": 0, "stream": 7}},\n')
    block = gzip.compress(event * ((16 << 20) // len(event)), compresslevel=9, mtime=0)  # 16 MiB of text
    tail = b'{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1}]}\n'
    bomb = gzip.compress(head, mtime=0) + block * 64 + gzip.compress(tail, mtime=0)
    bomb_path = cp.write("limits/bomb.json.gz", bomb)
    cp.case("limits/gzip_bomb_under_ulimit_v", "limits", ["trace", bomb_path],
            stderr=["bomb.json.gz", "decompression bomb"], rlimits={"as_mb": 1024}, max_rss_mb=900)
    # Bombs past the most a trace may hold (4 GiB), with no ulimit at all: 4.1 GiB of those events
    # (17 MB of gzip; it took 41 s and 3.3 GB before the stream was measured on the side), and
    # 4.1 GiB of spaces between two events (4 MB, which zlib takes 9 s to inflate). Each is refused
    # for its ratio within a second.
    past = gzip.compress(head, mtime=0) + block * 264 + gzip.compress(tail, mtime=0)
    cp.case("limits/gzip_bomb_past_4_gib", "limits", ["trace", cp.write("limits/bomb_past_4gib.json.gz", past)],
            stderr=["bomb_past_4gib.json.gz", "decompression bomb"], max_rss_mb=900)
    spaces = gzip.compress(b" " * (16 << 20), compresslevel=9, mtime=0)
    space_run = gzip.compress(head + event, mtime=0) + spaces * 264 + gzip.compress(tail, mtime=0)
    cp.case("limits/gzip_bomb_of_spaces", "limits", ["trace", cp.write("limits/bomb_spaces.json.gz", space_run)],
            stderr=["bomb_spaces.json.gz", "decompression bomb"], max_rss_mb=900)
    # The nsys reader counts rows against the same budget: 600,000 string rows (9 MB of SQLite)
    # under a 700 MiB limit stop at the row past it.
    rows_path = os.path.join(cp.out, "limits", "rows.sqlite")
    db = sqlite3.connect(rows_path)
    db.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
    db.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER)")  # an nsys export's
    db.executemany("INSERT INTO StringIds VALUES (?, ?)", ((i, "k") for i in range(600000)))
    db.commit()
    db.close()
    cp.case("limits/nsys_rows_under_ulimit_v", "limits", ["trace", "{C}/limits/rows.sqlite"],
            stderr=["rows.sqlite", "memory budget"], rlimits={"as_mb": 700}, max_rss_mb=600)
    # An address-space limit too small to start: a sentence, not OpenBLAS's endless retry.
    cp.case("limits/run_under_ulimit_v_300mb", "limits", ["run", "mlp"] + QUICK, stderr=["ulimit -v"],
            rlimits={"as_mb": 300}, timeout=HANG_TIMEOUT * 3)
    # 256 threads' stacks (8 MiB each) past a 1.5 GB address-space limit: libgomp aborted with
    # exit 1 ("Thread creation failed"); now a sentence naming the flag, before the team starts.
    cp.case("limits/threads_256_under_ulimit_v", "limits", ["run", "mlp", "--threads", "256"] + QUICK,
            stderr=["--threads", "256 threads need", "ulimit -v"], rlimits={"as_mb": 1500})
    # Too few file descriptors to read a folder's ranks: says so, not "no trace in the folder".
    ranks = os.path.join(cp.src, "tests", "data", "traces", "a100_2rank_nccl")
    cp.case("limits/ranks_under_nofile_4", "limits", ["trace", ranks], stderr=["Too many open files"],
            rlimits={"nofile": 4})
    # No descriptor free at all: the dynamic loader could not open one library ("Error 24", exit
    # 127, before main). The static launcher (app/launcher) says it, for the CLI and the window.
    for tool in ("fusebox", "fusebox-ui"):
        cp.case("limits/%s_under_nofile_3" % tool, "limits", ["trace", ranks] if tool == "fusebox" else ["mlp"],
                tool=tool, stderr=["open-file limit is 3", "ulimit -n", "at least 4"], rlimits={"nofile": 3})
    # 30,000 nodes side by side: past dot's caps (the SVG is drawn from the simple layout, where
    # dot ran for minutes) and past the gap-searching planners' cap (a sentence naming naive).
    n = 30000
    wide = cp.write("limits/wide.onnx", model([node("Relu", ["x"], ["y%d" % i], "r%d" % i) for i in range(n)],
                                              [value_info("x", FLOAT, [1, 4])],
                                              [value_info("y%d" % i, FLOAT, [1, 4]) for i in range(n)]))
    cp.case("limits/graph_30000_wide", "limits", ["graph", wide, "--out", "{W}/g.svg"], exit=(0,))
    cp.case("limits/run_30000_wide", "limits", ["run", wide] + QUICK, stderr=["wide.onnx", "planner=naive"])
    # The naive planner's plan of 30,000 buffers live at once is checked by a sweep, not pairwise
    # (100,000 took minutes).
    cp.case("limits/plan_30000_wide_naive", "limits", ["plan", wide, "--planner", "naive", "--passes", "none"],
            exit=(0,))
    # A Resize to [1,1,2^31,2^31] floats: 2^62 elements fit int64, their 2^64 bytes do not. The plan
    # took the wrapped size (0) and the run never ended; refused naming the node.
    sizes = tensor("sizes", INT64, [4], [1, 1, 1 << 31, 1 << 31])
    m = model([node("Resize", ["x", "", "", "sizes"], ["y"], "resize_huge", [])], [value_info("x", FLOAT, [1, 1, 2, 2])],
              [value_info("y", FLOAT, [])], [sizes])
    cp.case("limits/resize_to_2p64_bytes", "limits", ["run", cp.write("limits/resize_huge.onnx", m)] + QUICK,
            stderr=["resize_huge.onnx", "resize_huge", "2^63 bytes"])
    # Past ulimit -f: "File too large" naming the file, not SIGXFSZ.
    good = os.path.join(cp.src, "tests", "data", "traces", "kineto_inference_small.json.gz")
    cp.case("limits/chrome_export_under_ulimit_f", "limits", ["trace", good, "--chrome", "{W}/out.json"],
            stderr=["out.json", "File too large"], rlimits={"fsize_kb": 4})


def ncu_cases(cp):
    """fusebox kernels on broken Nsight Compute exports: another tool's CSV, a truncated row, an
    unterminated quote, an empty file, a folder with none; and the shipped one as valid input."""
    real = os.path.join(cp.src, "tests", "data", "ncu", "rtx5090_deepseek_ocr", "kernel_0001", "ncu.details.csv")
    text = open(real, "rb").read()
    lines = text.split(b"\n")
    broken = {
        "n_foreign.csv": b"name,value\nx,1\n",
        "n_truncated.csv": b"\n".join(lines[:5]) + b"\n" + lines[5][: len(lines[5]) // 3] + b"\"\n",
        "n_quote.csv": text[: len(text) // 2] + b"\n\"0\",\"open",
        "n_empty.csv": b"",
        "n_binary.csv": bytes(range(256)) * 4,
    }
    for name, data in broken.items():
        cp.case("ncu/" + name[2:-4], "ncu", ["kernels", cp.write("ncu/" + name, data)], stderr=[name])
    os.makedirs(os.path.join(cp.out, "ncu", "none"), exist_ok=True)
    cp.case("ncu/folder_without_exports", "ncu", ["kernels", "{C}/ncu/none"], stderr=["none"])
    cp.case("ncu/valid", "valid", ["kernels", real, "--json"], exit=(0,))
    # The same exports beside a trace (`fusebox trace T --kernels NCU`): the export's error, named.
    good = os.path.join(cp.src, "tests", "data", "traces", "kineto_inference_small.json.gz")
    for name in ("n_foreign.csv", "n_truncated.csv"):
        cp.case("ncu/trace_kernels_" + name[2:-4], "ncu", ["trace", good, "--kernels", "{C}/ncu/" + name],
                stderr=[name])
    cp.case("ncu/trace_kernels_valid", "valid", ["trace", good, "--kernels", real], exit=(0,))


def special_cases(cp):
    sdir = os.path.join(cp.out, "special")
    os.makedirs(sdir, exist_ok=True)
    os.mkfifo(os.path.join(sdir, "fifo.onnx"))
    for ext in ("npy", "json"):
        os.symlink("fifo.onnx", os.path.join(sdir, "fifo." + ext))
    os.symlink("fifo.onnx", os.path.join(sdir, "fifo.json.gz"))
    os.symlink("/dev/zero", os.path.join(sdir, "zero.onnx"))
    os.symlink("/dev/zero", os.path.join(sdir, "zero.npy"))
    os.symlink("/dev/zero", os.path.join(sdir, "zero.json"))
    os.symlink("/dev/zero", os.path.join(sdir, "zero.json.gz"))
    os.symlink("/dev/null", os.path.join(sdir, "null.onnx"))
    os.symlink("/dev/null", os.path.join(sdir, "null.json"))
    os.symlink("loop_b.onnx", os.path.join(sdir, "loop_a.onnx"))
    os.symlink("loop_a.onnx", os.path.join(sdir, "loop_b.onnx"))
    os.symlink("loop_a.onnx", os.path.join(sdir, "loop.json"))
    os.symlink("loop_a.onnx", os.path.join(sdir, "loop.npy"))
    for d in ("dir.onnx", "dir.json", "dir.npy", "dir.json.gz"):
        os.makedirs(os.path.join(sdir, d), exist_ok=True)
    S = "{C}/special/"
    t = HANG_TIMEOUT
    for f in ("fifo", "zero", "null", "loop_a", "dir"):
        cp.case("special/inspect_" + f, "special", ["inspect", S + f + ".onnx"], stderr=[f + ".onnx"], timeout=t)
        cp.case("special/run_" + f, "special", ["run", S + f + ".onnx"] + QUICK, stderr=[f + ".onnx"], timeout=t)
    cp.case("special/inspect_dev_zero", "special", ["inspect", "/dev/zero"], stderr=["/dev/zero"], timeout=t)
    cp.case("special/inspect_missing", "special", ["inspect", S + "missing.onnx"], stderr=["missing.onnx"])
    cp.case("special/run_missing", "special", ["run", S + "missing.onnx"] + QUICK, stderr=["missing.onnx"])
    for f in ("fifo", "zero", "loop", "dir"):
        cp.case("special/npy_" + f, "special", ["run", "{C}/onnx/mlp.onnx", "--input", "x=" + S + f + ".npy"] + QUICK,
                stderr=[f + ".npy"], timeout=t)
        cp.case("special/settings_" + f, "special", ["settings", "--json", "--settings", S + f + ".json"],
                stderr=[f + ".json"], timeout=t)
        cp.case("special/check_" + f, "special", ["check", S + f + ".json"], stderr=[f + ".json"], timeout=t)
    cp.case("special/check_null", "special", ["check", S + "null.json"], stderr=["null.json"], timeout=t)
    cp.case("special/settings_null", "special", ["settings", "--json", "--settings", S + "null.json"],
            stderr=["null.json"], timeout=t)
    cp.case("special/check_missing", "special", ["check", S + "missing.json"], stderr=["missing.json"])
    for f in ("fifo", "zero", "dir"):
        cp.case("special/trace_" + f, "special", ["trace", S + f + ".json.gz"], stderr=[f + ".json.gz"], timeout=t)
    cp.case("special/trace_missing", "special", ["trace", S + "missing.json.gz"], stderr=["missing.json.gz"])
    cp.case("special/compare_dir", "special", ["compare", S + "dir.json", S + "dir.json"], stderr=["dir.json"], timeout=t)
    # A path that is not UTF-8: a valid model under a name with byte 0xff, with --json.
    odd = "{C}/onnx/odd_\udcff.onnx"
    shutil.copy(os.path.join(cp.src, "assets", "models", "mlp_opset13.onnx"), os.path.join(cp.out, "onnx", "odd_\udcff.onnx"))
    cp.case("special/non_utf8_path_json", "special", ["run", odd, "--json"] + QUICK, exit=(0,))
    cp.case("special/non_utf8_path_plain", "special", ["run", odd] + QUICK, exit=(0,))
    cp.case("special/non_utf8_missing_json", "special", ["run", "{C}/onnx/gone_\udcff.onnx", "--json"] + QUICK,
            stderr=["gone_"])


def args_cases(cp):
    """Bad --set values and other flags (the CLI's own checks: exit 2 naming the flag)."""
    sets = {
        "threads_zero": ("threads=0", "threads"), "threads_text": ("threads=abc", "threads"),
        "threads_huge": ("threads=99999999999999999999", "threads"), "seed_negative": ("seed=-1", "seed"),
        "iters_float": ("iters=1.5", "iters"), "no_equals": ("threads", "threads"), "empty_key": ("=3", "--set"),
        "unknown_key": ("bogus=1", "bogus"),
        "unknown_pass": ("passes.nope=off", "nope"), "pass_bad_value": ("passes.dce=maybe", "passes.dce"),
        "planner_unknown": ("planner=perfect", "planner"), "nul": ("planner=first\x01fit", "planner"),
        "dims_bad": ("dims.N=-2", "N"), "inputs_missing": ("inputs.x=/nonexistent/x.npy", "x.npy"),
        "semicolon_list_bad": ("threads=1; iters=0", "iters"), "nested_key": ("threads.x=1", "threads"),
    }
    for label, (value, frag) in sets.items():
        cp.case("args/set_" + label, "args", ["run", "mlp", "--set", value] + QUICK, stderr=[frag])
    cp.case("args/set_valid", "valid", ["run", "mlp", "--set", "passes.dce=off; threads=1"] + QUICK, exit=(0,))
    flags = {
        "model_unknown": ["run", "nosuchmodel"] + QUICK,
        "model_spec_bad_option": ["run", "transformer:seq=-1"] + QUICK,
        "model_spec_huge": ["run", "transformer:seq=99999999999,d=99999999"] + QUICK,
        "model_spec_garbage": ["run", "mlp:=,=,"] + QUICK,
        "model_spec_zero": ["run", "transformer:heads=0"] + QUICK,
        "model_spec_not_divisible": ["run", "transformer:d=10,heads=3"] + QUICK,
        "passes_unknown": ["run", "mlp", "--passes", "dce,nope"] + QUICK,
        "iters_zero": ["run", "mlp", "--iters", "0"],
        "threads_text": ["run", "mlp", "--threads", "x"] + QUICK,
        "backend_unknown": ["run", "mlp", "--backend", "tpu"] + QUICK,
        "graph_pass_unknown": ["graph", "mlp", "--pass", "nope", "--out", "{W}/g.svg"],
        "compare_a_bad": ["compare", "mlp", "--a", "threads=0", "--b", "passes=none", "--iters", "1", "--warmup", "0",
                          "--profile-runs", "1"],
        "compare_a_garbage": ["compare", "mlp", "--a", "===", "--iters", "1", "--warmup", "0", "--profile-runs", "1"],
        "profile_format_unknown": ["profile", "mlp", "--format", "chrome,pdf", "--out", "{W}/p"] + QUICK,
        "plan_width_zero": ["plan", "mlp", "--width", "0"],
        "plan_width_huge": ["plan", "mlp", "--width", "99999999999"],
    }
    for label, args in flags.items():
        exit = (0, 2) if label in ("plan_width_zero",) else (2,)
        cp.case("args/" + label, "args", args, exit=exit)
    # fusebox generate on what is not a decoder with a KV cache, and its own flags.
    relu = cp.write("args/relu.onnx", model([node("Relu", ["x"], ["y"], "relu")], [value_info("x", FLOAT, [2])],
                                           [value_info("y", FLOAT, [2])]))
    f32_prompt = cp.write("args/prompt_f32.npy", npy("<f4", "(2,)", b"\0" * 8))
    generate = {
        "builtin": (["mlp", "--prompt-len", "2"], "builtin model"),
        "no_cache": ([relu, "--prompt-len", "2"], "found no KV cache"),
        "kv_unknown_input": ([relu, "--kv", "nope=y", "--prompt-len", "2"], "has no input 'nope'"),
        "kv_no_token_input": ([relu, "--kv", "x=y", "--prompt-len", "2"], "found no token input"),
        "kv_garbage": ([relu, "--kv", "=", "--prompt-len", "2"], "PAST=PRESENT"),
        "prompt_f32": ([relu, "--prompt", f32_prompt], "int64 token ids"),
        "no_prompt": ([relu], "--prompt-len"),
        "tokens_zero": ([relu, "--prompt-len", "2", "--tokens", "0"], "--tokens"),
        "save_logits_not_npy": ([relu, "--prompt-len", "2", "--save-logits", "{W}/l.txt"], ".npy"),
        # --out is checked before the run: an existing file (the model itself) is no folder.
        "out_is_a_file": ([relu, "--prompt-len", "2", "--out", relu], "not a directory"),
    }
    for label, (args, frag) in generate.items():
        cp.case("args/generate_" + label, "args", ["generate"] + args, stderr=[frag])


def output_cases(cp):
    """Output targets that are device nodes (made in the case's own folder, so that replacing one
    cannot break the machine's /dev) or inside missing folders."""
    null = {"name": "null", "major": 1, "minor": 3}
    full = {"name": "full", "major": 1, "minor": 7}
    cp.case("output/graph_to_devnull", "output", ["graph", "mlp", "--out", "{W}/null"], stderr=["{W}/null"],
            device_out=null)
    cp.case("output/graph_to_devfull", "output", ["graph", "mlp", "--out", "{W}/full"], stderr=["{W}/full"], device_out=full)
    cp.case("output/trace_chrome_to_devnull", "output", ["trace", "{C}/trace/t_valid.json.gz", "--chrome", "{W}/null"],
            stderr=["{W}/null"], device_out=null)
    cp.case("output/trace_sqlite_to_devnull", "output", ["trace", "{C}/trace/t_valid.json.gz", "--sqlite", "{W}/null"],
            stderr=["{W}/null"], device_out=null)
    cp.case("output/graph_missing_dir", "output", ["graph", "mlp", "--out", "{W}/no/such/g.svg"], exit=(0, 2),
            stderr=["g.svg"])
    cp.case("output/graph_out_is_dir", "output", ["graph", "mlp", "--out", "{W}"], stderr=["{W}"])
    cp.case("output/profile_out_is_file", "output", ["profile", "mlp", "--profile-runs", "1", "--out",
                                                     "{C}/settings/s_valid.json"] + QUICK, stderr=["s_valid.json"])
    cp.case("output/profile_out_missing_dir", "output", ["profile", "mlp", "--profile-runs", "1", "--out",
                                                         "{W}/a/b/c"] + QUICK, exit=(0, 2), stderr=["a/b/c"])
    cp.case("output/profile_out_devnull", "output", ["profile", "mlp", "--profile-runs", "1", "--out", "{W}/null"] + QUICK,
            stderr=["{W}/null"], device_out=null)
    cp.case("output/save_outputs_is_file", "output", ["run", "mlp", "--save-outputs", "{C}/settings/s_valid.json"] + QUICK,
            stderr=["s_valid.json"])
    cp.case("output/save_outputs_missing_dir", "output", ["run", "mlp", "--save-outputs", "{W}/x/y"] + QUICK,
            exit=(0, 2), stderr=["x/y"])
    cp.case("output/save_outputs_devnull", "output", ["run", "mlp", "--save-outputs", "{W}/null"] + QUICK,
            stderr=["{W}/null"], device_out=null)


# A cache read as missing means measuring the machine again: about 10 s alone on a 2-core Zen 4
# (`fusebox machine --refresh`), twice that with a second case measuring beside it, so these get
# three times the default before they count as a hang.
MEASURE_TIMEOUT = 3 * DEFAULT_TIMEOUT


def machine_cache_cases(cp):
    prof = ["profile", "mlp", "--profile-runs", "1", "--out", "{W}/p"] + QUICK
    # A cache that is read as missing means a new measurement (seconds): a few cases only.
    for label, content in {"machines_number": '{"machines": 5}',
                           "entry_wrong_types": '{"machines": {"k": {"bandwidth_gbs": "fast", "fma_gflops": 3}}}',
                           "empty": ""}.items():
        cp.case("machine_cache/profile_" + label, "machine_cache", prof, exit=(0, 2), stderr=["machine.json"],
                machine_cache=content, timeout=MEASURE_TIMEOUT)
    cp.case("machine_cache/machine_machines_number", "machine_cache", ["machine"], exit=(0, 2), stderr=["machine.json"],
            machine_cache='{"machines": 5}', timeout=MEASURE_TIMEOUT)


def ui_cases(cp):
    """fusebox-ui without a display: it checks a scenario / trace / model file and prints the
    CLI's report (app/ui/main.cpp)."""
    u = "fusebox-ui"
    cp.case("ui/valid_model", "valid", ["mlp"] + QUICK, tool=u, exit=(0,))
    cp.case("ui/valid_scenario", "valid", ["{C}/scenario/sc_valid.json"], tool=u, exit=(0,))
    for label in ("not_json", "number_1e999", "name_empty", "deep_nesting", "unknown_step_key", "invalid_utf8"):
        cp.case("ui/scenario_" + label, "ui", ["{C}/scenario/sc_%s.json" % label], tool=u,
                stderr=["sc_%s.json" % label])
    for f in ("t_not_json.json", "t_truncated.json.gz", "t_garbage.sqlite"):
        cp.case("ui/trace_" + f.split(".")[0][2:], "ui", ["{C}/trace/" + f], tool=u, stderr=[f])
    cp.case("ui/onnx_text", "ui", ["{C}/onnx/text.onnx"] + QUICK, tool=u, stderr=["text.onnx"])
    cp.case("ui/onnx_cast_bad", "ui", ["{C}/hand/cast_bad.onnx"] + QUICK, tool=u, stderr=["cast_bad"])
    cp.case("ui/npy_shape_unclosed", "ui", ["{C}/onnx/mlp.onnx", "--input", "x={C}/npy/shape_unclosed.npy"] + QUICK,
            tool=u, stderr=["shape_unclosed.npy"])
    cp.case("ui/settings_1e999", "ui", ["mlp", "--settings", "{C}/settings/s_number_1e999.json"], tool=u,
            stderr=["s_number_1e999.json"])
    cp.case("ui/settings_unknown_key", "ui", ["mlp", "--settings", "{C}/settings/s_unknown_key.json"], tool=u,
            stderr=["s_unknown_key.json", "/thread"])
    # A value of the settings file that fails when the model runs: named by the file and pointer.
    cp.case("ui/settings_input_missing", "ui", ["mlp", "--settings", "{C}/settings/s_input_missing.json"] + QUICK,
            tool=u, stderr=["s_input_missing.json", "/inputs/x"])
    cp.case("ui/missing_file", "ui", ["{C}/special/missing.onnx"], tool=u, stderr=["missing.onnx"])
    cp.case("ui/fifo_scenario", "ui", ["{C}/special/fifo.json"], tool=u, stderr=["fifo.json"], timeout=HANG_TIMEOUT)
    cp.case("ui/fifo_model", "ui", ["{C}/special/fifo.onnx"] + QUICK, tool=u, stderr=["fifo.onnx"], timeout=HANG_TIMEOUT)
    cp.case("ui/dir_scenario", "ui", ["{C}/special/dir.json"], tool=u, stderr=["dir.json"], timeout=HANG_TIMEOUT)
    cp.case("ui/size_bad", "ui", ["mlp", "--size", "10x10"], tool=u, stderr=["--size"])
    cp.case("ui/set_bad", "ui", ["mlp", "--set", "threads=0"], tool=u, stderr=["threads"])
    cp.case("ui/dim_unknown", "ui", ["{C}/hand/dynamic.onnx", "--dim", "N=2", "--dim", "bogus=1"] + QUICK, tool=u,
            stderr=["bogus"])


def build(src, out):
    """Writes the corpus for source tree src into out (removed first); returns a one-line summary."""
    src, out = os.path.abspath(src), os.path.abspath(out)
    if os.path.lexists(out):
        # chmod back anything a previous run left read-only, then start over
        for root, dirs, _ in os.walk(out):
            for d in dirs:
                p = os.path.join(root, d)
                if not os.path.islink(p):
                    os.chmod(p, stat.S_IRWXU)
        shutil.rmtree(out)
    os.makedirs(os.path.join(out, "onnx"))
    cp = Corpus(src, out)
    onnx_mutations(cp)
    npy_cases(cp)
    onnx_hand(cp)
    json_cases(cp)
    trace_cases(cp)
    limits_cases(cp)
    ncu_cases(cp)
    special_cases(cp)
    args_cases(cp)
    output_cases(cp)
    machine_cache_cases(cp)
    ui_cases(cp)
    stale = sorted(set(KNOWN_FAILING) - cp.names)
    if stale:
        sys.exit("make_corpus.py: KNOWN_FAILING names cases that do not exist: " + ", ".join(stale))
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump({"cases": cp.cases}, f, indent=1)
    kinds = {}
    for c in cp.cases:
        kinds[c["kind"]] = kinds.get(c["kind"], 0) + 1
    return "make_corpus.py: %d cases in %s (%s)" % (len(cp.cases), out,
                                                    ", ".join("%s %d" % kv for kv in sorted(kinds.items())))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: make_corpus.py SOURCE_DIR OUT_DIR")
    print(build(sys.argv[1], sys.argv[2]))


if __name__ == "__main__":
    main()
