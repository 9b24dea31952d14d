#pragma once
// The CPU dialect of C: one function per kernel in the ABI of backends/cpu/program.h, walking its core's
// share of the flattened grid: the last launch dimension fastest, except in kernels with loops over two or
// more dimensions, where the next-to-last is (a matmul walks down the rows of one column tile, keeping the
// right operand's panel in cache); the ids are decoded once and then counted up, with no division per
// work-group. Vectors are clang's ext_vector_type, unaligned, of any width (a float16 is one AVX-512
// register), with lanes by subscript. Only compiler builtins, no headers, so kernels of a batch concatenate
// into one translation unit (hcq::Compiler::compile_many). half and bfloat16 are emulated (cstyle.h: 16-bit
// storage, float values rounded after every op), since not every clang's C has _Float16 on every CPU.
#include <memory>

#include "renderers/cstyle.h"

namespace sluice::render {

std::unique_ptr<CStyleRenderer> make_cpu_renderer();

}  // namespace sluice::render
