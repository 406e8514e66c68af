#!/usr/bin/python3
"""Races fusebox against eager PyTorch and ONNX Runtime on the same ONNX files.

    /usr/bin/python3 tests/bench/peers/race.py [--threads 1,2] [--rounds 7] [--calls 50]
        [--models mlp,transformer,stack4,decoder,mobilenet,resnet] [--build build] [--planner best] [--no-dispatch]
        [--wait-policy passive|active|default|mixed] [--settle-ms 20] [--alone torch|none]
        [--refresh-machine] [--dim NAME=VALUE ...] [--out BUILD/bench/race.md] [MODEL.onnx ...]

Without model files it exports the workbench's models from PyTorch (assets/models/export_models.py
defines them) at opset 17 into BUILD/bench/: MLP at batch 1 and 64, the transformer block at seq 64,
a 4-layer stack at seq 128, the GPT-style decoder block at seq 64, and torchvision's
MobileNetV3-Small and ResNet-18 at 224 x 224 (python3-torchvision) (BUILTIN lists them, one line each; --models keeps those whose file name starts
with one of the given prefixes, e.g. `--models mlp`). For those, eager PyTorch runs the very module
that was exported; without PyTorch installed, the files an earlier run exported are raced without
it. BUILD is
--build (default: build/ in the repository; a relative path is relative to the current directory).
For a user's .onnx file only ONNX Runtime and fusebox run (there is no module to run eagerly); its
dynamic dims are 1 unless given with --dim (dim_param name, or INPUT:INDEX), its inputs random.

Method: each runtime is a long-lived worker holding its model loaded: eager PyTorch in this process
(inference_mode, torch.set_num_threads), ONNX Runtime in node (ort_worker.js: onnxruntime-node,
CPU, graph optimization level all, sequential, intra-op threads as ours), fusebox in
BUILD/tests/bench/fusebox_bench_worker (compiled executor, all passes, and with `--planner best`
every registered planner strategy tried, the smallest arena kept). A round asks each worker in
turn for `calls` timed calls; ratios are computed inside each round from the round's medians, and
the table reports the median over rounds (min: the best round). Outputs are checked to agree first
(rtol 1e-3, atol 1e-4). ONNX Runtime's binding floor (a one-Add model through the same node
binding) is reported too: ORT minus that floor is the fair figure for its engine alone.

Fair conditions: the workers take turns on the same cores, so a runtime whose threads keep spinning
after its turn steals the core the next runtime's second thread needs (before issue 14 only
PyTorch ran at OMP_WAIT_POLICY=PASSIVE while the others spun). Now every runtime runs under the same
conditions, --wait-policy: default (the default) leaves each runtime at its own default (libgomp
and ORT's pool spin a while after a call, then sleep), and before each worker's turn the race
pauses --settle-ms (default 20 ms, nobody timed), long enough for the previous worker's threads to
go to sleep, so each runtime is timed as a user runs it, on idle cores. passive sets
OMP_WAIT_POLICY=PASSIVE for PyTorch (in this process, before numpy or torch load libgomp) and for
the fusebox workers, and session.intra_op.allow_spinning=0 (inter_op too) for ONNX Runtime, whose
own thread pool ignores OMP_WAIT_POLICY (ort_worker.js --spinning 0): every fork then wakes
sleeping threads (~20 us on this machine), which costs all three runtimes at 2 threads; active
spins all of them (ACTIVE, allow_spinning=1); mixed is the old race (with --settle-ms 0 exactly).
--alone torch (the default) then times eager PyTorch again after each model's race with every
other worker closed, the same rounds and calls, in a column of its own: where it agrees with
PyTorch's race column, the race did not slow PyTorch down (`--alone torch,ort,fusebox` does the
same for the others; none skips it).

Roofline: the fusebox worker reports the FLOPs of one call (ir::node_cost summed over the graph it
runs). The GEMM peak is raced like a peer: a 512 x 512 MatMul against a weight (what `fusebox
machine` measures) run by another fusebox worker in the same rounds as each model, so that GEMM
peak / fusebox GFLOP/s is a ratio inside each round (a peak measured at another minute would carry
this machine's drift, ~10% at 2 threads, into the ratio). Each row gets fusebox's GFLOP/s, the
peak's and the ratio. The FMA peak (the physical limit: independent AVX-512 FMAs in registers) is
what `BUILD/app/cli/fusebox machine --json` reports as fma_gflops per thread count (its cached
figures; --refresh-machine measures again): each row gets fusebox's GFLOP/s as a fraction of the
FMA peak at its thread count, and the header names the peak.

Dispatch: a chain of 1 and a chain of 1000 tiny element-wise ops (alternating Neg and Relu on a
[1,16] f32 tensor, as tests/bench/dispatch_bench.cpp) run in interleaved rounds on fusebox
(compiled executor, --passes none) and on ONNX Runtime with its graph optimizations disabled (the
fair pairing) and at level all (for reference; the file it optimized is saved and its nodes
counted). ns per op = (t_1000 - t_1) / 999, median over rounds.

The Markdown (default BUILD/bench/race.md, written atomically) has the header (versions, method,
FMA peak, conditions), the race table, the dispatch table and the issue's targets, each "met",
"missed" or "not measured (why)". Peers are optional:
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
        self.cli = os.path.join(self.build, "app", "cli", "fusebox")
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


def machine_roofline(paths, refresh):
    """(`fusebox machine --json` as a dict, None) or (None, why not). The FMA peak per thread count is
    its "fma_gflops"; the figures are the cached ones unless `refresh` (a first run measures)."""
    if not os.path.exists(paths.cli):
        return None, (f"no FMA peak: {os.path.relpath(paths.cli) if paths.cli.startswith(os.getcwd()) else paths.cli} "
                      f"is missing (`cmake --build {paths.shown} --target fusebox`)")
    argv = [paths.cli, "machine", "--json"] + (["--refresh"] if refresh else [])
    note("reading the FMA peak: " + " ".join(argv[1:]) + " (measures the machine when nothing is cached)")
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        machine = json.loads(p.stdout) if p.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError) as e:
        return None, f"no FMA peak: `fusebox machine --json` failed ({e})"
    if machine is None:
        return None, f"no FMA peak: `fusebox machine --json` exited {p.returncode}: {p.stderr.strip()[:200]}"
    if not rr.fma_from_machine(machine):
        return None, "no FMA peak: `fusebox machine --json` has no fma_gflops"
    return machine, None


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


# What the threads of an idle runtime do, per --wait-policy: OMP_WAIT_POLICY for the OpenMP
# runtimes (eager PyTorch in this process, fusebox's workers) and ONNX Runtime's own thread-pool
# switch (session.intra_op/inter_op.allow_spinning; its pool is not OpenMP and ignores the variable).
# "default" leaves every runtime at its own default (libgomp spins a while, about 300,000 rounds,
# before it sleeps; ORT's pool spins before it blocks) and relies on the pause between turns;
# "mixed" is the race before issue 14: PyTorch passive, fusebox and ORT at their defaults.
WAIT_POLICIES = {
    # policy: (OMP_WAIT_POLICY for PyTorch, for fusebox's workers, ORT allow_spinning); None: unset
    "passive": ("PASSIVE", "PASSIVE", "0"),
    "active": ("ACTIVE", "ACTIVE", "1"),
    "default": (None, None, None),
    "mixed": ("PASSIVE", None, None),
}


class Conditions:
    """The conditions every worker runs under: the wait policy and the pause before each turn."""

    def __init__(self, policy, settle_ms):
        self.policy, self.settle_ms = policy, settle_ms
        self.torch_omp, self.worker_omp, self.ort_spinning = WAIT_POLICIES[policy]

    def apply_to_this_process(self):
        """Eager PyTorch runs in this process: OMP_WAIT_POLICY must be set before the first library
        that loads libgomp (numpy's OpenBLAS may, torch does) is imported."""
        if self.torch_omp:
            os.environ["OMP_WAIT_POLICY"] = self.torch_omp
        else:
            os.environ.pop("OMP_WAIT_POLICY", None)

    def env(self, threads):
        env = dict(os.environ)
        env.update(OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
        if self.worker_omp:
            env["OMP_WAIT_POLICY"] = self.worker_omp
        else:
            env.pop("OMP_WAIT_POLICY", None)
        return env

    def ort_args(self):
        return ["--spinning", self.ort_spinning] if self.ort_spinning else []

    def settle(self):
        """Before a worker's turn: the previous worker's threads go to sleep (or keep spinning, under
        active) while nobody is timed."""
        if self.settle_ms > 0:
            time.sleep(self.settle_ms / 1000.0)

    def note(self):
        pause = (f"a {self.settle_ms:g} ms pause before each worker's turn (nobody timed)" if self.settle_ms > 0
                 else "no pause between turns")
        if self.settle_ms > 0 and self.policy != "active":
            pause += " lets the previous one's threads go to sleep"
        if self.policy == "passive":
            return ("Same conditions for every runtime (--wait-policy passive): OMP_WAIT_POLICY=PASSIVE for eager "
                    "PyTorch and fusebox, session.intra_op/inter_op.allow_spinning=0 for ONNX Runtime (its thread "
                    f"pool ignores OMP_WAIT_POLICY): no runtime's threads spin once its call returns; {pause}.")
        if self.policy == "active":
            return ("Same conditions for every runtime (--wait-policy active): OMP_WAIT_POLICY=ACTIVE for eager "
                    "PyTorch and fusebox, allow_spinning=1 (its default) for ONNX Runtime: every runtime's threads "
                    f"spin between calls, and between turns, idle workers too; {pause}.")
        if self.policy == "default":
            return ("Every runtime at its own default (--wait-policy default): OMP_WAIT_POLICY unset for eager PyTorch "
                    "and fusebox (libgomp spins a while, then sleeps), ONNX Runtime's pool spinning as it does "
                    f"by default; {pause}.")
        return ("Mixed conditions, as before issue 14 (--wait-policy mixed): eager PyTorch at OMP_WAIT_POLICY=PASSIVE, "
                "fusebox and ONNX Runtime at their defaults (libgomp spins a while before it sleeps, ORT's pool "
                f"spins): their threads may still spin when PyTorch's turn comes; {pause}.")


def fusebox_argv(paths, model, threads, feeds, extra=()):
    return [paths.worker, model, str(threads)] + [f"{n}={p}" for n, p in feeds] + list(extra)


def ort_argv(cond, model, threads, feeds, extra=()):
    return (["node", os.path.join(PEERS, "ort_worker.js"), model, str(threads)] + [f"{n}={p}" for n, p in feeds]
            + cond.ort_args() + list(extra))


# ---------------------------------------------------------------------------------------------
# Models


class Case:
    def __init__(self, label, kind, path, inputs, module=None, dims=None):
        self.label, self.kind, self.path = label, kind, path
        self.inputs = inputs          # [(input name, numpy array)]
        self.module = module          # the torch module that was exported, or None
        self.dims = dims or {}        # dynamic dim values given to fusebox (--dim)


# The builtin models, one line each: (label, kind = file stem, constructor, input shape). The
# constructor is a function of assets/models/export_models.py called with no arguments, or one of
# LOCAL_CTORS below; an entry whose function export_models.py does not define is left out (so the
# decoder joins the race once export_models.py has `decoder`). None in a shape is the model's
# width, read from the module (its first LayerNorm or Linear), so the entry does not repeat it.
BUILTIN = [
    ("mlp b1", "mlp_b1", "mlp", (1, 784)),
    ("mlp b64", "mlp_b64", "mlp", (64, 784)),
    ("transformer s64", "transformer_s64", "transformer", (1, 64, 256)),
    ("stack4 s128", "stack4_s128", "stack4", (1, 128, 256)),
    ("decoder s64", "decoder_s64", "decoder", (1, 64, None)),  # GPT-2 pre-norm block, causal mask
    ("mobilenet_v3_small", "mobilenet_v3_small", "mobilenet_v3_small", (1, 3, 224, 224)),  # torchvision
    ("resnet18", "resnet18", "resnet18", (1, 3, 224, 224)),  # torchvision, exported into BUILD only (45 MB)
]
EXPORT_MODELS = os.path.join(ROOT, "assets", "models", "export_models.py")


def _stack4(em):
    import torch
    torch.manual_seed(4)
    return torch.nn.Sequential(*[em.block(256, 4, 1024) for _ in range(4)])


LOCAL_CTORS = {"stack4": _stack4}  # models export_models.py does not define: f(em)


def export_models_functions(path=EXPORT_MODELS):
    """Names of the top-level functions of export_models.py, read without importing it (no torch)."""
    import ast
    try:
        with open(path) as f:
            tree = ast.parse(f.read(), path)
    except (OSError, SyntaxError):
        return set()
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}


def available_builtin():
    have = export_models_functions()
    return [b for b in BUILTIN if b[2] in LOCAL_CTORS or b[2] in have]


def select_builtin(only):
    builtin = available_builtin()
    if not only:
        return builtin
    prefixes = [p.strip() for p in only.split(",") if p.strip()]
    chosen = [b for b in builtin if any(b[1].startswith(p) for p in prefixes)]
    if not chosen:
        die(f"--models {only}: matches none of {', '.join(b[1] for b in builtin)}")
    return chosen


def model_width(module):
    """The feature width of a module's input: its first LayerNorm's or Linear's."""
    import torch
    for m in module.modules():
        if isinstance(m, torch.nn.LayerNorm):
            return m.normalized_shape[-1]
        if isinstance(m, torch.nn.Linear):
            return m.in_features
    raise RuntimeError("cannot tell the model's width: give its input shape in BUILTIN")


def export_models(outdir, specs):
    """The workbench's models, exported from PyTorch at opset 17 (once; the files are reused until
    export_models.py changes)."""
    import torch
    sys.path.insert(0, os.path.dirname(EXPORT_MODELS))
    import export_models as em  # the module definitions the committed assets come from

    os.makedirs(outdir, exist_ok=True)
    made = []
    for label, stem, ctor, shape in specs:
        module = (LOCAL_CTORS[ctor](em) if ctor in LOCAL_CTORS else getattr(em, ctor)()).eval()
        shape = tuple(model_width(module) if d is None else d for d in shape)
        x = np.random.default_rng(5).uniform(-1, 1, size=shape).astype(np.float32)
        path = os.path.join(outdir, stem + ".onnx")
        # Exported again when export_models.py changed since (a model's definition may have).
        if not os.path.exists(path) or os.path.getmtime(path) < os.path.getmtime(EXPORT_MODELS):
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
    import onnx
    cases = []
    for (label, stem, _, _), path in zip(specs, paths):
        dims = onnx.load(path, load_external_data=False).graph.input[0].type.tensor_type.shape.dim
        shape = [d.dim_value for d in dims]  # as exported (a width given as None in BUILTIN included)
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


def race(paths, case, threads, rounds, calls, floor_us, ort_ok, gemm, planner, cond, fma=None, alone=()):
    """One row. After the race, each runtime in `alone` that ran is timed again alone: every other
    worker closed (the other `alone` ones excepted: loaded but idle), the same rounds and calls."""
    stem = os.path.splitext(os.path.basename(case.path))[0]
    feeds = []
    for i, (name, x) in enumerate(case.inputs):
        p = os.path.join(paths.outdir, f"{stem}.in{i}.npy")
        np.save(p, x)
        feeds.append((name, p))
    env = cond.env(threads)
    dim_args = [a for k, v in case.dims.items() for a in ("--dim", f"{k}={v}")]
    workers = {}
    try:
        workers["fusebox"] = Worker("fusebox", fusebox_argv(paths, case.path, threads, feeds,
                                                            ["--planner", planner] + dim_args), env)
        if ort_ok:
            workers["ort"] = Worker("ort", ort_argv(cond, case.path, threads, feeds), env)
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
                cond.settle()
                per_round[name].append(median(w.run(calls)))
        alone_rounds = {}
        alone = [n for n in alone if n in workers]
        for name, w in workers.items():
            if name not in alone:
                w.close()
        for name in alone:
            alone_rounds[name] = []
            for _ in range(rounds):
                cond.settle()
                alone_rounds[name].append(median(workers[name].run(calls)))
    finally:
        for w in workers.values():
            w.close()
    ready = workers["fusebox"].ready
    row = rr.summarize_row(case.label, case.kind, threads, per_round, floor_us if ort_ok else None,
                           ready.get("flops"), GEMM_FLOPS, ready.get("planner"), fma, alone_rounds)
    row["max_abs_diff"] = max_diff
    row["reference"] = ref
    row["planner_arenas"] = ready.get("planner_arenas")
    return row


def ort_floor(paths, threads, rounds, calls, cond):
    path = one_add_model(paths.outdir)
    w = Worker("ort-floor", ort_argv(cond, path, threads, [("x", os.path.join(paths.outdir, "one_add.x.npy"))]),
               cond.env(threads))
    try:
        w.run(calls)
        times = []
        for _ in range(rounds):
            cond.settle()
            times.append(median(w.run(calls)))
        return median(times)
    finally:
        w.close()


def dispatch_race(paths, threads, rounds, calls, ort_ok, cond):
    """(dispatch rows, nodes): fusebox (passes none) and ORT (disabled; all) on chains of 1 and CHAIN_N.

    nodes: {"fusebox": nodes fusebox ran the long chain as, "ort_all": nodes ORT keeps of it at
    level all} (None: not run).
    """
    import onnx
    chains = {1: chain_model(paths.outdir, 1), CHAIN_N: chain_model(paths.outdir, CHAIN_N)}
    xpath = os.path.join(paths.outdir, "chain.x.npy")
    np.save(xpath, np.random.default_rng(5).uniform(-1, 1, size=(1, 16)).astype(np.float32))
    feeds = [("x", xpath)]
    env = cond.env(threads)
    sides = [("fusebox", "fusebox (compiled, passes none)",
              lambda p, n: fusebox_argv(paths, p, threads, feeds, ["--passes", "none", "--executor", "compiled"]))]
    if ort_ok:
        optimized = os.path.join(paths.outdir, f"chain{CHAIN_N}.ort_all.t{threads}.onnx")
        sides.append(("ort", "ONNX Runtime (optimizations disabled)",
                      lambda p, n: ort_argv(cond, p, threads, feeds, ["--opt", "disabled"])))
        sides.append(("ort_all", "ONNX Runtime (optimization level all)",
                      lambda p, n: ort_argv(cond, p, threads, feeds, ["--opt", "all"]
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
                cond.settle()
                t[key, 1].append(median(workers[key, 1].run(calls_1)))
                cond.settle()
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


def header_lines(args, vers, missing, peak_note, failures, cond=None, machine=None, threads=(), alone=()):
    lines = [f"Measured {time.strftime('%Y-%m-%d')} on {cpu_name()}, {os.cpu_count()} cores; "
             + ", ".join(f"{k} {v}" for k, v in vers.items()) + ".",
             f"{args.rounds} interleaved rounds x {args.calls} calls; latency = median over rounds of each round's "
             "median (min = best round); ratios computed within each round, median over rounds.",
             f"fusebox: compiled executor, all passes, planner {args.planner}"
             + (" (every registered strategy, the smallest arena wins; the planner column names the winner)"
                if args.planner == "best" else "") + ". ORT: CPU, optimization level all, sequential.",
             peak_note.rstrip(".") + "."]
    fma = rr.fma_note(machine, threads) if machine else None
    lines.append(fma or missing.get("fma", "no FMA peak") + ".")
    if cond is not None:
        lines.append(cond.note())
    if alone:
        names = {"torch": "eager PyTorch", "ort": "ONNX Runtime", "fusebox": "fusebox"}
        lines.append(f"Alone (--alone {','.join(alone)}): {', '.join(names[a] for a in alone)} timed again after each "
                     "model's race with the other workers closed, the same rounds and calls: where its alone column "
                     "agrees with its race column, the race did not slow it down.")
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
                         "comma-separated prefixes (" + ", ".join(b[1] for b in available_builtin())
                         + "; mlp takes both MLPs)")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    ap.add_argument("--rounds", type=int, default=7, help="interleaved rounds (default 7)")
    ap.add_argument("--calls", type=int, default=50, help="timed calls per runtime per round (default 50)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"),
                    help="build directory holding tests/bench/fusebox_bench_worker")
    ap.add_argument("--planner", default="best", help="fusebox planner strategy, or best (default)")
    ap.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE",
                    help="value of a dynamic dim of the given .onnx files (default 1)")
    ap.add_argument("--no-dispatch", action="store_true", help="skip the dispatch race")
    ap.add_argument("--wait-policy", choices=sorted(WAIT_POLICIES), default="default",
                    help="what idle runtime threads do, the same for all: default (the default: each runtime's "
                         "own, spin a while, then sleep; the pause between turns lets them sleep), passive "
                         "(sleep at once), active (spin); mixed is the race before issue 14 (PyTorch passive, "
                         "the others their defaults; with --settle-ms 0)")
    ap.add_argument("--settle-ms", type=float, default=20.0,
                    help="pause before each worker's turn, nobody timed (default 20; 0: none)")
    ap.add_argument("--alone", default="torch", metavar="RUNTIMES",
                    help="comma-separated runtimes (torch, ort, fusebox) timed again alone after each model's race, "
                         "in their own column (default torch; none: skip)")
    ap.add_argument("--refresh-machine", action="store_true",
                    help="measure the FMA peak again (`fusebox machine --refresh`) instead of using the cached one")
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
    alone = [] if args.alone.strip() in ("", "none") else [a.strip() for a in args.alone.split(",") if a.strip()]
    for a in alone:
        if a not in rr.RUNTIME_NAMES:
            die(f"--alone {args.alone}: expected comma-separated runtimes among {', '.join(rr.RUNTIME_NAMES)}, or none")
    if args.settle_ms < 0:
        die("--settle-ms must be >= 0")
    cond = Conditions(args.wait_policy, args.settle_ms)
    cond.apply_to_this_process()  # before numpy and torch load libgomp
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
    machine, why_fma = machine_roofline(paths, args.refresh_machine)
    if why_fma:
        missing["fma"] = why_fma
        note(why_fma)
    fma = rr.fma_from_machine(machine)

    rows, failures = [], []
    for t in threads:
        floor = ort_floor(paths, t, args.rounds, max(100, args.calls), cond) if not why_ort else None
        for case in cases:
            try:
                row = race(paths, case, t, args.rounds, args.calls, floor, not why_ort, gemm, args.planner, cond,
                           fma, alone)
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
                r, nodes[t] = dispatch_race(paths, t, args.rounds, max(20, args.calls), not why_ort, cond)
            except RuntimeError as e:
                failures.append(f"dispatch race at {rr.threads_text(t)}: {e}")
                note(f"FAILED {failures[-1]}")
                continue
            drows += r
            for d in r:
                print(json.dumps(d), flush=True)
        dnotes = dispatch_notes(args, nodes)

    verdicts = rr.targets(rows, None if args.no_dispatch else drows, missing)
    header = header_lines(args, versions(not why_torch), missing, PEAK_NOTE, failures, cond, machine, threads,
                          [a for a in alone if any(a + "_alone_median_us" in r for r in rows)])
    text = rr.report(header, rows, drows, dnotes, verdicts)
    rr.write_atomically(out, text)
    print(text)
    note(f"wrote {out}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
