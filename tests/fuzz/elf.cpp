// Fuzz target: the CPU device's ELF loader (backends/cpu/elf.h), which maps relocatable objects into
// executable memory. Its seeds are objects the CPU compiler makes from kernels that need each kind of
// relocation (calls into libm, constants in .rodata, a writable table, a function pointer in .data).
// Nothing it loads is run.
#include <span>

#include "backends/cpu/compiler.h"
#include "backends/cpu/elf.h"
#include "tests/fuzz/fuzz.h"

namespace sluice::fuzz {

std::vector<Bytes> seeds() {
  static const char* kSources[] = {
      // exp2f: an undefined symbol resolved in the process (PLT32, maybe a jump stub)
      "#include <math.h>\n"
      "void k(void* const* b, const int* v, const unsigned* l, int c, int n) {\n"
      "  float* o = (float*)b[0]; for (int i = 0; i < v[0]; ++i) o[i] = exp2f(o[i]); }\n",
      // a lookup table in .rodata and a static counter in .bss (PC32 / GOTPCREL)
      "static const float lut[8] = {1, 2, 3, 4, 5, 6, 7, 8}; static int calls;\n"
      "void k(void* const* b, const int* v, const unsigned* l, int c, int n) {\n"
      "  float* o = (float*)b[0]; ++calls; for (int i = 0; i < v[0]; ++i) o[i] = lut[i & 7] + calls; }\n",
      // a function pointer in .data (R_X86_64_64) and memcpy from libc
      "#include <string.h>\n"
      "static void twice(float* o, int n) { for (int i = 0; i < n; ++i) o[i] *= 2; }\n"
      "static void (*fn)(float*, int) = twice;\n"
      "void k(void* const* b, const int* v, const unsigned* l, int c, int n) {\n"
      "  memcpy(b[0], b[1], (unsigned long)v[0] * 4); fn((float*)b[0], v[0]); }\n",
  };
  auto compiler = cpu::make_compiler();
  std::vector<Bytes> out;
  for (const char* src : kSources) out.push_back(compiler->compile(src));
  return out;
}

}  // namespace sluice::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return sluice::fuzz::reject_errors([&] {
    auto image = sluice::cpu::Image::load(std::span(data, size), "fuzz");
    (void)image->symbol("k");
  });
}
