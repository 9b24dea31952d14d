#include "runtime/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>
#include <tuple>
#include <vector>

#include "base/error.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/realize.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Code {
  const char* name;
  DType dtype;
};
const Code kCodes[] = {{"BOOL", dtypes::bool_},    {"U8", dtypes::uint8},    {"I8", dtypes::int8},
                       {"I16", dtypes::int16},     {"U16", dtypes::uint16},  {"F16", dtypes::float16},
                       {"BF16", dtypes::bfloat16}, {"I32", dtypes::int32},   {"U32", dtypes::uint32},
                       {"F32", dtypes::float32},   {"F64", dtypes::float64}, {"I64", dtypes::int64},
                       {"U64", dtypes::uint64}};
const char* const kCodeList = "BOOL, U8, I8, I16, U16, F16, BF16, I32, U32, F32, F64, I64, U64";

// The reference implementation's limit: a larger header is a hostile or broken file, and parsing it
// would hold hundreds of megabytes of JSON.
constexpr uint64_t kMaxHeader = 100'000'000;
// No valid header nests deeper than 3 (file, entry, shape); the limit only keeps a "[[[[..." header from
// growing the parser's stacks with its length.
constexpr int kMaxDepth = 64;

// A JSON value for a message, quoted and escaped, cut short so a hostile header cannot flood the message.
std::string show(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}
std::string quoted(const std::string& s) { return show(json(s)); }
// The JSON parser's message quotes the token it stopped at, raw: cut it short and mask bytes that are not
// printable ASCII, so a message stays one short, valid line.
std::string printable(std::string s) {
  if (s.size() > 200) s = s.substr(0, 197) + "...";
  for (char& c : s)
    if (uint8_t(c) < 0x20 || uint8_t(c) >= 0x7f) c = '?';
  return s;
}
// Thrown by the parser callback to end a parse that nests too deep.
struct TooDeep {};

// The read-only mapping of a whole file, unmapped when it goes.
class Mapping {
 public:
  Mapping(const fs::path& path, const char* fn) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    SLUICE_CHECK_IN(ValueError, fn, fd >= 0)
        << path.string() << ": cannot be opened: " << std::strerror(errno);
    struct stat st = {};
    const bool stat_ok = ::fstat(fd, &st) == 0;
    const int stat_errno = errno;
    if (stat_ok && S_ISREG(st.st_mode) && st.st_size > 0) {
      size_ = size_t(st.st_size);
      void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      data_ = p == MAP_FAILED ? nullptr : static_cast<const std::byte*>(p);
    }
    const int map_errno = errno;
    ::close(fd);  // the mapping holds the file; the descriptor is no longer needed
    SLUICE_CHECK_IN(ValueError, fn, stat_ok)
        << path.string() << ": cannot be read: " << std::strerror(stat_errno);
    SLUICE_CHECK_IN(ValueError, fn, S_ISREG(st.st_mode)) << path.string() << ": not a regular file";
    SLUICE_CHECK_IN(ValueError, fn, size_ == 0 || data_)
        << path.string() << ": cannot be mapped: " << std::strerror(map_errno);
  }
  ~Mapping() {
    if (data_) ::munmap(const_cast<std::byte*>(data_), size_);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  std::span<const std::byte> bytes() const { return {data_, size_}; }

 private:
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

// Checks one tensor entry and returns it; `data_size` is the data section's length.
SafetensorsEntry parse_entry(const std::string& tname, const json& e, uint64_t data_size,
                             const std::string& file, const char* fn) {
  const std::string where = file + ": tensor " + quoted(tname);
  SLUICE_CHECK_IN(ValueError, fn, e.is_object()) << where << ": entry is " << show(e) << ", not an object";
  for (const char* field : {"dtype", "shape", "data_offsets"})
    SLUICE_CHECK_IN(ValueError, fn, e.contains(field)) << where << " has no \"" << field << "\"";
  // Fields of other names are ignored, as the reference implementation ignores them.
  const json& jd = e["dtype"];
  const json& js = e["shape"];
  const json& jo = e["data_offsets"];

  SafetensorsEntry out;
  SLUICE_CHECK_IN(ValueError, fn, jd.is_string()) << where << ": dtype " << show(jd) << " is not a string";
  const Code* code = nullptr;
  for (const Code& c : kCodes)
    if (jd.get_ref<const std::string&>() == c.name) code = &c;
  SLUICE_CHECK_IN(ValueError, fn, code)
      << where << ": unknown dtype " << show(jd) << " (sluice reads " << kCodeList << ")";
  out.dtype = code->dtype;

  SLUICE_CHECK_IN(ValueError, fn, js.is_array()) << where << ": shape " << show(js) << " is not a list";
  // The element count is bounded by int64 as it is multiplied, so no shape can wrap around to a small
  // count that would then match the byte length.
  int64_t numel = 1;
  for (const json& d : js) {
    SLUICE_CHECK_IN(ValueError, fn, d.is_number_integer())
        << where << ": shape " << show(js) << " holds " << show(d) << ", not an integer";
    SLUICE_CHECK_IN(ValueError, fn, d.is_number_unsigned())
        << where << ": shape " << show(js) << " has a negative dimension";
    const uint64_t v = d.get<uint64_t>();
    SLUICE_CHECK_IN(ValueError, fn,
                    v <= uint64_t(std::numeric_limits<int64_t>::max()) &&
                        !__builtin_mul_overflow(numel, int64_t(v), &numel))
        << where << ": shape " << show(js) << " has more than 2^63 elements";
    out.shape.push_back(int64_t(v));
  }

  SLUICE_CHECK_IN(ValueError, fn,
                  jo.is_array() && jo.size() == 2 && jo[0].is_number_unsigned() && jo[1].is_number_unsigned())
      << where << ": data_offsets " << show(jo) << " is not a pair of non-negative integers";
  out.begin = jo[0].get<uint64_t>();
  out.end = jo[1].get<uint64_t>();
  SLUICE_CHECK_IN(ValueError, fn, out.begin <= out.end)
      << where << ": data_offsets [" << out.begin << ", " << out.end << "] begin after they end";
  SLUICE_CHECK_IN(ValueError, fn, out.end <= data_size)
      << where << ": data_offsets [" << out.begin << ", " << out.end << "] end past the data section's "
      << data_size << " bytes";
  uint64_t need = 0;
  const bool fits = !__builtin_mul_overflow(uint64_t(numel), uint64_t(out.dtype.itemsize()), &need);
  SLUICE_CHECK_IN(ValueError, fn, fits && need == out.end - out.begin)
      << where << ": shape " << show(js) << " of " << code->name << " needs "
      << (fits ? std::to_string(need) : std::string("over 2^64")) << " bytes, data_offsets [" << out.begin
      << ", " << out.end << "] hold " << out.end - out.begin;
  return out;
}

std::map<std::string, std::string> parse_metadata(const json& m, const std::string& file, const char* fn) {
  SLUICE_CHECK_IN(ValueError, fn, m.is_object())
      << file << ": __metadata__ is " << show(m) << ", not an object";
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : m.items()) {
    SLUICE_CHECK_IN(ValueError, fn, v.is_string())
        << file << ": __metadata__ " << quoted(k) << " is " << show(v) << ", not a string";
    out[k] = v.get<std::string>();
  }
  return out;
}

}  // namespace

SafetensorsHeader parse_safetensors_header(std::span<const std::byte> file, const std::string& name,
                                           const char* fn) {
  SLUICE_CHECK_IN(ValueError, fn, file.size() >= 8)
      << name << ": " << file.size()
      << " bytes, shorter than the 8-byte header length; not a safetensors file";
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t(file[size_t(i)]) << (8 * i);
  SLUICE_CHECK_IN(ValueError, fn, n <= kMaxHeader)
      << name << ": header length " << n << " is over the limit of " << kMaxHeader << " bytes";
  SLUICE_CHECK_IN(ValueError, fn, n <= file.size() - 8)
      << name << ": header length " << n << " runs past the end of the " << file.size() << "-byte file";
  const char* h = reinterpret_cast<const char*>(file.data()) + 8;

  // The DOM keeps only the last of repeated keys; the callback sees each key as it is read, so a repeated
  // tensor name (or field) is caught rather than silently dropping a tensor. One set of keys per open
  // object; the depth limit bounds how many there are.
  std::vector<std::set<std::string>> keys;
  std::string repeated;
  auto on_event = [&](int depth, json::parse_event_t ev, json& v) {
    using E = json::parse_event_t;
    if ((ev == E::object_start || ev == E::array_start) && depth >= kMaxDepth) throw TooDeep{};
    if (ev == E::object_start) keys.emplace_back();
    if (ev == E::object_end) keys.pop_back();
    if (ev == E::key && !keys.back().insert(v.get<std::string>()).second && repeated.empty())
      repeated = (depth == 1 ? "tensor name " : "key ") + quoted(v.get<std::string>());
    return true;
  };
  json root;
  try {
    root = json::parse(h, h + n, on_event);
  } catch (const json::exception& e) {
    SLUICE_FAIL(ValueError, fn) << name << ": header is not valid JSON: " << printable(e.what());
  } catch (const TooDeep&) {
    SLUICE_FAIL(ValueError, fn) << name << ": header nests deeper than " << kMaxDepth << " levels";
  }
  SLUICE_CHECK_IN(ValueError, fn, root.is_object())
      << name << ": header is " << show(root) << ", not a JSON object";
  SLUICE_CHECK_IN(ValueError, fn, repeated.empty()) << name << ": header repeats the " << repeated;

  SafetensorsHeader out;
  out.data_start = 8 + n;
  const uint64_t data_size = file.size() - out.data_start;
  for (const auto& [k, v] : root.items()) {
    if (k == "__metadata__")
      out.metadata = parse_metadata(v, name, fn);
    else
      out.tensors.emplace(k, parse_entry(k, v, data_size, name, fn));
  }

  // Tiling: in order of offsets each tensor must start where the previous one ended, and the last end
  // where the data section does. Ties sort by end so an empty tensor sits before one starting with it, then
  // by name so the message names the same pair every time.
  std::vector<std::pair<const std::string*, const SafetensorsEntry*>> order;
  for (const auto& [k, e] : out.tensors) order.emplace_back(&k, &e);
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return std::tie(a.second->begin, a.second->end, *a.first) <
           std::tie(b.second->begin, b.second->end, *b.first);
  });
  uint64_t at = 0;
  const std::string* prev = nullptr;
  for (const auto& [k, e] : order) {
    SLUICE_CHECK_IN(ValueError, fn, e->begin >= at)
        << name << ": tensor " << quoted(*k) << " at [" << e->begin << ", " << e->end << ") overlaps tensor "
        << quoted(*prev) << ", which ends at " << at;
    SLUICE_CHECK_IN(ValueError, fn, e->begin == at) << name << ": the data section has a hole at [" << at
                                                    << ", " << e->begin << ") before tensor " << quoted(*k);
    at = e->end;
    prev = k;
  }
  SLUICE_CHECK_IN(ValueError, fn, at == data_size)
      << name << ": the data section has " << data_size << " bytes, the tensors cover only [0, " << at << ")";
  return out;
}

std::map<std::string, Tensor> safe_load(const fs::path& path, const std::string& device) {
  const Mapping map(path, "safe_load");
  const std::span<const std::byte> f = map.bytes();
  const SafetensorsHeader h = parse_safetensors_header(f, path.string(), "safe_load");
  std::map<std::string, Tensor> out;
  for (const auto& [k, e] : h.tensors) {
    auto host = std::make_shared<HostBuffer>();
    host->dtype = e.dtype;
    host->size = prod(e.shape);
    const std::byte* p = f.data() + h.data_start + e.begin;
    host->bytes.assign(p, p + (e.end - e.begin));
    // A bool buffer holds 0 or 1; another byte would compare unequal to true in a kernel, so a file's
    // nonzero bytes are all read as 1 (what numpy and torch mean by them).
    if (e.dtype == dtypes::bool_)
      for (std::byte& b : host->bytes) b = std::byte(b != std::byte{0});
    out.emplace(k, Tensor::from_host(std::move(host), e.shape, device));
  }
  return out;
}

std::map<std::string, std::string> safe_load_metadata(const fs::path& path) {
  const Mapping map(path, "safe_load_metadata");
  return parse_safetensors_header(map.bytes(), path.string(), "safe_load_metadata").metadata;
}

namespace {

// The file being written, removed unless commit() renamed it over the target.
class TempFile {
 public:
  explicit TempFile(const fs::path& target) : target_(target) {
    static std::atomic<uint64_t> counter{0};  // two threads saving to one folder get different names
    path_ = target;
    path_ += ".tmp" + std::to_string(::getpid()) + "." + std::to_string(counter++);
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    SLUICE_CHECK_IN(ValueError, "safe_save", fd_ >= 0)
        << target.string() << ": cannot create " << path_.string() << ": " << std::strerror(errno);
  }
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  void write(const void* data, size_t n) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      SLUICE_CHECK_IN(ValueError, "safe_save", w > 0)
          << target_.string() << ": writing " << path_.string() << " failed: " << std::strerror(errno);
      p += w;
      n -= size_t(w);
    }
  }
  // Synced before the rename, so a crash just after it cannot leave the target empty.
  void commit() {
    SLUICE_CHECK_IN(ValueError, "safe_save", ::fsync(fd_) == 0)
        << target_.string() << ": syncing " << path_.string() << " failed: " << std::strerror(errno);
    const int rc = ::close(fd_);
    fd_ = -1;
    SLUICE_CHECK_IN(ValueError, "safe_save", rc == 0)
        << target_.string() << ": closing " << path_.string() << " failed: " << std::strerror(errno);
    std::error_code ec;
    fs::rename(path_, target_, ec);
    SLUICE_CHECK_IN(ValueError, "safe_save", !ec)
        << target_.string() << ": cannot be written: " << ec.message();
    committed_ = true;
  }

 private:
  fs::path target_, path_;
  int fd_ = -1;
  bool committed_ = false;
};

// A string as JSON; ValueError for one that is not UTF-8 (JSON cannot hold it).
std::string json_string(const std::string& s, const std::string& what, const fs::path& path) {
  try {
    return json(s).dump();
  } catch (const json::exception&) {
    SLUICE_FAIL(ValueError, "safe_save")
        << path.string() << ": " << what << " " << show(json(s)) << " is not valid UTF-8";
  }
}

}  // namespace

void safe_save(const std::map<std::string, Tensor>& tensors, const fs::path& path,
               const std::map<std::string, std::string>& metadata) {
  struct Item {
    const std::string* name;
    Tensor t;
    const char* code;
    uint64_t begin = 0, nbytes = 0;
  };
  std::vector<Item> items;
  for (const auto& [k, t] : tensors) {
    SLUICE_CHECK_IN(ValueError, "safe_save", k != "__metadata__")
        << path.string() << ": a tensor cannot be named \"__metadata__\", the format's key for metadata";
    const Code* code = nullptr;
    for (const Code& c : kCodes)
      if (c.dtype == t.dtype()) code = &c;
    SLUICE_CHECK_IN(DTypeError, "safe_save", code) << path.string() << ": tensor " << quoted(k) << " is "
                                                   << t.dtype().name() << ", which safetensors lacks";
    items.push_back({&k, t, code->name, 0, uint64_t(t.numel()) * uint64_t(t.dtype().itemsize())});
  }
  // Data order: larger items first, so each tensor starts at a multiple of its itemsize (the data section
  // starts at a multiple of 8) and readers that map the file can use it in place; then by name.
  std::vector<Item*> data_order;
  for (Item& it : items) data_order.push_back(&it);
  std::stable_sort(data_order.begin(), data_order.end(), [](const Item* a, const Item* b) {
    return a->t.dtype().itemsize() > b->t.dtype().itemsize();
  });
  uint64_t at = 0;
  for (Item* it : data_order) {
    it->begin = at;
    at += it->nbytes;
  }

  // The header by hand rather than through a json object, to keep the reference's field order
  // (dtype, shape, data_offsets) and "__metadata__" first; items are already sorted by name (a map's order).
  std::string h = "{";
  if (!metadata.empty()) {
    h += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [k, v] : metadata) {
      h += (first ? "" : ",") + json_string(k, "metadata key", path) + ":" +
           json_string(v, "metadata value", path);
      first = false;
    }
    h += "}";
  }
  for (const Item& it : items) {
    if (h.size() > 1) h += ",";
    h += json_string(*it.name, "tensor name", path) + ":{\"dtype\":\"" + it.code + "\",\"shape\":[";
    for (size_t i = 0; i < it.t.shape().size(); ++i) h += (i ? "," : "") + std::to_string(it.t.shape()[i]);
    h +=
        "],\"data_offsets\":[" + std::to_string(it.begin) + "," + std::to_string(it.begin + it.nbytes) + "]}";
  }
  h += "}";
  h.append((8 - h.size() % 8) % 8, ' ');

  TempFile out(path);
  uint8_t len[8];
  for (int i = 0; i < 8; ++i) len[i] = uint8_t(uint64_t(h.size()) >> (8 * i));
  out.write(len, 8);
  out.write(h.data(), h.size());
  // One tensor at a time, so only one tensor's bytes are on the host at once; a tensor that fails to
  // realize throws here and the temporary file goes with `out`.
  for (Item* it : data_order) {
    Tensor t = it->t;  // realize() makes the handle its realized form; the caller's map is const
    t.realize();
    const std::vector<std::byte> bytes = realizer(t.device()).read(t, "safe_save");
    SLUICE_ASSERT(bytes.size() == it->nbytes);
    out.write(bytes.data(), bytes.size());
  }
  out.commit();
}

}  // namespace sluice
