#pragma once
// The in-process clang: the CPU compiler (backends/cpu/compiler.h) compiles with clang's own library
// instead of a clang process per translation unit. Starting clang costs ~100-140 ms on a small virtual
// machine (relocating LLVM, faulting its pages in), more than compiling a unit of kernels; the library
// pays a fraction of that once per process, and units compile on threads of this process.
//
// The library is a module of its own (clang_plugin.cpp, with clang's and LLVM's static archives linked
// in: backends/CMakeLists.txt), dlopen'ed on the first compile, so a process that finds every kernel
// cached never loads LLVM.
//
// Semantics
// - find(): the module this build made, or nullptr when there is none (not built, or its file is gone).
// - identity(): what a cache key needs, without loading anything: the module's file (resolved path, size,
//   modification time), which holds clang and LLVM.
// - compile(flags, sources): the sources as one C translation unit compiled with clang's command-line
//   flags, the object in memory. Loads the module on first use (once per process).
//   Failures: CompileError with clang's diagnostics when the source does not compile; LoadError when the
//   module cannot be loaded (the caller then runs a clang process instead).
// - version(): clang's version and where it runs from, for people; loads the module.
// Threading: every member is thread-safe; compiles run concurrently, each in its own compiler instance.
// Limits: an in-process compile has no timeout (SLUICE_COMPILE_TIMEOUT bounds a clang process only), and
// what would end a clang process (an LLVM fatal error, a crash in clang) ends this one: $SLUICE_CLANG=clang
// keeps the compiler out of the process.
#include <cstddef>

// The module's C interface (dlsym'ed by name): each sink receives bytes once, when the compile ends.
extern "C" {
typedef void (*sluice_clang_sink)(void* ctx, const char* data, size_t size);
// Compiles `source` with `flags` (clang's command line without the program, input and output); returns 0
// and calls `object` with the object file, or nonzero; `diagnostics` gets clang's messages either way.
typedef int (*sluice_clang_compile_fn)(const char* const* flags, int n_flags, const char* source, size_t size,
                                       void* ctx, sluice_clang_sink object, sluice_clang_sink diagnostics);
typedef const char* (*sluice_clang_version_fn)();
}

#ifndef SLUICE_CLANG_PLUGIN  // what follows is libsluice's side
#include <mutex>
#include <span>
#include <string>
#include <string_view>

#include "hcq/compiler.h"
#include "hcq/error.h"

namespace sluice::cpu {

class ClangLibrary {
 public:
  struct LoadError : hcq::CompileError {
    using hcq::CompileError::CompileError;
  };

  static ClangLibrary* find();
  explicit ClangLibrary(std::string module);  // find() is the one this build made; tests name another file

  const std::string& identity() const { return identity_; }
  std::string version();
  hcq::Binary compile(std::span<const std::string> flags, std::span<const std::string_view> sources);

 private:
  void load();  // throws LoadError

  std::string path_, identity_;
  std::once_flag loaded_;
  sluice_clang_compile_fn compile_ = nullptr;
  sluice_clang_version_fn version_ = nullptr;
  std::string load_error_;
};

}  // namespace sluice::cpu
#endif
