// Runs an ONNX model with ONNX Runtime (onnxruntime-node, which scripts/fetch-models.sh puts in
// data/node_modules) on .npy inputs: the independent reference the model tests compare sluice with, and
// the peer the benchmarks time. sluice itself never links it.
//   node ort_run.js MODEL OUT_DIR [--threads N] [--bench N] NAME=FILE.npy|NAME=random:D0xD1x... ...
// Writes OUT_DIR/<output name>.npy (names with characters outside [A-Za-z0-9_.-] get '_'); with --bench N
// runs N more times after 3 warm-up runs and prints {"median_ms", "p99_ms", "runs"} as JSON on stdout.
'use strict';
const fs = require('fs');
const path = require('path');

const data = process.env.SLUICE_DATA || path.join(__dirname, '..', '..', 'data');
const ort = require(path.resolve(data, 'node_modules', 'onnxruntime-node'));

// .npy dtype code <-> ONNX Runtime tensor type and typed array.
const kTypes = {
  f4: ['float32', Float32Array], f8: ['float64', Float64Array], i4: ['int32', Int32Array],
  i8: ['int64', BigInt64Array], u1: ['uint8', Uint8Array], i1: ['int8', Int8Array], b1: ['bool', Uint8Array],
  u8: ['uint64', BigUint64Array], i2: ['int16', Int16Array], u2: ['uint16', Uint16Array],
};

function readNpy(file) {
  const b = fs.readFileSync(file);
  if (b.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(file + ': not an .npy file');
  const major = b[6];
  const hlen = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const h = b.toString('latin1', start, start + hlen);
  const code = /'descr':\s*'[<|=]([a-z]\d)'/.exec(h)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(h)[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const [type, Arr] = kTypes[code];
  const bytes = b.subarray(start + hlen);
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  let arr = new Arr(copy.buffer);
  if (code === 'b1') arr = Uint8Array.from(arr, (v) => (v ? 1 : 0));
  return new ort.Tensor(type, type === 'bool' ? Uint8Array.from(arr) : arr, shape);
}

// 'D0xD1x...': float32 uniform in [0, 1), for benchmarks that need only the shape.
function randomFloats(dims) {
  const shape = dims.split('x').map(Number);
  if (shape.some((d) => !Number.isInteger(d) || d < 0)) throw new Error(`bad random shape '${dims}'`);
  const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
  for (let i = 0; i < data.length; i++) data[i] = Math.random();
  return new ort.Tensor('float32', data, shape);
}

function writeNpy(file, t) {
  const code = Object.keys(kTypes).find((k) => kTypes[k][0] === t.type);
  const dims = t.dims.length === 1 ? `${t.dims[0]},` : t.dims.join(', ');
  let h = `{'descr': '${code === 'b1' ? '|' : '<'}${code}', 'fortran_order': False, 'shape': (${dims}), }`;
  while ((10 + h.length + 1) % 64) h += ' ';
  h += '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(h.length, 8);
  const d = t.data;
  const body = Buffer.from(d.buffer, d.byteOffset, d.byteLength);
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(h, 'latin1'), body]));
}

async function main() {
  const args = process.argv.slice(2);
  const [model, outDir] = args;
  let threads = 1, bench = 0;
  const feeds = {};
  for (let i = 2; i < args.length; i++) {
    if (args[i] === '--threads') threads = Number(args[++i]);
    else if (args[i] === '--bench') bench = Number(args[++i]);
    else {
      const eq = args[i].indexOf('=');
      const value = args[i].slice(eq + 1);
      feeds[args[i].slice(0, eq)] = value.startsWith('random:') ? randomFloats(value.slice(7)) : readNpy(value);
    }
  }
  const session = await ort.InferenceSession.create(model, {intraOpNumThreads: threads, interOpNumThreads: 1});
  const out = await session.run(feeds);
  fs.mkdirSync(outDir, {recursive: true});
  for (const [name, t] of Object.entries(out)) writeNpy(path.join(outDir, name.replace(/[^A-Za-z0-9_.-]/g, '_') + '.npy'), t);
  if (bench > 0) {
    for (let i = 0; i < 3; i++) await session.run(feeds);
    const ms = [];
    for (let i = 0; i < bench; i++) {
      const t0 = process.hrtime.bigint();
      await session.run(feeds);
      ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    ms.sort((a, b) => a - b);
    const at = (q) => ms[Math.min(ms.length - 1, Math.round(q * (ms.length - 1)))];
    console.log(JSON.stringify({median_ms: at(0.5), p99_ms: at(0.99), runs: bench}));
  }
}

main().catch((e) => {
  console.error('ort_run: ' + (e && e.message ? e.message : e));
  process.exit(1);
});
