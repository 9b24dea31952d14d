#include "backends/cpu/elf.h"

#include <dlfcn.h>
#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <vector>

#include "hcq/error.h"

// Every failure names the object being loaded.
#define LOAD_FAIL SLUICE_FAIL(hcq::Error, "load_program") << what << ": "

namespace sluice::cpu {
namespace {

const char* reloc_name(uint32_t type) {
  switch (type) {
    case R_X86_64_NONE: return "R_X86_64_NONE";
    case R_X86_64_64: return "R_X86_64_64";
    case R_X86_64_PC32: return "R_X86_64_PC32";
    case R_X86_64_GOT32: return "R_X86_64_GOT32";
    case R_X86_64_PLT32: return "R_X86_64_PLT32";
    case R_X86_64_GOTPCREL: return "R_X86_64_GOTPCREL";
    case R_X86_64_32: return "R_X86_64_32";
    case R_X86_64_32S: return "R_X86_64_32S";
    case R_X86_64_16: return "R_X86_64_16";
    case R_X86_64_PC16: return "R_X86_64_PC16";
    case R_X86_64_8: return "R_X86_64_8";
    case R_X86_64_PC8: return "R_X86_64_PC8";
    case R_X86_64_DTPMOD64: return "R_X86_64_DTPMOD64";
    case R_X86_64_DTPOFF64: return "R_X86_64_DTPOFF64";
    case R_X86_64_TPOFF64: return "R_X86_64_TPOFF64";
    case R_X86_64_TLSGD: return "R_X86_64_TLSGD";
    case R_X86_64_TLSLD: return "R_X86_64_TLSLD";
    case R_X86_64_DTPOFF32: return "R_X86_64_DTPOFF32";
    case R_X86_64_GOTTPOFF: return "R_X86_64_GOTTPOFF";
    case R_X86_64_TPOFF32: return "R_X86_64_TPOFF32";
    case R_X86_64_PC64: return "R_X86_64_PC64";
    case R_X86_64_GOTOFF64: return "R_X86_64_GOTOFF64";
    case R_X86_64_GOTPC32: return "R_X86_64_GOTPC32";
    case R_X86_64_SIZE32: return "R_X86_64_SIZE32";
    case R_X86_64_SIZE64: return "R_X86_64_SIZE64";
    case R_X86_64_GOTPCRELX: return "R_X86_64_GOTPCRELX";
    case R_X86_64_REX_GOTPCRELX: return "R_X86_64_REX_GOTPCRELX";
    default: return "an unknown relocation";
  }
}

bool is_got(uint32_t t) {
  return t == R_X86_64_GOTPCREL || t == R_X86_64_GOTPCRELX || t == R_X86_64_REX_GOTPCRELX;
}

// Undefined symbols come from the process: libc and libm are there in every sluice program, but libm
// may be linked only into a library loaded with RTLD_LOCAL, so it is asked by name as well.
void* process_symbol(const char* name) {
  if (void* p = ::dlsym(RTLD_DEFAULT, name)) return p;
  static void* libm = ::dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
  return libm ? ::dlsym(libm, name) : nullptr;
}

size_t align_up(size_t x, size_t a) { return a > 1 ? (x + a - 1) / a * a : x; }

// Reads of the input: every offset and size comes from the file, so each is checked against its size.
struct Reader {
  std::span<const uint8_t> file;
  std::string_view what;

  template <class T>
  T at(uint64_t off) const {
    if (off > file.size() || file.size() - off < sizeof(T))
      SLUICE_FAIL(hcq::Error, "load_program")
          << what << ": object truncated (" << sizeof(T) << " bytes at offset " << off << ", file has "
          << file.size() << ")";
    T v;
    std::memcpy(&v, file.data() + off, sizeof(T));
    return v;
  }
  void check_range(uint64_t off, uint64_t size, const char* name) const {
    if (off > file.size() || file.size() - off < size)
      SLUICE_FAIL(hcq::Error, "load_program")
          << what << ": object truncated: " << name << " (" << size << " bytes at offset " << off
          << ") is past its end (" << file.size() << " bytes)";
  }
};

}  // namespace

Image::~Image() {
  if (base_) ::munmap(base_, size_);
}

void* Image::symbol(const std::string& name) const {
  auto it = symbols_.find(name);
  return it == symbols_.end() ? nullptr : it->second;
}

std::shared_ptr<const Image> Image::load(std::span<const uint8_t> object, std::string_view what) {
  const Reader in{object, what};
  const auto eh = in.at<Elf64_Ehdr>(0);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) LOAD_FAIL << "not an ELF object";
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != EM_X86_64)
    LOAD_FAIL << "not a little-endian ELF64 x86-64 object (class " << int(eh.e_ident[EI_CLASS])
              << ", machine " << eh.e_machine << ")";
  if (eh.e_type != ET_REL)
    LOAD_FAIL << "not a relocatable object (ELF type " << eh.e_type << ", want ET_REL)";
  if (eh.e_shentsize != sizeof(Elf64_Shdr)) LOAD_FAIL << "section header size " << eh.e_shentsize;
  in.check_range(eh.e_shoff, uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr), "the section headers");
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  for (size_t i = 0; i < sh.size(); ++i) {
    sh[i] = in.at<Elf64_Shdr>(eh.e_shoff + i * sizeof(Elf64_Shdr));
    if (sh[i].sh_type != SHT_NOBITS) in.check_range(sh[i].sh_offset, sh[i].sh_size, "a section");
  }
  auto str = [&](const Elf64_Shdr& tab, uint64_t off) -> std::string {
    if (tab.sh_type != SHT_STRTAB) LOAD_FAIL << "a string table of section type " << tab.sh_type;
    if (off >= tab.sh_size) LOAD_FAIL << "string offset " << off << " outside its table";
    const char* s = reinterpret_cast<const char*>(object.data() + tab.sh_offset + off);
    return std::string(s, strnlen(s, tab.sh_size - off));
  };
  auto section_name = [&](size_t i) {
    return eh.e_shstrndx < sh.size() ? str(sh[eh.e_shstrndx], sh[i].sh_name) : std::to_string(i);
  };

  // The symbol table (one per relocatable object).
  const Elf64_Shdr* symtab = nullptr;
  for (const Elf64_Shdr& s : sh)
    if (s.sh_type == SHT_SYMTAB) symtab = &s;
  if (!symtab) LOAD_FAIL << "no symbol table";
  if (symtab->sh_link >= sh.size() || symtab->sh_entsize != sizeof(Elf64_Sym))
    LOAD_FAIL << "malformed symbol table";
  const Elf64_Shdr& strtab = sh[symtab->sh_link];
  const size_t nsyms = symtab->sh_size / sizeof(Elf64_Sym);
  auto sym = [&](uint64_t i) {
    if (i >= nsyms) LOAD_FAIL << "symbol index " << i << " out of range (" << nsyms << " symbols)";
    return in.at<Elf64_Sym>(symtab->sh_offset + i * sizeof(Elf64_Sym));
  };

  // Which symbols need a GOT slot (GOT relocations) or a jump stub (PLT32 to an undefined function).
  std::map<uint64_t, size_t> got, stub;
  for (const Elf64_Shdr& r : sh) {
    if (r.sh_type == SHT_REL) LOAD_FAIL << "REL relocations (without addend) are not supported on x86-64";
    if (r.sh_type != SHT_RELA || r.sh_info >= sh.size() || !(sh[r.sh_info].sh_flags & SHF_ALLOC)) continue;
    for (uint64_t off = 0; off + sizeof(Elf64_Rela) <= r.sh_size; off += sizeof(Elf64_Rela)) {
      const auto rel = in.at<Elf64_Rela>(r.sh_offset + off);
      const uint32_t type = ELF64_R_TYPE(rel.r_info), si = ELF64_R_SYM(rel.r_info);
      if (is_got(type)) got.try_emplace(si, got.size());
      if (type == R_X86_64_PLT32 && si != 0 && sym(si).st_shndx == SHN_UNDEF)
        stub.try_emplace(si, stub.size());
    }
  }

  // Layout: executable sections and the stubs, then (page-aligned) every other allocated section and the
  // GOT, so one mprotect makes the first part read+execute.
  constexpr size_t kStub = 16;  // jmp *0(%rip); .quad target; padding
  const size_t page = size_t(::sysconf(_SC_PAGESIZE));
  std::vector<size_t> where(sh.size(), SIZE_MAX);
  size_t size = 0, stub_at = 0, exec_size = 0;
  for (int exec = 1; exec >= 0; --exec) {
    for (size_t i = 0; i < sh.size(); ++i) {
      const Elf64_Shdr& s = sh[i];
      if (!(s.sh_flags & SHF_ALLOC) || bool(s.sh_flags & SHF_EXECINSTR) != bool(exec)) continue;
      if (s.sh_flags & SHF_TLS)
        LOAD_FAIL << "thread-local section " << section_name(i) << " is not supported";
      if (s.sh_size > (size_t(1) << 30))  // kernels are small; this also keeps the layout from overflowing
        LOAD_FAIL << "section " << section_name(i) << " is " << s.sh_size << " bytes";
      if (s.sh_addralign > page)
        LOAD_FAIL << "section " << section_name(i) << " wants " << s.sh_addralign << "-byte alignment";
      size = align_up(size, s.sh_addralign);
      where[i] = size;
      size += s.sh_size;
    }
    if (exec) {
      stub_at = align_up(size, kStub);
      exec_size = size = align_up(stub_at + stub.size() * kStub, page);
    }
  }
  const size_t got_at = align_up(size, 8);
  size = std::max(align_up(got_at + got.size() * 8, page), page);

  std::shared_ptr<Image> img(new Image());
  void* m = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) LOAD_FAIL << "mmap of " << size << " bytes failed: " << std::strerror(errno);
  img->base_ = static_cast<uint8_t*>(m);
  img->size_ = size;
  uint8_t* base = img->base_;
  for (size_t i = 0; i < sh.size(); ++i)
    if (where[i] != SIZE_MAX && sh[i].sh_type != SHT_NOBITS)
      std::memcpy(base + where[i], object.data() + sh[i].sh_offset, sh[i].sh_size);  // NOBITS: mmap zeroed it

  std::map<uint64_t, uint64_t> external;  // one dlsym per symbol, not per call site
  auto address = [&](uint64_t si) -> uint64_t {
    if (si == 0) return 0;  // no symbol: the addend alone
    const Elf64_Sym s = sym(si);
    if (s.st_shndx == SHN_UNDEF) {
      if (auto e = external.find(si); e != external.end()) return e->second;
      const std::string name = str(strtab, s.st_name);
      void* p = name.empty() ? nullptr : process_symbol(name.c_str());
      if (!p && ELF64_ST_BIND(s.st_info) != STB_WEAK)
        LOAD_FAIL << "undefined symbol '" << name << "' is not in the process";
      return external[si] = reinterpret_cast<uint64_t>(p);
    }
    if (s.st_shndx == SHN_ABS) return s.st_value;
    if (s.st_shndx == SHN_COMMON)
      LOAD_FAIL << "common symbol '" << str(strtab, s.st_name) << "' (compile with -fno-common)";
    if (s.st_shndx >= sh.size() || where[s.st_shndx] == SIZE_MAX)
      LOAD_FAIL << "symbol '" << str(strtab, s.st_name) << "' is in section " << s.st_shndx
                << ", which is not loaded";
    return reinterpret_cast<uint64_t>(base + where[s.st_shndx]) + s.st_value;
  };
  for (auto [si, slot] : got) {
    const uint64_t a = address(si);
    std::memcpy(base + got_at + 8 * slot, &a, 8);
  }
  for (auto [si, slot] : stub) {
    uint8_t* p = base + stub_at + kStub * slot;
    const uint8_t jmp[6] = {0xff, 0x25, 0, 0, 0, 0};  // jmp *0(%rip): the address follows
    const uint64_t a = address(si);
    std::memcpy(p, jmp, 6);
    std::memcpy(p + 6, &a, 8);
  }

  for (const Elf64_Shdr& r : sh) {
    if (r.sh_type != SHT_RELA || r.sh_info >= sh.size() || where[r.sh_info] == SIZE_MAX) continue;
    const Elf64_Shdr& target = sh[r.sh_info];
    for (uint64_t off = 0; off + sizeof(Elf64_Rela) <= r.sh_size; off += sizeof(Elf64_Rela)) {
      const auto rel = in.at<Elf64_Rela>(r.sh_offset + off);
      const uint32_t type = ELF64_R_TYPE(rel.r_info), si = ELF64_R_SYM(rel.r_info);
      if (type == R_X86_64_NONE) continue;
      auto describe = [&]() -> std::string {
        const std::string name = si ? str(strtab, sym(si).st_name) : "";
        return std::string(reloc_name(type)) + " (type " + std::to_string(type) + ") against symbol '" +
               (name.empty() && si ? "section " + std::to_string(sym(si).st_shndx) : name) + "' in section " +
               section_name(r.sh_info) + " at offset " + std::to_string(rel.r_offset);
      };
      const size_t width = (type == R_X86_64_64 || type == R_X86_64_PC64) ? 8 : 4;
      if (rel.r_offset > target.sh_size || target.sh_size - rel.r_offset < width)
        LOAD_FAIL << "relocation " << describe() << " is outside its section";
      uint8_t* place = base + where[r.sh_info] + rel.r_offset;
      const uint64_t P = reinterpret_cast<uint64_t>(place);
      int64_t value = 0;
      auto put32 = [&](int64_t v, bool is_signed) {
        const bool fits =
            is_signed ? (v >= INT32_MIN && v <= INT32_MAX) : (v >= 0 && v <= int64_t(UINT32_MAX));
        if (!fits) LOAD_FAIL << "relocation " << describe() << " does not fit in 32 bits (value " << v << ")";
        const uint32_t u = uint32_t(v);
        std::memcpy(place, &u, 4);
      };
      switch (type) {
        case R_X86_64_64:
          value = int64_t(address(si) + rel.r_addend);
          std::memcpy(place, &value, 8);
          break;
        case R_X86_64_PC64:
          value = int64_t(address(si) + rel.r_addend - P);
          std::memcpy(place, &value, 8);
          break;
        case R_X86_64_PC32:
        case R_X86_64_PLT32: {
          value = int64_t(address(si) + rel.r_addend - P);
          if (type == R_X86_64_PLT32 && (value < INT32_MIN || value > INT32_MAX) && stub.count(si))
            value =
                int64_t(reinterpret_cast<uint64_t>(base + stub_at + kStub * stub.at(si)) + rel.r_addend - P);
          put32(value, true);
          break;
        }
        case R_X86_64_GOTPCREL:
        case R_X86_64_GOTPCRELX:
        case R_X86_64_REX_GOTPCRELX:
          put32(int64_t(reinterpret_cast<uint64_t>(base + got_at + 8 * got.at(si)) + rel.r_addend - P), true);
          break;
        case R_X86_64_32: put32(int64_t(address(si) + rel.r_addend), false); break;
        case R_X86_64_32S: put32(int64_t(address(si) + rel.r_addend), true); break;
        default: LOAD_FAIL << "unsupported relocation " << describe();
      }
    }
  }

  for (uint64_t i = 1; i < nsyms; ++i) {
    const Elf64_Sym s = sym(i);
    const int bind = ELF64_ST_BIND(s.st_info);
    if ((bind != STB_GLOBAL && bind != STB_WEAK) || s.st_shndx == SHN_UNDEF) continue;
    img->symbols_.emplace(str(strtab, s.st_name), reinterpret_cast<void*>(address(i)));
  }

  if (exec_size && ::mprotect(base, exec_size, PROT_READ | PROT_EXEC) != 0)
    LOAD_FAIL << "mprotect of the code failed: " << std::strerror(errno);
  return img;
}

}  // namespace sluice::cpu

#undef LOAD_FAIL
