#include "runtime/saved_plan.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <span>
#include <unordered_map>

#include "base/error.h"
#include "hcq/graph.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/device_name.h"
#include "runtime/realize.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using Role = PlanBuffer::Role;

// Not ASCII first, so no text file starts this way; the newline catches line-ending conversion.
constexpr char kMagic[8] = {'\x89', 'S', 'L', 'U', 'I', 'C', 'E', '\n'};
// Bumped whenever the layout below or a backend's kernel ABI changes.
constexpr uint32_t kFormat = 1;
constexpr size_t kChecksumBytes = 8;

// Finds damage, not tampering: each 8-byte word goes through a bijection of the running value, so a
// change to any one word always changes the result, and the length is mixed in last (a cut file too).
uint64_t checksum(const std::byte* p, size_t n) {
  constexpr uint64_t k1 = 0x9E3779B97F4A7C15ull, k2 = 0xC2B2AE3D27D4EB4Full;
  auto round = [](uint64_t h, uint64_t w) {
    h ^= w;
    h *= k1;
    h = (h << 31) | (h >> 33);
    return h * k2;
  };
  uint64_t h = 0x27D4EB2F165667C5ull;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = round(h, w);
  }
  uint64_t tail = 0;
  std::memcpy(&tail, p + i, n - i);
  h = round(round(h, tail), uint64_t(n));
  return h ^ (h >> 29);
}

class Writer {
 public:
  std::vector<std::byte> out;
  void raw(const void* p, size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    out.insert(out.end(), b, b + n);
  }
  template <class T>
  void num(T v) {  // little-endian: sluice's hosts are (the CPU backend loads x86-64 objects)
    raw(&v, sizeof v);
  }
  void str(std::string_view s) {
    num(uint32_t(s.size()));
    raw(s.data(), s.size());
  }
  void blob(const void* p, size_t n) {
    num(uint64_t(n));
    raw(p, n);
  }
  void arg(const PlanArg& a) {
    num(a.buffer);
    num(a.offset);
  }
  void tensor(const PlanTensor& t) {
    str(t.name);
    str(t.dtype.name());
    num(uint32_t(t.shape.size()));
    for (int64_t d : t.shape) num(d);
    num(t.buffer);
    num(t.offset);
    blob(t.fixed.data(), t.fixed.size());
  }
};

// Reads what Writer wrote; every read is bounds-checked, so a malformed file is an error, never a crash.
class Reader {
 public:
  Reader(std::span<const std::byte> b, const std::string& path) : b_(b), path_(path) {}
  [[noreturn]] void fail(const std::string& what) const {
    SLUICE_FAIL(ValueError, "load") << path_ << ": malformed compiled model: " << what << " at byte " << at_;
  }
  std::span<const std::byte> raw(uint64_t n, const char* what) {
    if (n > b_.size() - at_) fail(std::string(what) + " runs past the end");
    auto s = b_.subspan(at_, n);
    at_ += n;
    return s;
  }
  template <class T>
  T num(const char* what) {
    T v;
    std::memcpy(&v, raw(sizeof v, what).data(), sizeof v);
    return v;
  }
  std::string str(const char* what) {
    auto s = raw(num<uint32_t>(what), what);
    return std::string(reinterpret_cast<const char*>(s.data()), s.size());
  }
  std::vector<std::byte> blob(const char* what) {
    auto s = raw(num<uint64_t>(what), what);
    return {s.begin(), s.end()};
  }
  // A count of entries that take at least `min_bytes` each: more than the rest of the file could hold
  // is malformed (and would otherwise reserve absurd memory).
  uint32_t count(const char* what, size_t min_bytes) {
    const uint32_t n = num<uint32_t>(what);
    if (uint64_t(n) * min_bytes > b_.size() - at_)
      fail(std::string(what) + " count " + std::to_string(n) + " is too large");
    return n;
  }
  uint32_t index(const char* what, size_t limit) {
    const uint32_t i = num<uint32_t>(what);
    if (i >= limit)
      fail(std::string(what) + " " + std::to_string(i) + " is out of range (" + std::to_string(limit) + ")");
    return i;
  }
  DType dtype(const char* what) {
    const std::string s = str(what);
    std::optional<DType> d = dtypes::from_name(s);
    if (!d || d->is_void()) fail(std::string(what) + " '" + s + "' is not a dtype");
    return *d;
  }
  size_t at() const { return at_; }

 private:
  std::span<const std::byte> b_;
  const std::string& path_;
  size_t at_ = 0;
};

// "(llvmpipe (LLVM 15.0.6, 256 bits), driver Mesa 22.3.6)"
std::string hardware(const PlanTarget& t) {
  return "(" + t.hardware + (t.driver.empty() ? "" : ", driver " + t.driver) + ")";
}

// Elements of a shape read from a file, or -1 when they overflow.
int64_t checked_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n)) return -1;
  return n;
}

// The plan's buffer table while it is made: every base Buffer the launches use, in order of first use,
// and whether a launch read it before any launch wrote it (then its contents are the plan's weights).
struct Table {
  std::unordered_map<const Buffer*, uint32_t> index;
  std::vector<std::shared_ptr<Buffer>> bases;
  std::vector<bool> read_first, written;

  uint32_t add(const std::shared_ptr<Buffer>& b) {
    std::shared_ptr<Buffer> base = b->base() ? b->base() : b;
    auto [it, fresh] = index.try_emplace(base.get(), uint32_t(bases.size()));
    if (fresh) {
      bases.push_back(base);
      read_first.push_back(false);
      written.push_back(false);
    }
    return it->second;
  }
  // An argument of a launch that reads (or writes) the BUFFER u.
  PlanArg arg(const UOp& u, bool writes) {
    std::shared_ptr<Buffer> b = device_buffer(u);
    SLUICE_ASSERT(b);
    const uint32_t i = add(b);
    if (!writes && !written[i]) read_first[i] = true;
    return {i, uint64_t(b->offset()) * b->dtype().itemsize()};
  }
};

}  // namespace

const char* sluice_version() { return SLUICE_VERSION; }

PlanTarget plan_target(hcq::Device& dev) {
  const hcq::Properties p = dev.properties();
  return {dev.name(),       parse_device(dev.name()).kind, p.device_name,
          p.driver_version, dev.compiler().name(),         dev.compiler().binary_target()};
}

SavedPlan save_plan(const Jit& jit) {
  SLUICE_CHECK_IN(ValueError, "save", jit.captured())
      << "nothing was captured to save" << (jit.why().empty() ? "" : ": " + jit.why());
  const Capture& cap = *jit.capture_;
  hcq::Device& dev = *cap.device;
  SavedPlan plan;
  plan.target = plan_target(dev);

  Table table;
  std::unordered_map<const hcq::Program*, uint32_t> program_index;
  std::vector<std::string> sources;
  const Realizer& r = realizer(dev.name());
  for (size_t i = 0; i < cap.items.size(); ++i) {
    const std::vector<UOp>& ubufs = cap.item_bufs[i];
    const uint32_t outs = cap.item_outputs[i];
    // Reads before writes: a kernel that updates a buffer in place reads what was there.
    std::vector<PlanArg> args(ubufs.size());
    for (size_t a = outs; a < ubufs.size(); ++a) args[a] = table.arg(ubufs[a], false);
    for (size_t a = 0; a < outs; ++a) args[a] = table.arg(ubufs[a], true);
    for (size_t a = 0; a < outs; ++a) table.written[args[a].buffer] = true;
    if (const auto* c = std::get_if<hcq::GraphCopy>(&cap.items[i])) {
      plan.items.push_back(PlanCopy{args[0], args[1], c->size});
      continue;
    }
    const auto& e = std::get<hcq::GraphExec>(cap.items[i]);
    auto [pi, fresh] = program_index.try_emplace(e.program, uint32_t(plan.programs.size()));
    if (fresh) {
      sources.push_back(r.source_of(*e.program));
      SLUICE_ASSERT(!sources.back().empty());
      plan.programs.push_back({e.program->name(), 0, e.program->layout()});
    }
    plan.items.push_back(PlanExec{pi->second, std::move(args), e.args.vars, e.global, e.local});
  }

  // The binaries: compile_many reads them back from the disk cache (or compiles them again without one).
  std::vector<hcq::Binary> bins = dev.compiler().compile_many(sources);
  for (size_t p = 0; p < bins.size(); ++p) {
    size_t b = 0;
    while (b < plan.binaries.size() && plan.binaries[b] != bins[p]) ++b;  // a unit's kernels share one
    if (b == plan.binaries.size()) plan.binaries.push_back(std::move(bins[p]));
    plan.programs[p].binary = uint32_t(b);
  }

  for (size_t k = 0; k < jit.sigs_.size(); ++k) {
    const Jit::Sig& s = jit.sigs_[k];
    plan.inputs.push_back({"", s.dtype, s.shape, -1, 0, {}});
  }
  std::vector<bool> is_input(table.bases.size(), false);
  for (const Jit::Patch& p : jit.patches_) {
    const uint32_t i = table.add(device_buffer(cap.item_bufs[p.item][p.arg]));
    plan.inputs[p.input].buffer = i;
    is_input[i] = true;
  }
  for (const Tensor& o : jit.outputs_) {
    const UOp u = o.dense_buffer();
    std::shared_ptr<Buffer> b = u ? device_buffer(u) : nullptr;
    SLUICE_CHECK_IN(ValueError, "save", b)
        << "output " << plan.outputs.size() << " (" << tuple_str(o.shape()) << " " << o.dtype().name()
        << ") is a view of a buffer, which a saved plan cannot express";
    const uint32_t i = table.add(b);
    is_input.resize(table.bases.size(), false);
    SLUICE_CHECK_IN(ValueError, "save", !is_input[i])
        << "output " << plan.outputs.size() << " is an input passed through";
    if (!table.written[i]) table.read_first[i] = true;  // not computed by the plan: a constant
    plan.outputs.push_back({"", o.dtype(), o.shape(), i, uint64_t(b->offset()), {}});
  }

  dev.synchronize();
  for (size_t i = 0; i < table.bases.size(); ++i) {
    const std::shared_ptr<Buffer>& b = table.bases[i];
    PlanBuffer pb{is_input[i] ? Role::Input : Role::Scratch, b->dtype(), b->size(), {}};
    if (table.read_first[i] && !is_input[i]) {
      pb.role = Role::Weight;
      pb.bytes.resize(b->nbytes());
      b->copyout(pb.bytes.data());
    }
    plan.buffers.push_back(std::move(pb));
  }
  return plan;
}

Jit load_plan(const SavedPlan& plan, const std::string& device) {
  const std::string name = canonical_device(device.empty() ? plan.target.device : device);
  hcq::Device& dev = open_device(name);
  const PlanTarget here = plan_target(dev);
  const PlanTarget& made = plan.target;
  SLUICE_CHECK_IN(DeviceError, "load", here.kind == made.kind)
      << plan.label << " was compiled for " << made.kind << " " << hardware(made) << "; it cannot run on "
      << name << " " << hardware(here) << ": compile it again for " << name;
  SLUICE_CHECK_IN(DeviceError, "load",
                  here.compiler == made.compiler && here.binary_target == made.binary_target)
      << plan.label << " was compiled for " << made.kind << " " << hardware(made) << ", whose binaries are "
      << made.compiler << " '" << made.binary_target << "'; " << name << " " << hardware(here) << " takes "
      << here.compiler << " '" << here.binary_target << "': compile it again for this device";

  auto cap = std::make_unique<Capture>();
  cap->device = &dev;
  std::vector<std::shared_ptr<Buffer>> bufs;
  for (const PlanBuffer& pb : plan.buffers) {
    auto b = std::make_shared<Buffer>(dev, pb.dtype, pb.size);
    if (pb.role == Role::Weight) b->copyin(pb.bytes.data());
    bufs.push_back(b);
    cap->memory.push_back(b);
  }
  for (const PlanProgram& p : plan.programs)
    cap->programs.push_back(dev.load_program(p.name, plan.binaries.at(p.binary), p.layout));

  Jit jit(nullptr);
  auto addr = [&](const PlanArg& a) { return bufs.at(a.buffer)->addr() + a.offset; };
  std::vector<int64_t> input_of(plan.buffers.size(), -1);
  for (size_t k = 0; k < plan.inputs.size(); ++k) {
    const PlanTensor& t = plan.inputs[k];
    if (t.buffer >= 0) input_of.at(size_t(t.buffer)) = int64_t(k);
    jit.sigs_.push_back({t.shape, t.dtype, name});
  }
  for (size_t i = 0; i < plan.items.size(); ++i) {
    auto patch = [&](const PlanArg& a, uint32_t arg) {
      if (input_of[a.buffer] >= 0) jit.patches_.push_back({i, arg, size_t(input_of[a.buffer])});
    };
    if (const auto* c = std::get_if<PlanCopy>(&plan.items[i])) {
      cap->items.push_back(hcq::GraphCopy{addr(c->dst), addr(c->src), c->size});
      patch(c->dst, 0), patch(c->src, 1);
      continue;
    }
    const auto& e = std::get<PlanExec>(plan.items[i]);
    hcq::KernelArgs args;
    for (uint32_t a = 0; a < e.bufs.size(); ++a) {
      args.bufs.push_back(addr(e.bufs[a]));
      patch(e.bufs[a], a);
    }
    args.vars = e.vars;
    cap->items.push_back(
        hcq::GraphExec{cap->programs.at(e.program).get(), std::move(args), e.global, e.local});
  }
  for (const PlanTensor& t : plan.outputs) {
    std::shared_ptr<Buffer> base = bufs.at(size_t(t.buffer));
    const int64_t n = prod(t.shape);
    std::shared_ptr<Buffer> b =
        t.offset == 0 && n == base->size() ? base : Buffer::view(base, int64_t(t.offset), n);
    UOp u = UOp::new_buffer(name, t.dtype, n);
    attach_device_buffer(u, b);
    jit.outputs_.emplace_back(u.reshape(t.shape), name);
  }
  jit.graph_ = std::make_unique<hcq::Graph>(dev, cap->items);
  jit.capture_ = std::move(cap);
  return jit;
}

void write_plan_file(const SavedPlan& plan, const std::string& path) {
  Writer w;
  w.raw(kMagic, sizeof kMagic);
  w.num(kFormat);
  w.str(sluice_version());
  const size_t length_at = w.out.size();
  w.num(uint64_t(0));  // the file's length, filled in below
  w.str(plan.label);
  const PlanTarget& t = plan.target;
  for (const std::string* s : {&t.device, &t.kind, &t.hardware, &t.driver, &t.compiler, &t.binary_target})
    w.str(*s);
  w.num(uint32_t(plan.binaries.size()));
  for (const hcq::Binary& b : plan.binaries) w.blob(b.data(), b.size());
  w.num(uint32_t(plan.programs.size()));
  for (const PlanProgram& p : plan.programs) {
    w.str(p.name);
    w.num(p.binary);
    w.num(p.layout.buffers);
    w.num(p.layout.vars);
  }
  w.num(uint32_t(plan.buffers.size()));
  for (const PlanBuffer& b : plan.buffers) {
    w.num(uint8_t(b.role));
    w.str(b.dtype.name());
    w.num(b.size);
    if (b.role == Role::Weight) w.raw(b.bytes.data(), b.bytes.size());
  }
  w.num(uint32_t(plan.items.size()));
  for (const PlanItem& item : plan.items) {
    if (const auto* c = std::get_if<PlanCopy>(&item)) {
      w.num(uint8_t(1));
      w.num(c->size);
      w.arg(c->dst), w.arg(c->src);
      continue;
    }
    const auto& e = std::get<PlanExec>(item);
    w.num(uint8_t(0));
    w.num(e.program);
    w.num(uint32_t(e.bufs.size()));
    for (const PlanArg& a : e.bufs) w.arg(a);
    w.num(uint32_t(e.vars.size()));
    for (int32_t v : e.vars) w.num(v);
    for (const hcq::Dims& d : {e.global, e.local}) w.num(d.x), w.num(d.y), w.num(d.z);
  }
  w.num(uint32_t(plan.inputs.size()));
  w.num(uint32_t(plan.outputs.size()));
  for (const PlanTensor& x : plan.inputs) w.tensor(x);
  for (const PlanTensor& x : plan.outputs) w.tensor(x);
  const uint64_t length = w.out.size() + kChecksumBytes;
  std::memcpy(w.out.data() + length_at, &length, sizeof length);
  w.num(checksum(w.out.data(), w.out.size()));

  // A temporary name unique across threads and processes, in the same directory so the rename is atomic.
  static std::atomic<uint64_t> seq{0};
  const fs::path dst(path);
  fs::path tmp = dst;
  tmp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(seq.fetch_add(1));
  std::string error;
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f)
      error = std::strerror(errno);
    else if (!f.write(reinterpret_cast<const char*>(w.out.data()), std::streamsize(w.out.size())).flush())
      error = "write failed";
  }
  std::error_code ec;
  if (error.empty()) {
    fs::rename(tmp, dst, ec);
    if (ec) error = ec.message();
  }
  if (!error.empty()) {
    fs::remove(tmp, ec);
    SLUICE_FAIL(ValueError, "save") << path << ": cannot write the compiled model: " << error;
  }
}

bool is_plan_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char head[sizeof kMagic] = {};
  return f.read(head, sizeof head) && std::memcmp(head, kMagic, sizeof kMagic) == 0;
}

SavedPlan read_plan_file(const std::string& path) {
  std::error_code ec;
  SLUICE_CHECK_IN(ValueError, "load", fs::is_regular_file(path, ec))
      << path << ": does not exist or is not a file";
  std::vector<std::byte> bytes(fs::file_size(path, ec));
  {
    std::ifstream f(path, std::ios::binary);
    SLUICE_CHECK_IN(ValueError, "load",
                    f && f.read(reinterpret_cast<char*>(bytes.data()), std::streamsize(bytes.size())))
        << path << ": cannot read: " << std::strerror(errno);
  }
  return parse_plan(bytes, path);
}

void reseal_plan(std::span<std::byte> b) {
  // The header as write_plan_file lays it out: magic, format, version string, then the length.
  constexpr size_t kVersionAt = sizeof kMagic + sizeof kFormat;
  if (b.size() < kVersionAt + 4) return;
  uint32_t vlen;
  std::memcpy(&vlen, b.data() + kVersionAt, 4);
  const size_t length_at = kVersionAt + 4 + size_t(vlen);
  if (vlen > b.size() || length_at + 8 + kChecksumBytes > b.size()) return;
  const uint64_t length = b.size();
  std::memcpy(b.data() + length_at, &length, 8);
  const uint64_t sum = checksum(b.data(), b.size() - kChecksumBytes);
  std::memcpy(b.data() + b.size() - kChecksumBytes, &sum, 8);
}

SavedPlan parse_plan(std::span<const std::byte> bytes, const std::string& name) {
  SLUICE_CHECK_IN(ValueError, "load",
                  bytes.size() >= sizeof kMagic && std::memcmp(bytes.data(), kMagic, sizeof kMagic) == 0)
      << name << ": not a compiled sluice model (`sluice compile` makes one)";
  Reader r(bytes, name);
  r.raw(sizeof kMagic, "magic");
  const uint32_t format = r.num<uint32_t>("format");
  const std::string version = format == kFormat ? r.str("version") : "?";
  SLUICE_CHECK_IN(ValueError, "load", format == kFormat && version == sluice_version())
      << name << ": compiled by sluice " << version << " (format " << format << "); this is sluice "
      << sluice_version() << " (format " << kFormat << "): compile the model again";
  const uint64_t length = r.num<uint64_t>("length");
  SLUICE_CHECK_IN(ValueError, "load", length == bytes.size())
      << name << ": truncated or damaged: " << bytes.size() << " bytes, its header says " << length;
  const size_t body = bytes.size() - kChecksumBytes;
  uint64_t sum;
  std::memcpy(&sum, bytes.data() + body, sizeof sum);
  SLUICE_CHECK_IN(ValueError, "load", sum == checksum(bytes.data(), body))
      << name << ": damaged: its checksum does not match its contents";
  Reader b(std::span<const std::byte>(bytes).first(body), name);
  b.raw(r.at(), "header");

  SavedPlan plan;
  plan.label = b.str("label");
  PlanTarget& t = plan.target;
  for (std::string* s : {&t.device, &t.kind, &t.hardware, &t.driver, &t.compiler, &t.binary_target})
    *s = b.str("target");
  for (uint32_t n = b.count("binaries", 8); n--;) {
    std::vector<std::byte> bin = b.blob("binary");
    plan.binaries.push_back(hcq::Binary(reinterpret_cast<const uint8_t*>(bin.data()),
                                        reinterpret_cast<const uint8_t*>(bin.data()) + bin.size()));
  }
  for (uint32_t n = b.count("programs", 16); n--;) {
    PlanProgram p;
    p.name = b.str("program name");
    p.binary = b.index("program binary", plan.binaries.size());
    p.layout.buffers = b.num<uint32_t>("program layout");
    p.layout.vars = b.num<uint32_t>("program layout");
    plan.programs.push_back(std::move(p));
  }
  for (uint32_t n = b.count("buffers", 13); n--;) {
    PlanBuffer pb;
    const uint8_t role = b.num<uint8_t>("buffer role");
    if (role > uint8_t(Role::Weight)) b.fail("buffer role " + std::to_string(role));
    pb.role = Role(role);
    pb.dtype = b.dtype("buffer dtype");
    pb.size = b.num<int64_t>("buffer size");
    if (pb.size < 0 || pb.size > INT64_MAX / 8) b.fail("buffer size " + std::to_string(pb.size));
    const uint64_t nbytes = uint64_t(pb.size) * pb.dtype.itemsize();
    if (pb.role == Role::Weight) {
      auto s = b.raw(nbytes, "weights");
      pb.bytes.assign(s.begin(), s.end());
    }
    plan.buffers.push_back(std::move(pb));
  }
  auto nbytes = [&](uint32_t i) { return uint64_t(plan.buffers[i].size) * plan.buffers[i].dtype.itemsize(); };
  auto arg = [&](uint64_t size) {
    PlanArg a;
    a.buffer = b.index("buffer", plan.buffers.size());
    a.offset = b.num<uint64_t>("offset");
    if (a.offset > nbytes(a.buffer) || size > nbytes(a.buffer) - a.offset)
      b.fail("a range of " + std::to_string(size) + " bytes at " + std::to_string(a.offset) +
             " of a buffer of " + std::to_string(nbytes(a.buffer)));
    return a;
  };
  for (uint32_t n = b.count("items", 9); n--;) {
    const uint8_t kind = b.num<uint8_t>("item kind");
    if (kind == 1) {
      PlanCopy c;
      c.size = b.num<uint64_t>("copy size");
      c.dst = arg(c.size);
      c.src = arg(c.size);
      plan.items.push_back(c);
      continue;
    }
    if (kind != 0) b.fail("item kind " + std::to_string(kind));
    PlanExec e;
    e.program = b.index("item program", plan.programs.size());
    for (uint32_t k = b.count("kernel buffers", 12); k--;) e.bufs.push_back(arg(0));
    for (uint32_t k = b.count("kernel variables", 4); k--;) e.vars.push_back(b.num<int32_t>("variable"));
    for (hcq::Dims* d : {&e.global, &e.local}) {
      d->x = b.num<uint32_t>("launch"), d->y = b.num<uint32_t>("launch"), d->z = b.num<uint32_t>("launch");
    }
    const hcq::KernelLayout l = plan.programs[e.program].layout;
    if (e.bufs.size() != l.buffers || e.vars.size() != l.vars)
      b.fail("a launch of " + std::to_string(e.bufs.size()) + " buffers and " +
             std::to_string(e.vars.size()) + " variables for a kernel of " + std::to_string(l.buffers) +
             " and " + std::to_string(l.vars));
    plan.items.push_back(std::move(e));
  }
  const uint32_t n_in = b.count("inputs", 0), n_out = b.count("outputs", 0);
  auto tensor = [&](bool input) {
    PlanTensor x;
    x.name = b.str("tensor name");
    x.dtype = b.dtype("tensor dtype");
    for (uint32_t k = b.count("tensor rank", 8); k--;) {
      x.shape.push_back(b.num<int64_t>("tensor dim"));
      if (x.shape.back() < 0) b.fail("tensor dim " + std::to_string(x.shape.back()));
    }
    x.buffer = b.num<int64_t>("tensor buffer");
    x.offset = b.num<uint64_t>("tensor offset");
    x.fixed = b.blob("tensor values");
    if (x.buffer < -1 || x.buffer >= int64_t(plan.buffers.size()) || (!input && x.buffer < 0))
      b.fail("tensor buffer " + std::to_string(x.buffer));
    if (x.buffer >= 0) {
      const PlanBuffer& pb = plan.buffers[size_t(x.buffer)];
      const int64_t n = checked_numel(x.shape);
      if (pb.dtype.itemsize() != x.dtype.itemsize() || n < 0 || x.offset > uint64_t(pb.size) ||
          uint64_t(n) > uint64_t(pb.size) - x.offset || (input && pb.role != Role::Input))
        b.fail("tensor '" + x.name + "' does not fit its buffer");
      // A caller's empty tensor has no buffer to patch in; plans give such inputs none.
      if (input && n == 0) b.fail("input '" + x.name + "' has no elements but a buffer");
    }
    return x;
  };
  for (uint32_t k = 0; k < n_in; ++k) plan.inputs.push_back(tensor(true));
  for (uint32_t k = 0; k < n_out; ++k) plan.outputs.push_back(tensor(false));
  if (b.at() != body) b.fail("extra bytes after the outputs");
  return plan;
}

}  // namespace sluice
