#!/usr/bin/env bash
# The whole test suite, from a fresh clone: install missing packages, configure (preset `default`,
# build/default), build, run every CTest test. CI runs exactly this (.ci/run).
#   SLUICE_JOBS=n   parallel build jobs (default: number of cores)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/install-deps.sh cli vulkan opencl hip onnx data python
scripts/fetch-models.sh  # the real models and ONNX Runtime, the models tests' reference (skipped when present)
cmake --preset default
cmake --build --preset default -j "${SLUICE_JOBS:-$(nproc)}"
ctest --preset default --output-on-failure -j 2
