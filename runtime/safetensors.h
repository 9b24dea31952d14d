#pragma once
// safetensors files (Hugging Face's format): the weights of most published models. Layout: an 8-byte
// little-endian header length N, N bytes of JSON header, then the data section. The header maps each
// tensor name to {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]} (offsets into the data
// section) plus an optional "__metadata__": {string: string}. Row-major, little-endian; the tensors cover
// the data section exactly, without holes or overlaps. Dtypes: BOOL, U8, I8, I16, U16, F16, BF16, I32,
// U32, F32, F64, I64, U64 (sluice's types; the format's F8_* and the like are rejected as unknown).
//
// Failures are ValueError "[safe_load] FILE: ..." naming the field and the values that are wrong: a file
// shorter than 8 bytes, a header length past the file's end or over 100 MB, a header that is not a JSON
// object, an entry without dtype/shape/data_offsets or with a wrong type, an unknown dtype, a negative or
// overflowing shape, offsets outside the data section or reversed, a byte length that is not numel *
// itemsize, overlapping tensors, holes, duplicate names. No input crashes, hangs or loads wrong values
// (tests/fuzz/safetensors.cpp). A file truncated by another process while it is mapped raises SIGBUS, as
// with any mapped file.
//
// Threading: the calls share no state; several may run at once on different files.
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>

#include "runtime/tensor.h"

namespace sluice {

struct SafetensorsEntry {
  DType dtype;
  Shape shape;
  uint64_t begin = 0, end = 0;  // byte offsets into the data section, [begin, end)
};
struct SafetensorsHeader {
  std::map<std::string, SafetensorsEntry> tensors;
  std::map<std::string, std::string> metadata;  // "__metadata__", empty when the file has none
  uint64_t data_start = 0;                      // 8 + N: the data section's offset in the file
};

// Parses and checks the header of a whole file's bytes (`file`, header and data section): on return every
// entry lies inside the data section, holds numel * itemsize bytes, and the entries tile the data section.
// `name` labels messages; `fn` is the function they name in brackets.
SafetensorsHeader parse_safetensors_header(std::span<const std::byte> file, const std::string& name,
                                           const char* fn = "safe_load");

// The tensors of a file, on `device`, each a new buffer holding its bytes. The file is memory-mapped
// (read-only) and the mapping released before returning. The tensors are not built over the mapped bytes:
// a HostBuffer owns its bytes as a vector (runtime/buffer.h), so each tensor's bytes are copied once from
// the mapping (BOOL bytes as 0 or 1), and loading reads the whole data section.
std::map<std::string, Tensor> safe_load(const std::filesystem::path& path,
                                        const std::string& device = default_device());
// The file's "__metadata__" (empty when it has none). The header is checked as safe_load checks it, but
// only the header's pages of the mapping are read.
std::map<std::string, std::string> safe_load_metadata(const std::filesystem::path& path);

// Realizes and reads each tensor and writes them to `path`: header keys sorted ("__metadata__" first, as
// the reference implementation writes it), the header padded with spaces to a multiple of 8 bytes, the data
// ordered by itemsize then name so every tensor is aligned to its itemsize in the file. Writes a temporary
// file in the same folder and renames it over `path` only once it is complete and synced, so a failure
// (a tensor that cannot be realized, a full disk) leaves an existing file as it was. Throws ValueError for
// a tensor named "__metadata__", a name or metadata string that is not UTF-8, or a failed write;
// DTypeError for a dtype the format lacks; and what realizing a tensor throws.
void safe_save(const std::map<std::string, Tensor>& tensors, const std::filesystem::path& path,
               const std::map<std::string, std::string>& metadata = {});

}  // namespace sluice
