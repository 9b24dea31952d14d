#include "backends/cuda/driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace sluice::cuda {
namespace {

// One row per table field (SLUICE_DRIVER_CALLS): its CUDA name (what messages say), the exported
// symbols newest first, and where the field lives in a table.
struct Symbol {
  const char* field;
  const char* name;
  const char* symbols[3];
  bool required;
  void** (*slot)(Driver&);
};
#define SLUICE_DRIVER_ROW(f, params, required, cuda_name, hip_name, ...) \
  {#f, cuda_name, {__VA_ARGS__}, required, [](Driver& d) { return reinterpret_cast<void**>(&d.f); }},
const Symbol kSymbols[] = {SLUICE_DRIVER_CALLS(SLUICE_DRIVER_ROW)};
#undef SLUICE_DRIVER_ROW

// The table and context last made current on this thread: CUDA's and HIP's "contexts" are different
// things, and two tables may hand out equal values.
thread_local const Driver* tls_driver = nullptr;
thread_local CUcontext tls_current = nullptr;

}  // namespace

std::string format_error(const char* call, CUresult r, const char* name, const char* description) {
  std::string s = std::string(call) + ": ";
  s += name ? std::string(name) : "error " + std::to_string(r);
  if (description && *description && !(name && std::strcmp(name, description) == 0))
    s += std::string(" (") + description + ")";
  return s;
}

const char* Driver::call_name(const char* field) const {
  if (name_of) return name_of(field);
  for (const Symbol& s : kSymbols)
    if (std::strcmp(s.field, field) == 0) return s.name;
  return field;
}

std::string Driver::error(const char* field, CUresult r) const {
  const char* name = nullptr;
  const char* desc = nullptr;
  if (get_error_name && get_error_name(r, &name) != kSuccess) name = nullptr;
  if (get_error_string && get_error_string(r, &desc) != kSuccess) desc = nullptr;
  return format_error(call_name(field), r, name, desc);
}

std::string load_cuda_driver(const std::string& library, Driver& out) {
  void* lib = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = ::dlerror();
    return library + " not found: " + (e ? e : "dlopen failed");
  }
  out.api = "CUDA";
  out.library = library;
  for (const Symbol& s : kSymbols) {
    void* fn = nullptr;
    for (const char* name : s.symbols)
      if (name && !fn) fn = ::dlsym(lib, name);
    if (!fn && s.required) return library + " lacks " + s.symbols[0] + " (a driver older than CUDA 12?)";
    *s.slot(out) = fn;
  }
  // The library stays loaded for the life of the process: driver threads may run its code until exit.
  return "";
}

const Driver* cuda_driver(std::string* why) {
  static Driver drv;
  static std::string reason;
  static std::once_flag once;
  std::call_once(once, [] {
    const char* env = std::getenv("SLUICE_CUDA_LIBRARY");
    reason = load_cuda_driver(env && *env ? env : "libcuda.so.1", drv);
    if (!reason.empty()) return;
    if (CUresult r = drv.init(0); r != kSuccess) {
      reason = "cuInit failed: " + drv.error("init", r).substr(std::strlen("cuInit: "));
      return;
    }
    int n = 0;
    if (CUresult r = drv.device_get_count(&n); r != kSuccess) {
      reason = drv.error("device_get_count", r);
    } else if (n == 0) {
      reason = "no CUDA device";
    }
  });
  if (why) *why = reason;
  return reason.empty() ? &drv : nullptr;
}

void make_current(const Driver& drv, CUcontext ctx) {
  if (tls_driver == &drv && tls_current == ctx) return;
  SLUICE_DRV("make_current", drv.api, drv, ctx_set_current, ctx);
  tls_driver = &drv;
  tls_current = ctx;
}

int device_attribute(const Driver& drv, const std::string& who, CUdevice dev, Attribute a) {
  int v = 0;
  SLUICE_DRV("open_device", who, drv, device_get_attribute, &v, a, dev);
  return v;
}

void KernelParams::pack(const uint64_t* bufs, uint32_t nbufs, const int32_t* vars, uint32_t nvars) {
  slots_.assign(size_t(nbufs) + nvars, 0);
  for (uint32_t i = 0; i < nbufs; ++i) slots_[i] = bufs[i];
  // An int parameter is read as 4 bytes from its pointer: the slot's first bytes.
  for (uint32_t i = 0; i < nvars; ++i) std::memcpy(&slots_[nbufs + i], &vars[i], sizeof(int32_t));
  ptrs_.resize(slots_.size());
  for (size_t i = 0; i < slots_.size(); ++i) ptrs_[i] = &slots_[i];
}

}  // namespace sluice::cuda
