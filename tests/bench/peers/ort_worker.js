// ONNX Runtime worker for tests/bench/peers/race.py. Loads one model with the CPU execution
// provider (graph optimization level all unless told otherwise, sequential, intra-op threads as
// asked), prints one ready line and answers commands on stdin, one per line, with one JSON line
// on stdout:
//   run N        -> {"samples_us": [...]}    N timed session.run calls
//   save PATH    -> {"saved": PATH}          first output as .npy (float32)
//   quit
// Usage: node ort_worker.js MODEL.onnx THREADS NAME=INPUT.npy [NAME=INPUT.npy ...]
//          [--opt disabled|basic|extended|all] [--save-optimized PATH] [--spinning 0|1]
// --save-optimized writes the graph ORT runs after its optimizations (optimizedModelFilePath),
// so the caller can count what is left of it.
// --spinning sets the session config entries session.intra_op.allow_spinning and
// session.inter_op.allow_spinning (through sessionOptions.extra, which the node binding flattens
// to dotted keys): ORT's own thread pool ignores OMP_WAIT_POLICY, and by default (1) its threads
// spin after each call; 0 makes them block at once, as OMP_WAIT_POLICY=PASSIVE does for OpenMP.
// The ready line echoes the value (null: ORT's default).
'use strict';
const fs = require('fs');
const readline = require('readline');
const ort = require('onnxruntime-node');

function readNpy(path) {
  const buf = fs.readFileSync(path);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${path}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const data = buf.subarray(start + headerLen);
  const copy = new Uint8Array(data).buffer;  // aligned copy
  if (descr === '<f4') return new ort.Tensor('float32', new Float32Array(copy), shape);
  if (descr === '<i8') return new ort.Tensor('int64', new BigInt64Array(copy), shape);
  throw new Error(`${path}: dtype ${descr} not supported`);
}

function writeNpy(path, tensor) {
  const shape = tensor.dims.length === 1 ? `(${tensor.dims[0]},)` : `(${tensor.dims.join(', ')})`;
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': ${shape}, }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  const data = Buffer.from(new Float32Array(tensor.data).buffer);
  fs.writeFileSync(path, Buffer.concat([head, Buffer.from(header, 'latin1'), data]));
}

async function main() {
  const [model, threadsText, ...rest] = process.argv.slice(2);
  const threads = Number(threadsText);
  if (!model || !(threads >= 1)) throw new Error('usage: node ort_worker.js MODEL.onnx THREADS NAME=INPUT.npy ...');
  const options = {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
  };
  const feeds = {};
  let spinning = null;
  for (let i = 0; i < rest.length; ++i) {
    const arg = rest[i];
    if (arg === '--opt' && i + 1 < rest.length) {
      const level = rest[++i];
      if (!['disabled', 'basic', 'extended', 'all'].includes(level)) {
        throw new Error(`--opt ${level}: expected disabled, basic, extended or all`);
      }
      options.graphOptimizationLevel = level;
    } else if (arg === '--save-optimized' && i + 1 < rest.length) {
      options.optimizedModelFilePath = rest[++i];
      options.logSeverityLevel = 3;  // not the warning that a level-all graph is hardware specific
    } else if (arg === '--spinning' && i + 1 < rest.length) {
      spinning = rest[++i];
      if (spinning !== '0' && spinning !== '1') throw new Error(`--spinning ${spinning}: expected 0 or 1`);
      options.extra = { session: { intra_op: { allow_spinning: spinning }, inter_op: { allow_spinning: spinning } } };
    } else if (arg.indexOf('=') > 0) {
      const eq = arg.indexOf('=');
      feeds[arg.slice(0, eq)] = readNpy(arg.slice(eq + 1));
    } else {
      throw new Error(`unexpected argument '${arg}'`);
    }
  }
  const session = await ort.InferenceSession.create(model, options);
  let last = await session.run(feeds);
  console.log(JSON.stringify({ ready: true, inputs: session.inputNames, outputs: session.outputNames,
    opt: options.graphOptimizationLevel, spinning }));
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    const [cmd, arg] = line.trim().split(/\s+/);
    if (cmd === 'run') {
      const n = Number(arg);
      const samples = [];
      for (let i = 0; i < n; ++i) {
        const t0 = process.hrtime.bigint();
        last = await session.run(feeds);
        samples.push(Number(process.hrtime.bigint() - t0) / 1000);
      }
      console.log(JSON.stringify({ samples_us: samples }));
    } else if (cmd === 'save') {
      writeNpy(arg, last[session.outputNames[0]]);
      console.log(JSON.stringify({ saved: arg }));
    } else if (cmd === 'quit') {
      break;
    } else {
      console.log(JSON.stringify({ error: `unknown command ${cmd}` }));
    }
  }
  rl.close();
  process.exit(0);
}

main().catch((e) => {
  console.log(JSON.stringify({ error: String(e && e.message ? e.message : e) }));
  process.exit(1);
});
