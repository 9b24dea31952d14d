#!/usr/bin/env bash
# The main job: install missing packages, fetch the real models (scripts/fetch-models.sh; skipped when
# present), build (preset `default`) the `sluice` command line and sluice-demo, read the text of
# models/ocr/sample.png with PaddleOCR's PP-OCRv4 on the default device (`sluice ocr`: each line's text,
# box and confidence, and the time of each stage), then list the devices (`sluice devices`) and measure
# the default device's queue latencies and copy bandwidth (`sluice latency --quick`). Extra arguments go
# to `sluice latency` (--json, --html report.html, --device D...).
#   SLUICE_JOBS=n   parallel build jobs (default: number of cores)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/install-deps.sh cli vulkan opencl
scripts/fetch-models.sh
cmake --preset default
cmake --build --preset default -j "${SLUICE_JOBS:-$(nproc)}" --target sluice-cli sluice-demo
build/default/tools/sluice ocr models/ocr/sample.png
build/default/tools/sluice devices
build/default/tools/sluice latency --quick "$@"
