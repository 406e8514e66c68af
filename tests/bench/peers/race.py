#!/usr/bin/python3
"""Races fusebox against eager PyTorch and ONNX Runtime on the same ONNX files.

    /usr/bin/python3 tests/bench/peers/race.py [--threads 1,2] [--rounds 7] [--calls 50]
        [--models mlp,transformer,stack4] [--build build] [--planner best] [--no-dispatch]
        [--dim NAME=VALUE ...] [--out BUILD/bench/race.md] [MODEL.onnx ...]

Without model files it exports the workbench's models from PyTorch (assets/models/export_models.py
defines them) at opset 17 into BUILD/bench/: MLP at batch 1 and 64, the transformer block at seq 64
and a 4-layer stack at seq 128 (--models keeps those whose file name starts with one of the given
prefixes, e.g. `--models mlp`). For those, eager PyTorch runs the very module that was exported;
without PyTorch installed, the files an earlier run exported are raced without it. BUILD is
--build (default: build/ in the repository; a relative path is relative to the current directory).
For a user's .onnx file only ONNX Runtime and fusebox run (there is no module to run eagerly); its
dynamic dims are 1 unless given with --dim (dim_param name, or INPUT:INDEX), its inputs random.

Method: each runtime is a long-lived worker holding its model loaded: eager PyTorch in this process
(inference_mode, torch.set_num_threads, OMP_WAIT_POLICY=PASSIVE), ONNX Runtime in node
(ort_worker.js: onnxruntime-node, CPU, graph optimization level all, sequential, intra-op threads
as ours), fusebox in BUILD/tests/bench/fusebox_bench_worker (compiled executor, all passes, and
with `--planner best` every registered planner strategy tried, the smallest arena kept). A round
asks each worker in turn for `calls` timed calls; ratios are computed inside each round from the
round's medians, and the table reports the median over rounds (min: the best round). Outputs are
checked to agree first (rtol 1e-3, atol 1e-4). ONNX Runtime's binding floor (a one-Add model
through the same node binding) is reported too: ORT minus that floor is the fair figure for its
engine alone.

Roofline: the fusebox worker reports the FLOPs of one call (ir::node_cost summed over the graph it
runs). The GEMM peak is raced like a peer: a 512 x 512 MatMul against a weight (what `fusebox
machine` measures) run by another fusebox worker in the same rounds as each model, so that GEMM
peak / fusebox GFLOP/s is a ratio inside each round (a peak measured at another minute would carry
this machine's drift, ~10% at 2 threads, into the ratio). Each row gets fusebox's GFLOP/s, the
peak's and the ratio.

Dispatch: a chain of 1 and a chain of 1000 tiny element-wise ops (alternating Neg and Relu on a
[1,16] f32 tensor, as tests/bench/dispatch_bench.cpp) run in interleaved rounds on fusebox
(compiled executor, --passes none) and on ONNX Runtime with its graph optimizations disabled (the
fair pairing) and at level all (for reference; the file it optimized is saved and its nodes
counted). ns per op = (t_1000 - t_1) / 999, median over rounds.

The Markdown (default BUILD/bench/race.md, written atomically) has the race table, the dispatch
table and the issue's targets, each "met", "missed" or "not measured (why)". Peers are optional:
a missing one is named with how to install it, and its columns and targets say so. The pure logic
(ratios, verdicts, tables) lives in race_report.py, tested by race_report_test.py.
Exit status: 0, or 1 when some model failed in some runtime (the report says which), 2 for a
usage error or a missing requirement.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

# Eager PyTorch runs in this process. Its OpenMP threads must sleep, not spin, while the other
# workers have their turn (the OMP_WAIT_POLICY=PASSIVE); set before torch is imported.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import race_report as rr  # noqa: E402  (standard library only)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PEERS = os.path.join(ROOT, "tests", "bench", "peers")
INSTALL_PEERS = "bash tools/setup.sh --peers"
INSTALL_ORT = "cd tests/bench/peers && ONNXRUNTIME_NODE_INSTALL=skip npm install"
CHAIN_N = 1000

np = None  # numpy, imported by main() so that --help and race_report need nothing heavy


def die(msg):
    print(f"race.py: {msg}", file=sys.stderr)
    sys.exit(2)


def note(msg):
    print(f"race.py: {msg}", file=sys.stderr, flush=True)


class Paths:
    def __init__(self, build):
        self.build = os.path.abspath(build)
        self.shown = os.path.relpath(self.build) if self.build.startswith(os.getcwd() + os.sep) else self.build
        self.worker = os.path.join(self.build, "tests", "bench", "fusebox_bench_worker")
        self.outdir = os.path.join(self.build, "bench")


# ---------------------------------------------------------------------------------------------
# Peers: what is installed, and how to install what is not.


def load_numpy():
    global np
    try:
        import numpy
    except ImportError:
        die(f"numpy is missing: install it with `{INSTALL_PEERS}` (python3-numpy)")
    np = numpy


def need_onnx():
    try:
        import onnx  # noqa: F401
    except ImportError:
        die(f"the onnx Python package is missing (it builds the floor and dispatch models and reads "
            f"the inputs of .onnx files): install it with `{INSTALL_PEERS}` (python3-onnx)")


def torch_missing():
    """None when eager PyTorch can run, else why not (with how to install it)."""
    try:
        import torch  # noqa: F401
    except ImportError as e:
        return f"PyTorch not installed ({e}): `{INSTALL_PEERS}` installs python3-torch"
    return None


def ort_missing():
    """None when ONNX Runtime (onnxruntime-node) can run, else why not (with how to install it)."""
    if not shutil.which("node"):
        return f"ONNX Runtime not installed: node is not on PATH (apt-get install nodejs npm, then `{INSTALL_ORT}`)"
    if not os.path.isdir(os.path.join(PEERS, "node_modules", "onnxruntime-node")):
        return f"ONNX Runtime not installed: `{INSTALL_ORT}`"
    return None


# The GEMM peak, raced in the same rounds as each model: what `fusebox machine` times (a 512 x 512
# MatMul against a weight, which fusebox packs for its AVX-512 GEMM), as an ONNX file.
GEMM_N = 512
GEMM_FLOPS = 2.0 * GEMM_N ** 3
PEAK_NOTE = (f"GEMM peak: a {GEMM_N} x {GEMM_N} MatMul against a weight (what `fusebox machine` times) run by "
             "fusebox in the same rounds as each model, median latency; GEMM peak / fusebox is taken inside "
             "each round. fusebox GFLOP/s = FLOPs of one call (ir::node_cost over the graph it runs) / median "
             "latency.")


def gemm_model(outdir):
    """(path, [(input, .npy)]) of C = A B, A [512,512] an input, B [512,512] a weight."""
    from onnx import TensorProto, helper, numpy_helper
    path = os.path.join(outdir, f"gemm{GEMM_N}.onnx")
    rng = np.random.default_rng(3)
    b = rng.uniform(-1, 1, size=(GEMM_N, GEMM_N)).astype(np.float32)
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [GEMM_N, GEMM_N])
    c = helper.make_tensor_value_info("c", TensorProto.FLOAT, [GEMM_N, GEMM_N])
    g = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["c"])], "gemm", [a], [c],
                          initializer=[numpy_helper.from_array(b, "b")])
    save_model(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    a_path = os.path.join(outdir, f"gemm{GEMM_N}.a.npy")
    np.save(a_path, rng.uniform(-1, 1, size=(GEMM_N, GEMM_N)).astype(np.float32))
    return path, [("a", a_path)]


# ---------------------------------------------------------------------------------------------
# Workers


class Worker:
    """A subprocess speaking the line protocol: `run N`, `save PATH`, `quit`; `ready` is its first line."""

    def __init__(self, name, argv, env):
        self.name = name
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.ready = self._read()
        if "error" in self.ready:
            self.close()
            raise RuntimeError(f"{name}: {self.ready['error']}")

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
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError):
                pass
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


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


def env_for(threads):
    env = dict(os.environ)
    env.update(OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    env.pop("OMP_WAIT_POLICY", None)  # the workers keep their runtimes' defaults
    return env


def fusebox_argv(paths, model, threads, feeds, extra=()):
    return [paths.worker, model, str(threads)] + [f"{n}={p}" for n, p in feeds] + list(extra)


def ort_argv(model, threads, feeds, extra=()):
    return ["node", os.path.join(PEERS, "ort_worker.js"), model, str(threads)] + [f"{n}={p}" for n, p in feeds] + list(extra)


# ---------------------------------------------------------------------------------------------
# Models


class Case:
    def __init__(self, label, kind, path, inputs, module=None, dims=None):
        self.label, self.kind, self.path = label, kind, path
        self.inputs = inputs          # [(input name, numpy array)]
        self.module = module          # the torch module that was exported, or None
        self.dims = dims or {}        # dynamic dim values given to fusebox (--dim)


BUILTIN = [("mlp b1", "mlp_b1", "mlp", (1, 784)), ("mlp b64", "mlp_b64", "mlp", (64, 784)),
           ("transformer s64", "transformer_s64", "transformer", (1, 64, 256)),
           ("stack4 s128", "stack4_s128", "stack4", (1, 128, 256))]


def select_builtin(only):
    if not only:
        return BUILTIN
    prefixes = [p.strip() for p in only.split(",") if p.strip()]
    chosen = [b for b in BUILTIN if any(b[1].startswith(p) for p in prefixes)]
    if not chosen:
        die(f"--models {only}: matches none of {', '.join(b[1] for b in BUILTIN)}")
    return chosen


def export_models(outdir, specs):
    """The workbench's models, exported from PyTorch at opset 17 (once; the files are reused)."""
    import torch
    sys.path.insert(0, os.path.join(ROOT, "assets", "models"))
    import export_models as em  # the module definitions the committed assets come from

    def stack4():
        torch.manual_seed(4)
        return torch.nn.Sequential(*[em.block(256, 4, 1024) for _ in range(4)])

    ctors = {"mlp": em.mlp, "transformer": em.transformer, "stack4": stack4}
    os.makedirs(outdir, exist_ok=True)
    made = []
    for label, stem, ctor, shape in specs:
        module = ctors[ctor]().eval()
        x = np.random.default_rng(5).uniform(-1, 1, size=shape).astype(np.float32)
        path = os.path.join(outdir, stem + ".onnx")
        if not os.path.exists(path):
            # Autograd on, so nn.TransformerEncoderLayer's fused fast path is off and the exporter
            # sees the primitive ops (as in assets/models/export_models.py).
            tmp = path + ".tmp.onnx"
            torch.onnx.export(module, (torch.from_numpy(x),), tmp, input_names=["x"], output_names=["y"],
                              opset_version=17, do_constant_folding=True)
            os.replace(tmp, path)
        made.append(Case(label, stem, path, [("x", x)], module))
    return made


def exported_earlier(outdir, specs, why):
    """Without PyTorch: the files a previous run exported, if they are all there."""
    paths = [os.path.join(outdir, stem + ".onnx") for _, stem, _, _ in specs]
    if not all(os.path.exists(p) for p in paths):
        die(f"{why}; it exports the models. Install it, or pass .onnx files to race ONNX Runtime and fusebox")
    note(f"{why}: eager PyTorch does not run; racing the files exported earlier in {outdir}")
    cases = []
    for (label, stem, _, shape), path in zip(specs, paths):
        x = np.random.default_rng(5).uniform(-1, 1, size=shape).astype(np.float32)
        cases.append(Case(label, stem, path, [("x", x)]))
    return cases


def user_case(path, given_dims):
    """A user's .onnx file: random inputs (f32 uniform [-1, 1), i64 in [0, 16)), dynamic dims 1 unless given."""
    import onnx
    from onnx import TensorProto
    m = onnx.load(path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    rng = np.random.default_rng(5)
    inputs, dims = [], {}
    for vi in m.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        shape = []
        for i, d in enumerate(tt.shape.dim):
            key = d.dim_param if d.dim_param else f"{vi.name}:{i}"
            if key in given_dims:
                dims[key] = given_dims[key]
            elif not d.HasField("dim_value"):
                dims[key] = 1
            shape.append(dims.get(key, d.dim_value))
        if tt.elem_type == TensorProto.FLOAT:
            x = rng.uniform(-1, 1, size=shape).astype(np.float32)
        elif tt.elem_type == TensorProto.INT64:
            x = rng.integers(0, 16, size=shape, dtype=np.int64)
        else:
            raise RuntimeError(f"{path}: input '{vi.name}' has ONNX element type {tt.elem_type}; the race feeds "
                               "float32 and int64 inputs only")
        inputs.append((vi.name, x))
    defaulted = [k for k in dims if k not in given_dims]
    if defaulted:
        note(f"{os.path.basename(path)}: dynamic dims set to 1 (give others with --dim NAME=VALUE): {', '.join(defaulted)}")
    return Case(os.path.basename(path), None, os.path.abspath(path), inputs, dims=dims)


def save_model(model, path):
    import onnx
    tmp = path + ".tmp.onnx"
    onnx.save(model, tmp)
    os.replace(tmp, path)


def one_add_model(outdir):
    from onnx import TensorProto, helper
    path = os.path.join(outdir, "one_add.onnx")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])
    g = helper.make_graph([helper.make_node("Add", ["x", "x"], ["y"])], "one_add", [x], [y])
    save_model(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    np.save(os.path.join(outdir, "one_add.x.npy"), np.ones((1, 16), np.float32))
    return path


def chain_model(outdir, n):
    """n tiny element-wise ops on x[1,16]: Neg, Relu, Neg, ... (as tests/bench/dispatch_bench.cpp)."""
    from onnx import TensorProto, helper
    path = os.path.join(outdir, f"chain{n}.onnx")
    nodes, t = [], "x"
    for i in range(n):
        out = "y" if i == n - 1 else f"t{i}"
        nodes.append(helper.make_node("Relu" if i % 2 else "Neg", [t], [out], name=f"op{i}"))
        t = out
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])
    g = helper.make_graph(nodes, f"chain{n}", [x], [y])
    save_model(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


# ---------------------------------------------------------------------------------------------
# Races


def median(xs):
    return rr.median(xs)


def check_agree(label, outs, ref_name):
    """Max abs difference per runtime against the reference; raises when one disagrees."""
    ref = outs[ref_name]
    diffs = {}
    for n, o in outs.items():
        if o.shape != ref.shape:
            raise RuntimeError(f"{label}: {n} returns shape {list(o.shape)}, {ref_name} {list(ref.shape)}")
        diffs[n] = float(np.max(np.abs(o.astype(np.float64) - ref))) if o.size else 0.0
        if not np.allclose(o, ref, rtol=1e-3, atol=1e-4):
            raise RuntimeError(f"{label}: {n} disagrees with {ref_name} (max abs diff {diffs[n]:.3g})")
    return max(diffs.values()) if diffs else 0.0


def race(paths, case, threads, rounds, calls, floor_us, ort_ok, gemm, planner):
    stem = os.path.splitext(os.path.basename(case.path))[0]
    feeds = []
    for i, (name, x) in enumerate(case.inputs):
        p = os.path.join(paths.outdir, f"{stem}.in{i}.npy")
        np.save(p, x)
        feeds.append((name, p))
    env = env_for(threads)
    dim_args = [a for k, v in case.dims.items() for a in ("--dim", f"{k}={v}")]
    workers = {}
    try:
        workers["fusebox"] = Worker("fusebox", fusebox_argv(paths, case.path, threads, feeds,
                                                            ["--planner", planner] + dim_args), env)
        if ort_ok:
            workers["ort"] = Worker("ort", ort_argv(case.path, threads, feeds), env)
        if case.module is not None:
            import torch
            torch.set_num_threads(threads)
            workers["torch"] = TorchWorker(case.module, [x for _, x in case.inputs])
        # Outputs agree before anything is timed (the GEMM peak joins the rounds after that).
        outs = {}
        for name, w in workers.items():
            p = os.path.join(paths.outdir, f"{stem}.out.{name}.t{threads}.npy")
            w.save(p)
            outs[name] = np.load(p)
        ref = "torch" if "torch" in outs else "ort" if "ort" in outs else "fusebox"
        max_diff = check_agree(case.label, outs, ref)
        gemm_path, gemm_feeds = gemm
        workers["gemm"] = Worker("gemm", fusebox_argv(paths, gemm_path, threads, gemm_feeds,
                                                     ["--planner", planner]), env)
        for w in workers.values():
            w.run(max(3, calls // 5))  # warm-up
        per_round = {n: [] for n in workers}
        for _ in range(rounds):
            for name, w in workers.items():
                per_round[name].append(median(w.run(calls)))
    finally:
        for w in workers.values():
            w.close()
    ready = workers["fusebox"].ready
    row = rr.summarize_row(case.label, case.kind, threads, per_round, floor_us if ort_ok else None,
                           ready.get("flops"), GEMM_FLOPS, ready.get("planner"))
    row["max_abs_diff"] = max_diff
    row["reference"] = ref
    row["planner_arenas"] = ready.get("planner_arenas")
    return row


def ort_floor(paths, threads, rounds, calls):
    path = one_add_model(paths.outdir)
    w = Worker("ort-floor", ort_argv(path, threads, [("x", os.path.join(paths.outdir, "one_add.x.npy"))]),
               env_for(threads))
    try:
        w.run(calls)
        return median([median(w.run(calls)) for _ in range(rounds)])
    finally:
        w.close()


def dispatch_race(paths, threads, rounds, calls, ort_ok):
    """(dispatch rows, nodes): fusebox (passes none) and ORT (disabled; all) on chains of 1 and CHAIN_N.

    nodes: {"fusebox": nodes fusebox ran the long chain as, "ort_all": nodes ORT keeps of it at
    level all} (None: not run).
    """
    import onnx
    chains = {1: chain_model(paths.outdir, 1), CHAIN_N: chain_model(paths.outdir, CHAIN_N)}
    xpath = os.path.join(paths.outdir, "chain.x.npy")
    np.save(xpath, np.random.default_rng(5).uniform(-1, 1, size=(1, 16)).astype(np.float32))
    feeds = [("x", xpath)]
    env = env_for(threads)
    sides = [("fusebox", "fusebox (compiled, passes none)",
              lambda p, n: fusebox_argv(paths, p, threads, feeds, ["--passes", "none", "--executor", "compiled"]))]
    if ort_ok:
        optimized = os.path.join(paths.outdir, f"chain{CHAIN_N}.ort_all.t{threads}.onnx")
        sides.append(("ort", "ONNX Runtime (optimizations disabled)",
                      lambda p, n: ort_argv(p, threads, feeds, ["--opt", "disabled"])))
        sides.append(("ort_all", "ONNX Runtime (optimization level all)",
                      lambda p, n: ort_argv(p, threads, feeds, ["--opt", "all"]
                                            + (["--save-optimized", optimized] if n == CHAIN_N else []))))
    workers = {}
    nodes = {"fusebox": None, "ort_all": None}
    try:
        for key, _, argv in sides:
            for n, p in chains.items():
                workers[key, n] = Worker(f"{key} chain{n}", argv(p, n), env)
        nodes["fusebox"] = workers["fusebox", CHAIN_N].ready.get("nodes")
        if ort_ok:
            nodes["ort_all"] = len(onnx.load(optimized).graph.node)
        for n in chains:  # outputs agree
            outs = {}
            for key, _, _ in sides:
                p = os.path.join(paths.outdir, f"chain{n}.out.{key}.t{threads}.npy")
                workers[key, n].save(p)
                outs[key] = np.load(p)
            check_agree(f"chain of {n}", outs, "ort" if ort_ok else "fusebox")
        calls_1 = max(200, calls * 10)  # the short chain takes microseconds: more calls per round
        for w in workers.values():
            w.run(20)  # warm-up
        t = {k: [] for k in workers}
        for _ in range(rounds):
            for key, _, _ in sides:
                t[key, 1].append(median(workers[key, 1].run(calls_1)))
                t[key, CHAIN_N].append(median(workers[key, CHAIN_N].run(calls)))
    finally:
        for w in workers.values():
            w.close()
    rows = [rr.dispatch_row(key, label, threads, t[key, 1], t[key, CHAIN_N], CHAIN_N) for key, label, _ in sides]
    return rows, nodes


# ---------------------------------------------------------------------------------------------
# Report


def versions(torch_ok):
    v = {}
    if torch_ok:
        import torch
        v["torch"] = torch.__version__
    v["numpy"] = np.__version__
    try:
        with open(os.path.join(PEERS, "node_modules", "onnxruntime-node", "package.json")) as f:
            v["onnxruntime-node"] = json.load(f)["version"]
    except OSError:
        pass
    if shutil.which("node"):
        v["node"] = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    try:
        rev = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True, text=True)
        if rev.returncode == 0:
            v["fusebox"] = rev.stdout.strip()
    except OSError:
        pass
    return v


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def dispatch_notes(args, nodes):
    """The lines above the dispatch table; `nodes` maps threads to {"fusebox": n, "ort_all": n}."""
    lines = [f"Chains of Neg/Relu on a [1,16] f32 tensor; {args.rounds} interleaved rounds; the chain of 1 gets "
             f"{max(200, args.calls * 10)} calls per round, the chain of {CHAIN_N} {max(20, args.calls)}."]
    fb = sorted({n["fusebox"] for n in nodes.values() if n["fusebox"] is not None})
    if fb and fb != [CHAIN_N]:
        lines.append(f"fusebox ran the {CHAIN_N}-op chain as {' or '.join(map(str, fb))} nodes.")
    kept = sorted({n["ort_all"] for n in nodes.values() if n["ort_all"] is not None})
    if kept:
        lines.append(f"ONNX Runtime at optimization level all keeps {' or '.join(map(str, kept))} of the {CHAIN_N} "
                     f"nodes (its optimized graph: {os.path.join(Paths(args.build).shown, 'bench', f'chain{CHAIN_N}.ort_all.t*.onnx')}); "
                     "with optimizations disabled it runs them as given, as fusebox does with --passes none: "
                     "that pairing is the fair one, and the one the target uses.")
    return [ln + "  " for ln in lines[:-1]] + lines[-1:]


def header_lines(args, vers, missing, peak_note, failures):
    lines = [f"Measured {time.strftime('%Y-%m-%d')} on {cpu_name()}, {os.cpu_count()} cores; "
             + ", ".join(f"{k} {v}" for k, v in vers.items()) + ".",
             f"{args.rounds} interleaved rounds x {args.calls} calls; latency = median over rounds of each round's "
             "median (min = best round); ratios computed within each round, median over rounds.",
             f"fusebox: compiled executor, all passes, planner {args.planner}"
             + (" (every registered strategy, the smallest arena wins; the planner column names the winner)"
                if args.planner == "best" else "") + ". ORT: CPU, optimization level all, sequential.",
             peak_note.rstrip(".") + "."]
    for who, why in missing.items():
        if who in ("torch", "ort"):
            lines.append(f"Not run: {why}.")
    for f in failures:
        lines.append("Failed: " + " ".join(f.split()))  # one Markdown line, even for a multi-line error
    return [ln + "  " for ln in lines[:-1]] + lines[-1:]  # Markdown line breaks


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*", help="ONNX files (default: export the workbench's models)")
    ap.add_argument("--models", dest="only", default="", metavar="PREFIXES",
                    help="without files: race only the builtin models whose name starts with one of these "
                         "comma-separated prefixes (mlp, mlp_b1, mlp_b64, transformer, stack4)")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    ap.add_argument("--rounds", type=int, default=7, help="interleaved rounds (default 7)")
    ap.add_argument("--calls", type=int, default=50, help="timed calls per runtime per round (default 50)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"),
                    help="build directory holding tests/bench/fusebox_bench_worker")
    ap.add_argument("--planner", default="best", help="fusebox planner strategy, or best (default)")
    ap.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE",
                    help="value of a dynamic dim of the given .onnx files (default 1)")
    ap.add_argument("--no-dispatch", action="store_true", help="skip the dispatch race")
    ap.add_argument("--out", help="Markdown report (default BUILD/bench/race.md)")
    args = ap.parse_args()
    if args.rounds < 1 or args.calls < 1:
        die("--rounds and --calls must be >= 1")
    try:
        threads = [int(t) for t in args.threads.split(",")]
    except ValueError:
        die(f"--threads {args.threads}: expected comma-separated integers, e.g. 1,2")
    if any(t < 1 for t in threads):
        die(f"--threads {args.threads}: each must be >= 1")
    given_dims = {}
    for d in args.dim:
        name, eq, value = d.partition("=")
        if not eq or not name or not value.lstrip("-").isdigit():
            die(f"--dim {d}: expected NAME=VALUE with an integer VALUE")
        given_dims[name] = int(value)

    paths = Paths(args.build)
    out = args.out or os.path.join(paths.outdir, "race.md")
    load_numpy()
    need_onnx()
    if not os.path.exists(paths.worker):
        die(f"{paths.worker} is missing: build it with "
            f"`cmake --build {paths.shown} --target fusebox_bench_worker fusebox`")
    os.makedirs(paths.outdir, exist_ok=True)

    missing = {}
    why_torch = torch_missing()
    why_ort = ort_missing()
    if why_ort:
        missing["ort"] = why_ort
        note(f"{why_ort}; racing without it")
    if args.models:
        for m in args.models:
            if not os.path.exists(m):
                die(f"{m}: no such file")
        cases = [user_case(m, given_dims) for m in args.models]
        missing["torch"] = "eager PyTorch has no module to run for a user's .onnx file"
    else:
        specs = select_builtin(args.only)
        if why_torch:
            missing["torch"] = why_torch
            cases = exported_earlier(paths.outdir, specs, why_torch)
        else:
            cases = export_models(paths.outdir, specs)

    gemm = gemm_model(paths.outdir)

    rows, failures = [], []
    for t in threads:
        floor = ort_floor(paths, t, args.rounds, max(100, args.calls)) if not why_ort else None
        for case in cases:
            try:
                row = race(paths, case, t, args.rounds, args.calls, floor, not why_ort, gemm, args.planner)
            except RuntimeError as e:
                failures.append(f"{case.label} at {rr.threads_text(t)}: {e}")
                note(f"FAILED {failures[-1]}")
                continue
            rows.append(row)
            print(json.dumps(row), flush=True)

    drows, dnotes = [], []
    if not args.no_dispatch:
        nodes = {}
        for t in threads:
            try:
                r, nodes[t] = dispatch_race(paths, t, args.rounds, max(20, args.calls), not why_ort)
            except RuntimeError as e:
                failures.append(f"dispatch race at {rr.threads_text(t)}: {e}")
                note(f"FAILED {failures[-1]}")
                continue
            drows += r
            for d in r:
                print(json.dumps(d), flush=True)
        dnotes = dispatch_notes(args, nodes)

    verdicts = rr.targets(rows, None if args.no_dispatch else drows, missing)
    text = rr.report(header_lines(args, versions(not why_torch), missing, PEAK_NOTE, failures), rows, drows, dnotes,
                     verdicts)
    rr.write_atomically(out, text)
    print(text)
    note(f"wrote {out}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
