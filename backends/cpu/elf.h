#pragma once
// Loading an ELF64 x86-64 relocatable object (what `clang -c -fPIC` writes) straight into executable
// memory, in place of a linker and dlopen: the link step and the loader's file round trip cost more than
// the compile of a small kernel (DESIGN.md §4).
//
// What load does
// - maps every allocated section (SHF_ALLOC: .text, .rodata*, .data, .bss, .eh_frame, ...) into one
//   anonymous mapping: executable sections first, then the rest, each group page-aligned;
// - resolves undefined symbols in the process (dlsym: libm's exp2f, libc's memcpy, ...);
// - applies the RELA relocations of those sections. Supported: R_X86_64_NONE, 64, PC32, PLT32, PC64,
//   GOTPCREL, GOTPCRELX, REX_GOTPCRELX, 32, 32S. A PLT32 call that cannot reach its target (a library
//   function more than 2 GiB away) goes through a jump stub; GOT relocations get a slot in the image;
// - protects the executable part read+execute and the rest read+write.
// Sections that are not allocated (debug info, symbol tables, .note.GNU-stack, .llvm_addrsig) are ignored.
//
// Failure: hcq::Error `[load_program] <what>: ...` naming what is malformed or unsupported: a truncated
// file, a wrong class/machine/type, an unsupported relocation (its type name and number, the symbol and the
// section), a relocation out of range, an undefined symbol the process does not provide.
//
// Ownership and threading: an Image owns its mapping and unmaps it when destroyed; a caller keeps it
// alive while any of its code may run. load is thread-safe; an Image is immutable after load.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

namespace sluice::cpu {

class Image {
 public:
  // `what` names the object in errors (the kernel being loaded).
  static std::shared_ptr<const Image> load(std::span<const uint8_t> object, std::string_view what);
  ~Image();
  Image(const Image&) = delete;
  Image& operator=(const Image&) = delete;

  // The address of a global or weak symbol the object defines; nullptr if it defines none by that name.
  void* symbol(const std::string& name) const;
  size_t mapped_bytes() const { return size_; }

 private:
  Image() = default;
  uint8_t* base_ = nullptr;
  size_t size_ = 0;
  std::unordered_map<std::string, void*> symbols_;
};

}  // namespace sluice::cpu
