// Runs Silero VAD v5 with ONNX Runtime (onnxruntime-node from data/node_modules) over a whole clip, chunk by
// chunk as Silero's own wrapper does: each call gets the 64 samples before the chunk as context plus 512 new
// samples (a last partial chunk is zero-padded), the state [2,1,128] the previous call returned (zeros
// first) and sr = 16000. The reference for tests/models/vad_test.cpp and the peer `sluice vad` is timed with.
//   node ort_vad.js MODEL AUDIO.npy OUT.json [--threads N]
// AUDIO.npy: float32 samples at 16 kHz, shape (n,). OUT.json: {"probabilities": [...], "chunks": n,
// "median_ms": ..., "mean_ms": ...}, the times per call (steady state: the first 3 calls are left out).
'use strict';
const fs = require('fs');
const path = require('path');

const data = process.env.SLUICE_DATA || path.join(__dirname, '..', '..', 'data');
const ort = require(path.resolve(data, 'node_modules', 'onnxruntime-node'));

const kChunk = 512, kContext = 64;

// A float32 C-order .npy file's values (what the test writes; anything else is refused).
function readFloats(file) {
  const b = fs.readFileSync(file);
  if (b.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(file + ': not an .npy file');
  const start = b[6] === 1 ? 10 : 12;
  const hlen = b[6] === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const h = b.toString('latin1', start, start + hlen);
  if (!/'descr':\s*'<f4'/.test(h)) throw new Error(file + ': not float32 (' + h.trim() + ')');
  const body = b.subarray(start + hlen);
  const out = new Float32Array(body.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = body.readFloatLE(4 * i);
  return out;
}

async function main() {
  const args = process.argv.slice(2);
  const [model, audioFile, outFile] = args;
  let threads = 1;
  for (let i = 3; i < args.length; i++) {
    if (args[i] === '--threads') threads = Number(args[++i]);
    else throw new Error('unknown argument ' + args[i]);
  }
  const audio = readFloats(audioFile);
  const session = await ort.InferenceSession.create(model, {intraOpNumThreads: threads, interOpNumThreads: 1});
  const sr = new ort.Tensor('int64', BigInt64Array.from([16000n]), []);
  let state = new ort.Tensor('float32', new Float32Array(2 * 128), [2, 1, 128]);
  const context = new Float32Array(kContext);
  const probs = [], ms = [];
  for (let at = 0; at < audio.length; at += kChunk) {
    const x = new Float32Array(kContext + kChunk);
    x.set(context, 0);
    x.set(audio.subarray(at, Math.min(audio.length, at + kChunk)), kContext);
    context.set(x.subarray(kChunk, kChunk + kContext));
    const t0 = process.hrtime.bigint();
    const out = await session.run({input: new ort.Tensor('float32', x, [1, kContext + kChunk]), state, sr});
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    state = out.stateN;
    probs.push(out.output.data[0]);
  }
  const steady = ms.slice(Math.min(3, ms.length - 1)).sort((a, b) => a - b);
  const median = steady.length ? steady[Math.floor(steady.length / 2)] : 0;
  const mean = steady.length ? steady.reduce((a, b) => a + b, 0) / steady.length : 0;
  fs.writeFileSync(outFile, JSON.stringify({probabilities: probs, chunks: probs.length, median_ms: median, mean_ms: mean}));
}

main().catch((e) => {
  console.error('ort_vad: ' + (e && e.message ? e.message : e));
  process.exit(1);
});
