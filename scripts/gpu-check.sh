#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: build what the CUDA checks need, run the conformance (cts), ops, BEAM and
# training (nn, gradients and optimizers against PyTorch, a short Fashion-MNIST run) suites on CUDA, then
# cuda_bench, and print pass counts and figures (issue #7).
#
#   scripts/gpu-check.sh            # build dir build/gpu-check
#   SLUICE_JOBS=n BUILD=dir scripts/gpu-check.sh
#
# Needs CMake >= 3.25, Ninja, a C++20 compiler, GoogleTest and the NVIDIA driver (spdlog where present);
# NVRTC is found in $CUDA_PATH or /usr/local/cuda. Works offline and installs nothing: Vulkan/OpenCL headers are optional
# (those backends build as absent), CLI11 and nlohmann-json are only needed by the command-line tool,
# which is not built here (empty stand-in packages satisfy the configure step when they are missing),
# and without Google Benchmark the suites still run and cuda_bench is reported as not built.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD=${BUILD:-build/gpu-check}
JOBS=${SLUICE_JOBS:-16}

die() {
  echo "gpu-check: $*" >&2
  exit 1
}
command -v cmake > /dev/null || die "cmake not found"
command -v ninja > /dev/null || die "ninja not found"

mkdir -p "$BUILD"
probe="$BUILD/probe"
mkdir -p "$probe"
# Which packages CMake can find, without failing the real configure on the first missing one.
cat > "$probe/CMakeLists.txt" << 'EOF'
cmake_minimum_required(VERSION 3.25)
project(probe LANGUAGES CXX)
foreach(p GTest spdlog benchmark CLI11 nlohmann_json ONNX)
  find_package(${p} QUIET)
  if(${p}_FOUND)
    message(STATUS "FOUND ${p}")
  endif()
endforeach()
EOF
found=$(cmake -S "$probe" -B "$probe/build" -G Ninja 2> /dev/null | sed -n 's/^-- FOUND //p' || true)
has() { grep -qx "$1" <<< "$found"; }

has GTest || die "GoogleTest is not installed (find_package(GTest) failed): the cts and ops suites need it.
  Debian/Ubuntu: apt-get install libgtest-dev; or give CMAKE_ARGS=-DGTest_DIR=<dir with GTestConfig.cmake>."
spdlog=ON
if ! has spdlog; then
  echo "gpu-check: spdlog not installed: the library logs without it (SLUICE_SPDLOG=OFF)"
  spdlog=OFF
fi

# Empty stand-ins for the packages of what the checks do not build (the command-line tool, the ONNX
# importer and the models): configure succeeds, and those targets are not built.
stubs="$BUILD/stub-packages"
mkdir -p "$stubs"
for p in CLI11 nlohmann_json ONNX; do
  if ! has "$p"; then
    echo "gpu-check: $p not installed: the targets that need it are skipped"
    case $p in
      CLI11) target=CLI11::CLI11 ;;
      nlohmann_json) target=nlohmann_json::nlohmann_json ;;
      ONNX) target=onnx_proto ;;
    esac
    mkdir -p "$stubs/lib/cmake/$p"
    cat > "$stubs/lib/cmake/$p/${p}Config.cmake" << EOF
# Stand-in written by scripts/gpu-check.sh: lets the project configure without $p.
if(NOT TARGET $target)
  add_library($target INTERFACE IMPORTED)
endif()
EOF
  fi
done

bench=ON
if ! has benchmark; then
  echo "gpu-check: Google Benchmark not installed: cuda_bench is not built"
  bench=OFF
fi

# shellcheck disable=SC2086 # CMAKE_ARGS is a list of arguments
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSLUICE_BUILD_BENCH=$bench -DSLUICE_SPDLOG=$spdlog \
  -DCMAKE_PREFIX_PATH="$PWD/$stubs" ${CMAKE_ARGS:-} > "$BUILD/configure.log" 2>&1 ||
  {
    tail -30 "$BUILD/configure.log"
    die "configure failed (log: $BUILD/configure.log)"
  }
targets=(cts_tests ops_tests cuda_driver_tests nn_tests mnist_tests beam_tests)
# Training (gradients and optimizers against PyTorch's tables) reads its tables with nlohmann-json.
has nlohmann_json && targets+=(gradient_tests optim_tests)
[ "$bench" = ON ] && targets+=(cuda_bench beam_bench)
ninja -C "$BUILD" -j "$JOBS" "${targets[@]}" || die "build failed"

status=0
summary=()
# Runs a GoogleTest binary with a filter; prints its failures and skips, records a pass-count line.
suite() {
  local name=$1 bin=$2 filter=$3 log="$BUILD/$1.log"
  echo "=== $name ($filter)"
  "$bin" --gtest_filter="$filter" --gtest_color=no > "$log" 2>&1 || status=1
  grep -E '^\[  (FAILED|SKIPPED) ' "$log" | sort -u | head -60 || true
  local passed failed skipped
  passed=$(grep -c '^\[       OK \]' "$log" || true)
  failed=$(grep -cE '^\[  FAILED  \] .*\([0-9]+ ms\)' "$log" || true)
  skipped=$(grep -c '^\[  SKIPPED \]' "$log" || true)
  summary+=("$name: $passed passed, $failed failed, $skipped skipped (log: $log)")
}

"$BUILD/tests/unit/cuda_driver_tests" > "$BUILD/cuda_driver_tests.log" 2>&1 || status=1
suite cts "$BUILD/tests/cts/cts_tests" '*/CUDA'
suite ops "$BUILD/tests/ops/ops_tests" '*CUDA*'
suite nn "$BUILD/tests/ops/nn_tests" '*CUDA*'
# BEAM search on the GPU (work-groups and shared-memory reductions among the candidates); its choices.
SLUICE_DEBUG=1 suite beam "$BUILD/tests/ops/beam_tests" '*CUDA*'
grep -hoE '\[beam\] [^:]+: .* us \(heuristic .*' "$BUILD/beam.log" || true
# A short Fashion-MNIST run; it skips unless Debian's dataset-fashion-mnist files are in place.
suite mnist "$BUILD/tests/models/mnist_tests" '*CUDA*'
if has nlohmann_json; then
  suite gradient "$BUILD/tests/ops/gradient_tests" 'gradient_vs_torch.*/CUDA'
  suite optim "$BUILD/tests/ops/optim_tests" '*CUDA*'
fi
# Why CUDA was skipped, if it was: the suites name the reason.
grep -m1 -E 'CUDA is absent' "$BUILD/cts.log" || true

if [ "$bench" = ON ]; then
  echo "=== cuda_bench (medians of 5 repetitions)"
  "$BUILD/tools/bench/cuda_bench" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
    --benchmark_out="$BUILD/cuda_bench.json" --benchmark_out_format=json 2>&1 |
    grep -E 'median|ERROR|^Benchmark' || true
  echo "(json: $BUILD/cuda_bench.json)"
  echo "=== beam_bench (BEAM width 2, 3 s per kernel, against the heuristic; device time of the kernels)"
  "$BUILD/tools/bench/beam_bench" CUDA 2 3 2>&1 | tee "$BUILD/beam_bench.log" | grep -v '^\[' || status=1
fi

echo "=== summary"
echo "cuda_driver_tests: $(tail -1 "$BUILD/cuda_driver_tests.log")"
printf '%s\n' "${summary[@]}"
exit $status
