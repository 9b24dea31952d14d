#!/usr/bin/env bash
# The main job: install missing packages, build (preset `default`) the `sluice` command line and
# sluice-demo, then list the devices (`sluice devices`) and measure the default device's queue latencies
# and copy bandwidth (`sluice latency --quick`). Extra arguments go to `sluice latency` (--json,
# --html report.html, --device D...).
#   SLUICE_JOBS=n   parallel build jobs (default: number of cores)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/install-deps.sh cli vulkan opencl
cmake --preset default
cmake --build --preset default -j "${SLUICE_JOBS:-$(nproc)}" --target sluice-cli sluice-demo
build/default/tools/sluice devices
build/default/tools/sluice latency --quick "$@"
