#!/usr/bin/env bash
# The main job: install missing packages, build (preset `default`) and run sluice-demo, which
# builds a small model lazily, prints its kernels and the C generated for one, runs it on the CPU device
# and checks the values against the reference evaluator.
#   SLUICE_JOBS=n   parallel build jobs (default: number of cores)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/install-deps.sh
cmake --preset default
cmake --build --preset default -j "${SLUICE_JOBS:-$(nproc)}" --target sluice-demo
build/default/tools/sluice-demo "$@"
