#!/usr/bin/env bash
# Installs the Debian 12 packages the build needs, only those that are missing.
#
#   scripts/install-deps.sh                 # the `core` group
#   scripts/install-deps.sh vulkan opencl   # core plus optional groups (also: SLUICE_DEPS="vulkan opencl")
#   scripts/install-deps.sh --list          # print the table and exit
#
# Idempotent: when everything is present it says so and touches nothing (no apt-get update).
set -euo pipefail

# ---------------------------------------------------------------------------------------------------
# The package table: "group: packages". `core` is always installed; other groups on request.
# ---------------------------------------------------------------------------------------------------
PACKAGES=(
  "core:      build-essential cmake ninja-build pkg-config"  # compiler, build system
  "core:      clang clang-format"                            # second compiler, formatting
  "core:      libclang-14-dev llvm-14-dev libpolly-14-dev"   # backends/cpu: kernels compiled in process
  "core:      libgtest-dev googletest"                       # tests/
  "core:      libbenchmark-dev"                              # tools/bench/
  "core:      nlohmann-json3-dev"                            # runtime/profile.cpp traces, --json output
  "core:      libspdlog-dev"                                 # base/log.cpp: the library's logger
  "core:      libonnx-dev libprotobuf-dev"                   # frontend/onnx: the ONNX project's protobuf classes
  "core:      libstb-dev fonts-dejavu-core fonts-wqy-zenhei" # models/ocr: images; its tests render text
  "core:      espeak-ng"                                     # models/vad: its tests speak a clip
  "core:      zlib1g-dev"                                    # runtime/idx.cpp: gzip-compressed IDX files (MNIST)
  "cli:       libcli11-dev"                                  # tools/sluice: arguments
  "cli:       chromium"                                      # tests/cli: renders the latency report headless
  "onnx:      libonnx-testdata"                              # tests/onnx: the ONNX backend test suite
  "data:      dataset-fashion-mnist"                         # models/mnist: the training data set
  "vulkan:    libvulkan-dev mesa-vulkan-drivers"             # loader + headers, lavapipe (CPU driver)
  "vulkan:    vulkan-validationlayers spirv-tools"           # validation in tests, spirv-val
  "opencl:    ocl-icd-opencl-dev opencl-headers pocl-opencl-icd"  # ICD loader + headers, PoCL (CPU driver)
  "hip:       libamdhip64-dev rocm-device-libs"              # HIP headers, amdgcn bitcode for clang -x hip
  "hip:       clang-19 lld-19"                               # clang -x hip for gfx942 (LLVM >= 17), its linker
  "compare:   libopenblas-dev python3-torch"                 # benchmarks against OpenBLAS and PyTorch
  "python:    python3-dev pybind11-dev libdlpack-dev python3-numpy python3-pytest"  # python/ (PyTorch: `compare`)
)

usage() { sed -n '2,7s/^# \{0,1\}//p' "$0"; }

groups=(core)
for arg in ${SLUICE_DEPS:-} "$@"; do
  case "$arg" in
    -h | --help) usage; exit 0 ;;
    --list) printf '%s\n' "${PACKAGES[@]}"; exit 0 ;;
    -*) echo "install-deps: unknown option '$arg'" >&2; usage >&2; exit 2 ;;
    *) groups+=("$arg") ;;
  esac
done

# Collect the packages of the requested groups, in table order, without duplicates.
wanted=()
for g in "${groups[@]}"; do
  found=0
  for row in "${PACKAGES[@]}"; do
    [[ "${row%%:*}" == "$g" ]] || continue
    found=1
    for p in ${row#*:}; do
      [[ " ${wanted[*]-} " == *" $p "* ]] || wanted+=("$p")
    done
  done
  if [[ $found == 0 ]]; then
    echo "install-deps: unknown group '$g' (groups: $(printf '%s\n' "${PACKAGES[@]}" | cut -d: -f1 | sort -u | xargs))" >&2
    exit 2
  fi
done

missing=()
for p in "${wanted[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [[ "$status" == installed ]] || missing+=("$p")
done

if [[ ${#missing[@]} == 0 ]]; then
  echo "install-deps: all build dependencies present (groups: ${groups[*]})"
  exit 0
fi

cmd="apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
if [[ $(id -u) != 0 ]]; then
  echo "install-deps: missing packages: ${missing[*]}" >&2
  echo "install-deps: not root; run as root:  $cmd" >&2
  exit 1
fi

echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends "${missing[@]}"
echo "install-deps: done"
