#!/usr/bin/env bash
# The real models side by side with ONNX Runtime (its CPU provider, same thread count): PP-OCRv4 det on a
# 352x768 image, rec on 6 lines of width 512, cls on 6 lines. Rounds interleave the two sides (this
# machine is noisy); each prints medians and the ratio sluice/ORT. Also each model's cold (empty kernel
# cache) and warm first-run times on the sluice side. Silero VAD: the median time per 512-sample chunk
# over a 10 s synthetic clip, `sluice vad --json` beside tests/models/ort_vad.js.
#
#   scripts/bench-models.sh [--device D] [--threads "1 2"] [--runs N] [--rounds R] [--json FILE]
# --json FILE also writes one JSON object per row to FILE: {"model", "threads", "sluice_ms", "ort_ms"}.
# Needs build/default (scripts/test.sh builds it) and scripts/fetch-models.sh's data.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
device=CPU threads="1 2" runs=20 rounds=3 json=/dev/null
while [[ $# -gt 0 ]]; do
  case "$1" in
    --device) device=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --json) json=$2; shift 2 ;;
    *) echo "bench-models: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
scripts/fetch-models.sh --check
sluice=build/default/tools/sluice
[[ -x $sluice ]] || { echo "bench-models: build first (scripts/test.sh or cmake --build --preset default)" >&2; exit 1; }
A=${SLUICE_DATA:-data}/ocr-models/assets
D=p2o.DynamicDimension
# name  model file  sluice --dim flags  ORT random input shape
MODELS=(
  "det ch_PP-OCRv4_det_infer.onnx        $D.0=1,$D.1=352,$D.2=768  1x3x352x768"
  "rec ch_PP-OCRv4_rec_infer.onnx        $D.0=6,$D.1=512           6x3x48x512"
  "cls ch_ppocr_mobile_v2.0_cls_infer.onnx $D.0=6,$D.1=48,$D.2=192 6x3x48x192"
)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$sluice" "$tmp/sluice" && sluice=$tmp/sluice  # one binary throughout, whatever is rebuilt meanwhile
median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
field() { node -e "const j=JSON.parse(require('fs').readFileSync(0,'utf8'));console.log($1)"; }

# sluice run on the current model (name, file, dim_flags), JSON on stdout; extra flags appended.
sl() { SLUICE_CACHE_DIR="$tmp/cache-$name" $sluice run "$A/$file" --device "$device" "${dim_flags[@]}" --json "$@"; }

# One result row: the table line, and its JSON object.
row() {
  printf '%-4s %-7s %8s %12.3f %12.3f %7.2fx\n' "$1" "$2" "$device" "$3" "$4" "$(echo "$3 / $4" | bc -l)"
  printf '{"model":"%s","threads":%s,"device":"%s","sluice_ms":%s,"ort_ms":%s}\n' "$1" "$2" "$device" "$3" "$4" >> "$json"
}
[[ $json == /dev/null ]] || : > "$json"  # this run's rows only
printf '%-4s %-7s %8s %12s %12s %8s\n' model threads device "sluice ms" "ORT ms" ratio
for row in "${MODELS[@]}"; do
  read -r name file dims shape <<< "$row"
  dim_flags=()
  IFS=, read -ra ds <<< "$dims"
  for d in "${ds[@]}"; do dim_flags+=(--dim "$d"); done
  # Cold and warm first runs: an empty kernel cache, then the filled one. A model that fails on this device
  # (its error is on stderr) is reported and the next one runs.
  mkdir -p "$tmp/cache-$name"
  if ! sl > "$tmp/cold.json" || ! sl > "$tmp/warm.json"; then
    echo "     $name failed on $device"
    continue
  fi
  cold=$(field 'j.first_run.ms.toFixed(0)' < "$tmp/cold.json") warm=$(field 'j.first_run.ms.toFixed(0)' < "$tmp/warm.json")
  for t in $threads; do
    : > "$tmp/s" && : > "$tmp/o"
    for ((r = 0; r < rounds; r++)); do
      SLUICE_CPU_THREADS=$t sl --bench "$runs" | field 'j.bench.median_ms' >> "$tmp/s"
      # OPENBLAS_CORETYPE is unset for the peer only (it is how this machine is told to slow OpenBLAS down).
      env -u OPENBLAS_CORETYPE node tests/models/ort_run.js "$A/$file" "$tmp/ort" --threads "$t" --bench "$runs" \
        "x=random:$shape" | field 'j.median_ms' >> "$tmp/o"
    done
    s=$(median < "$tmp/s") o=$(median < "$tmp/o")
    row "$name" "$t" "$s" "$o"
  done
  echo "     $name first run on $device: cold cache ${cold} ms, warm cache ${warm} ms"
done

# Silero VAD v5, per chunk: noise with bursts of tones, written as the WAV sluice reads and the .npy
# ort_vad.js reads (the time per chunk does not depend on what the audio says).
V=${SLUICE_DATA:-data}/vad-web/dist/silero_vad_v5.onnx
python3 - "$tmp/clip" <<'PY'
import math, random, struct, sys, wave
random.seed(0)
n = 16000 * 10
x = [0.02 * random.gauss(0, 1) + (0.3 * math.sin(2 * math.pi * 220 * i / 16000) if (i // 20000) % 2 else 0.0)
     for i in range(n)]
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % n
header += " " * (63 - (10 + len(header)) % 64) + "\n"
with open(sys.argv[1] + ".npy", "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + struct.pack("<%df" % n, *x))
with wave.open(sys.argv[1] + ".wav", "wb") as w:
    w.setnchannels(1), w.setsampwidth(2), w.setframerate(16000)
    w.writeframes(struct.pack("<%dh" % n, *(int(max(-1.0, min(1.0, v)) * 32767) for v in x)))
PY
# One round of both sides for t threads; false (the error on stderr) if either fails.
vad_round() {
  local out
  out=$(SLUICE_CACHE_DIR="$tmp/cache-vad" SLUICE_CPU_THREADS=$1 $sluice vad "$tmp/clip.wav" --model "$V" \
    --device "$device" --json) || return 1
  field 'j.chunk_ms.median' <<< "$out" >> "$tmp/s"
  env -u OPENBLAS_CORETYPE node tests/models/ort_vad.js "$V" "$tmp/clip.npy" "$tmp/ort_vad.json" --threads "$1" \
    || return 1
  field 'j.median_ms' < "$tmp/ort_vad.json" >> "$tmp/o"
}
for t in $threads; do
  : > "$tmp/s" && : > "$tmp/o"
  ok=1
  for ((r = 0; r < rounds; r++)); do vad_round "$t" || { ok=0; break; }; done
  if ((ok)); then row vad "$t" "$(median < "$tmp/s")" "$(median < "$tmp/o")"; else echo "     vad failed on $device"; fi
done
