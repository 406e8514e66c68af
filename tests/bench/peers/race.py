#!/usr/bin/python3
"""Races fusebox against eager PyTorch and ONNX Runtime on the same ONNX files.

    /usr/bin/python3 tests/bench/peers/race.py [--threads 1,2] [--rounds 7] [--calls 50]
        [--out bench.md] [MODEL.onnx ...]

Without model files it exports the workbench's models from PyTorch (assets/models/export_models.py
defines them) at opset 17 into build/bench/: MLP at batch 1 and 64, the transformer block at seq 64
and a 4-layer stack at seq 128. For those, eager PyTorch runs the very module that was exported.
For a user's .onnx file only ONNX Runtime and fusebox run (there is no module to run eagerly).

Method: each runtime is a long-lived worker (PyTorch in this process, ONNX Runtime in node,
fusebox in build/tests/bench/fusebox_bench_worker) holding its model loaded. A round asks each
worker in turn for `calls` timed calls; ratios are computed inside each round from the round's
medians, and the table reports the median over rounds. Outputs are checked to agree first.
ONNX Runtime's binding floor (a one-Add model through the same node binding) is reported too:
ORT minus that floor is the fair figure for its engine alone.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

# Eager PyTorch runs in this process. Its OpenMP threads must sleep, not spin, while the other
# workers have their turn (the OMP_WAIT_POLICY=PASSIVE); set before torch is imported.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PEERS = os.path.join(ROOT, "tests", "bench", "peers")
WORKER = os.path.join(ROOT, "build", "tests", "bench", "fusebox_bench_worker")


def die(msg):
    print(f"race.py: {msg}", file=sys.stderr)
    sys.exit(2)


def need_torch():
    try:
        import torch  # noqa: F401
        import onnx  # noqa: F401
    except ImportError as e:
        die(f"{e}: install the peers with `bash tools/setup.sh --peers` (python3-torch, python3-onnx)")


def need_ort():
    if not os.path.isdir(os.path.join(PEERS, "node_modules", "onnxruntime-node")):
        die("ONNX Runtime is missing: cd tests/bench/peers && ONNXRUNTIME_NODE_INSTALL=skip npm install")


class Worker:
    """A subprocess speaking the line protocol: `run N`, `save PATH`, `quit`."""

    def __init__(self, name, argv, env):
        self.name = name
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        ready = self._read()
        if "error" in ready:
            raise RuntimeError(f"{name}: {ready['error']}")

    def _read(self):
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.name}: worker exited ({self.proc.wait()})")
        return json.loads(line)

    def ask(self, cmd):
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()
        reply = self._read()
        if "error" in reply:
            raise RuntimeError(f"{self.name}: {reply['error']}")
        return reply

    def run(self, calls):
        return self.ask(f"run {calls}")["samples_us"]

    def save(self, path):
        self.ask(f"save {path}")

    def close(self):
        try:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        self.proc.wait(timeout=30)


class TorchWorker:
    """Eager PyTorch in this process: the exported module under inference_mode."""

    def __init__(self, module, inputs):
        import torch
        self.torch = torch
        self.module = module.eval()
        self.inputs = [torch.from_numpy(x) for x in inputs]
        with torch.inference_mode():
            self.out = self.module(*self.inputs)

    def run(self, calls):
        samples = []
        with self.torch.inference_mode():
            for _ in range(calls):
                t0 = time.perf_counter_ns()
                self.out = self.module(*self.inputs)
                samples.append((time.perf_counter_ns() - t0) / 1000.0)
        return samples

    def save(self, path):
        np.save(path, self.out.detach().numpy())

    def close(self):
        pass


def export_models(outdir):
    """The workbench's models, exported from PyTorch at opset 17. Returns [(label, path, module, inputs)]."""
    import torch
    sys.path.insert(0, os.path.join(ROOT, "assets", "models"))
    import export_models as em  # the module definitions the committed assets come from

    def stack4():
        torch.manual_seed(4)
        return torch.nn.Sequential(*[em.block(256, 4, 1024) for _ in range(4)])

    specs = [("mlp b1", "mlp_b1", em.mlp, (1, 784)), ("mlp b64", "mlp_b64", em.mlp, (64, 784)),
             ("transformer s64", "transformer_s64", em.transformer, (1, 64, 256)),
             ("stack4 s128", "stack4_s128", stack4, (1, 128, 256))]
    os.makedirs(outdir, exist_ok=True)
    made = []
    for label, stem, ctor, shape in specs:
        module = ctor().eval()
        rng = np.random.default_rng(5)
        x = rng.uniform(-1, 1, size=shape).astype(np.float32)
        path = os.path.join(outdir, stem + ".onnx")
        if not os.path.exists(path):
            # Autograd on, so nn.TransformerEncoderLayer's fused fast path is off and the exporter
            # sees the primitive ops (as in assets/models/export_models.py).
            torch.onnx.export(module, (torch.from_numpy(x),), path, input_names=["x"], output_names=["y"],
                              opset_version=17, do_constant_folding=True)
        np.save(os.path.join(outdir, stem + ".x.npy"), x)
        made.append((label, path, module, [x]))
    return made


def one_add_model(outdir):
    import onnx
    from onnx import TensorProto, helper
    path = os.path.join(outdir, "one_add.onnx")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])
    g = helper.make_graph([helper.make_node("Add", ["x", "x"], ["y"])], "one_add", [x], [y])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    np.save(os.path.join(outdir, "one_add.x.npy"), np.ones((1, 16), np.float32))
    return path


def input_args(model_path, inputs_npy):
    return [f"{name}={path}" for name, path in inputs_npy]


def env_for(threads):
    env = dict(os.environ)
    env.update(OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    env.pop("OMP_WAIT_POLICY", None)  # the workers keep their runtimes' defaults
    return env


def median(xs):
    return statistics.median(xs)


def race(label, path, module, inputs, threads, rounds, calls, floor_us, outdir):
    stem = os.path.splitext(os.path.basename(path))[0]
    npys = []
    for i, x in enumerate(inputs):
        p = os.path.join(outdir, f"{stem}.in{i}.npy")
        np.save(p, x)
        npys.append(("x" if i == 0 else f"x{i}", p))
    env = env_for(threads)
    workers = {}
    workers["fusebox"] = Worker("fusebox", [WORKER, path, str(threads)] + input_args(path, npys), env)
    workers["ort"] = Worker("ort", ["node", os.path.join(PEERS, "ort_worker.js"), path, str(threads)]
                            + input_args(path, npys), env)
    if module is not None:
        import torch
        torch.set_num_threads(threads)
        workers["torch"] = TorchWorker(module, inputs)
    # Outputs agree before anything is timed.
    outs = {}
    for name, w in workers.items():
        p = os.path.join(outdir, f"{stem}.out.{name}.t{threads}.npy")
        w.save(p)
        outs[name] = np.load(p)
    ref = outs.get("torch", outs["ort"])
    agree = {n: float(np.max(np.abs(o - ref))) for n, o in outs.items()}
    for n, err in agree.items():
        if not np.allclose(outs[n], ref, rtol=1e-3, atol=1e-4):
            raise RuntimeError(f"{label}: {n} disagrees with the reference (max abs diff {err:.3g})")
    for w in workers.values():
        w.run(max(3, calls // 5))  # warm-up
    per_round = {n: [] for n in workers}
    for _ in range(rounds):
        for name, w in workers.items():
            per_round[name].append(median(w.run(calls)))
    mins = {}
    for name, w in workers.items():
        mins[name] = min(per_round[name])
        w.close()
    row = {"model": label, "threads": threads, "max_abs_diff": max(agree.values())}
    for name in workers:
        row[name + "_median_us"] = median(per_round[name])
        row[name + "_min_us"] = mins[name]
    r = lambda a, b: median([x / y for x, y in zip(per_round[a], per_round[b])])
    row["fusebox/ort"] = r("fusebox", "ort")
    row["fusebox/(ort-floor)"] = median([f / max(1e-9, o - floor_us) for f, o in zip(per_round["fusebox"], per_round["ort"])])
    if "torch" in workers:
        row["fusebox/torch"] = r("fusebox", "torch")
    return row


def ort_floor(outdir, threads, rounds, calls):
    path = one_add_model(outdir)
    w = Worker("ort-floor", ["node", os.path.join(PEERS, "ort_worker.js"), path, str(threads),
                             "x=" + os.path.join(outdir, "one_add.x.npy")], env_for(threads))
    w.run(calls)
    floor = median([median(w.run(calls)) for _ in range(rounds)])
    w.close()
    return floor


def versions():
    import torch
    v = {"torch": torch.__version__, "numpy": np.__version__}
    try:
        with open(os.path.join(PEERS, "node_modules", "onnxruntime-node", "package.json")) as f:
            v["onnxruntime-node"] = json.load(f)["version"]
    except OSError:
        pass
    v["node"] = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*", help="ONNX files (default: export the workbench's models)")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=50)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench", "race.md"))
    args = ap.parse_args()
    need_ort()
    if not os.path.exists(WORKER):
        die(f"{WORKER} is missing: build first (cmake --build build)")
    outdir = os.path.join(ROOT, "build", "bench")
    os.makedirs(outdir, exist_ok=True)
    if args.models:
        for m in args.models:
            if not os.path.exists(m):
                die(f"{m}: no such file")
        cases = [(os.path.basename(m), os.path.abspath(m), None, None) for m in args.models]
        try:
            import torch  # noqa: F401  (only for the floor model's onnx helper)
        except ImportError:
            pass
    else:
        need_torch()
        cases = export_models(outdir)
    threads = [int(t) for t in args.threads.split(",")]
    rows = []
    for t in threads:
        floor = ort_floor(outdir, t, args.rounds, max(100, args.calls))
        for label, path, module, inputs in cases:
            if inputs is None:
                import onnx
                m = onnx.load(path, load_external_data=False)
                inits = {i.name for i in m.graph.initializer}
                rng = np.random.default_rng(5)
                inputs = []
                for vi in m.graph.input:
                    if vi.name in inits:
                        continue
                    dims = [d.dim_value or 1 for d in vi.type.tensor_type.shape.dim]
                    inputs.append(rng.uniform(-1, 1, size=dims).astype(np.float32))
            row = race(label, path, module, inputs, t, args.rounds, args.calls, floor, outdir)
            row["ort_floor_us"] = floor
            rows.append(row)
            print(json.dumps(row), flush=True)
    write_table(rows, args, versions())


def write_table(rows, args, vers):
    cpu = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    lines = [f"Measured {time.strftime('%Y-%m-%d')} on {cpu}, {os.cpu_count()} cores; "
             + ", ".join(f"{k} {v}" for k, v in vers.items()) + ".",
             f"{args.rounds} interleaved rounds x {args.calls} calls; latency = median over rounds of each round's median "
             "(min = best round); ratios computed within each round, median over rounds.", "",
             "| model | threads | torch median (min) us | ORT median (min) us | ORT floor us | fusebox median (min) us "
             "| fusebox/torch | fusebox/ORT | fusebox/(ORT-floor) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        torch_cell = f"{r['torch_median_us']:.1f} ({r['torch_min_us']:.1f})" if "torch_median_us" in r else "-"
        ratio_t = f"{r['fusebox/torch']:.2f}" if "fusebox/torch" in r else "-"
        lines.append(f"| {r['model']} | {r['threads']} | {torch_cell} | {r['ort_median_us']:.1f} ({r['ort_min_us']:.1f}) "
                     f"| {r['ort_floor_us']:.1f} | {r['fusebox_median_us']:.1f} ({r['fusebox_min_us']:.1f}) | {ratio_t} "
                     f"| {r['fusebox/ort']:.2f} | {r['fusebox/(ort-floor)']:.2f} |")
    text = "\n".join(lines) + "\n"
    tmp = args.out + ".tmp"
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, args.out)
    print(text)


if __name__ == "__main__":
    main()
