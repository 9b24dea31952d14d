#!/usr/bin/env bash
# The main job: install missing packages, build (preset `default`) and run sluice-ir-demo, which
# prints index expressions as UOp trees before and after simplification, and their value bounds.
#   SLUICE_JOBS=n   parallel build jobs (default: number of cores)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/install-deps.sh
cmake --preset default
cmake --build --preset default -j "${SLUICE_JOBS:-$(nproc)}" --target sluice-ir-demo
build/default/tools/sluice-ir-demo "$@"
