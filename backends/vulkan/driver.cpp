#include "backends/vulkan/driver.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "base/error.h"
#include "base/log.h"

namespace sluice::vulkan {
namespace {

std::atomic<uint64_t> g_validation_errors{0};

VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                          VkDebugUtilsMessageTypeFlagsEXT,
                                          const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
    g_validation_errors.fetch_add(1);
    log_printf(LogLevel::Error, "Vulkan validation error: %s", data && data->pMessage ? data->pMessage : "?");
  }
  return VK_FALSE;
}

void exit_on_validation_errors() {
  uint64_t n = g_validation_errors.load();
  if (n == 0) return;
  log_printf(LogLevel::Error, "%llu Vulkan validation error(s) in this process", (unsigned long long)n);
  std::_Exit(3);
}

bool has_layer(const InstanceTable&, PFN_vkEnumerateInstanceLayerProperties enumerate, const char* name) {
  uint32_t n = 0;
  if (enumerate(&n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkLayerProperties> layers(n);
  if (enumerate(&n, layers.data()) != VK_SUCCESS) return false;
  for (const auto& l : layers)
    if (std::strcmp(l.layerName, name) == 0) return true;
  return false;
}

struct Loaded {
  Instance inst;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  std::string why;
};

Loaded load() {
  Loaded out;
  // The loader stays open for the process: drivers keep threads that run its code until exit.
  void* lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = dlerror();
    out.why = std::string("libvulkan.so.1 not found: ") + (e ? e : "dlopen failed");
    return out;
  }
  auto gipa = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
  if (!gipa) {
    out.why = "libvulkan.so.1 has no vkGetInstanceProcAddr";
    return out;
  }
  auto create = reinterpret_cast<PFN_vkCreateInstance>(gipa(nullptr, "vkCreateInstance"));
  auto version =
      reinterpret_cast<PFN_vkEnumerateInstanceVersion>(gipa(nullptr, "vkEnumerateInstanceVersion"));
  auto layers = reinterpret_cast<PFN_vkEnumerateInstanceLayerProperties>(
      gipa(nullptr, "vkEnumerateInstanceLayerProperties"));
  uint32_t api = VK_API_VERSION_1_0;
  if (version) version(&api);
  if (!create || api < VK_API_VERSION_1_2) {
    out.why = "the Vulkan loader supports no Vulkan 1.2 instance";
    return out;
  }
  Instance& inst = out.inst;
  inst.vk.vkGetInstanceProcAddr = gipa;
  const char* env = std::getenv("SLUICE_VULKAN_VALIDATION");
  const char* kLayer = "VK_LAYER_KHRONOS_validation";
  bool validate = env && std::strcmp(env, "1") == 0;
  if (validate && !(layers && has_layer(inst.vk, layers, kLayer))) {
    out.why = "SLUICE_VULKAN_VALIDATION=1 but VK_LAYER_KHRONOS_validation is not installed";
    return out;
  }
  auto app = vk_struct<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
  app.pApplicationName = "sluice";
  app.pEngineName = "sluice";
  app.apiVersion = VK_API_VERSION_1_3 <= api ? VK_API_VERSION_1_3 : VK_API_VERSION_1_2;
  const char* ext[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
  auto dbg =
      vk_struct<VkDebugUtilsMessengerCreateInfoEXT>(VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT);
  dbg.messageSeverity =
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT;
  dbg.messageType =
      VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
  dbg.pfnUserCallback = on_message;
  auto ci = vk_struct<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
  ci.pApplicationInfo = &app;
  if (validate) {
    ci.enabledLayerCount = 1;
    ci.ppEnabledLayerNames = &kLayer;
    ci.enabledExtensionCount = 1;
    ci.ppEnabledExtensionNames = ext;
    ci.pNext = &dbg;  // also reports on vkCreateInstance/vkDestroyInstance themselves
  }
  VkResult r = create(&ci, nullptr, &inst.handle);
  if (r != VK_SUCCESS) {
    out.why = std::string("vkCreateInstance failed: ") + result_name(r);
    return out;
  }
  inst.api_version = app.apiVersion;
  inst.validation = validate;
#define SLUICE_VK_LOAD(name) inst.vk.name = reinterpret_cast<PFN_##name>(gipa(inst.handle, #name));
  SLUICE_VK_INSTANCE_FNS(SLUICE_VK_LOAD)
#undef SLUICE_VK_LOAD
  if (validate) {
    check(inst.vk.vkCreateDebugUtilsMessengerEXT(inst.handle, &dbg, nullptr, &out.messenger),
          "vkCreateDebugUtilsMessengerEXT");
    std::atexit(exit_on_validation_errors);
  }
  return out;
}

}  // namespace

const Instance* instance(std::string* why) {
  // Created once and never destroyed: devices of any thread may use it until the process exits.
  static const Loaded* loaded = [] {
    try {
      return new Loaded(load());
    } catch (const std::exception& e) {
      auto* l = new Loaded;
      l->why = e.what();
      return l;
    }
  }();
  if (loaded->inst.handle) return &loaded->inst;
  if (why) *why = loaded->why;
  return nullptr;
}

DeviceTable load_device_table(const Instance& inst, VkDevice dev) {
  DeviceTable t;
#define SLUICE_VK_LOAD(name) t.name = reinterpret_cast<PFN_##name>(inst.vk.vkGetDeviceProcAddr(dev, #name));
  SLUICE_VK_DEVICE_FNS(SLUICE_VK_LOAD)
#undef SLUICE_VK_LOAD
  return t;
}

const char* result_name(VkResult r) {
  switch (r) {
#define SLUICE_VK_CASE(x) \
  case x: return #x;
    SLUICE_VK_CASE(VK_SUCCESS)
    SLUICE_VK_CASE(VK_NOT_READY)
    SLUICE_VK_CASE(VK_TIMEOUT)
    SLUICE_VK_CASE(VK_EVENT_SET)
    SLUICE_VK_CASE(VK_EVENT_RESET)
    SLUICE_VK_CASE(VK_INCOMPLETE)
    SLUICE_VK_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
    SLUICE_VK_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    SLUICE_VK_CASE(VK_ERROR_INITIALIZATION_FAILED)
    SLUICE_VK_CASE(VK_ERROR_DEVICE_LOST)
    SLUICE_VK_CASE(VK_ERROR_MEMORY_MAP_FAILED)
    SLUICE_VK_CASE(VK_ERROR_LAYER_NOT_PRESENT)
    SLUICE_VK_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    SLUICE_VK_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    SLUICE_VK_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    SLUICE_VK_CASE(VK_ERROR_TOO_MANY_OBJECTS)
    SLUICE_VK_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
    SLUICE_VK_CASE(VK_ERROR_FRAGMENTED_POOL)
    SLUICE_VK_CASE(VK_ERROR_UNKNOWN)
    SLUICE_VK_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
    SLUICE_VK_CASE(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    SLUICE_VK_CASE(VK_ERROR_FRAGMENTATION)
    SLUICE_VK_CASE(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
    SLUICE_VK_CASE(VK_PIPELINE_COMPILE_REQUIRED)
    SLUICE_VK_CASE(VK_ERROR_INVALID_SHADER_NV)
#undef SLUICE_VK_CASE
    default: return "VK_RESULT_UNKNOWN";
  }
}

void check(VkResult r, const char* call) {
  if (r != VK_SUCCESS)
    SLUICE_FAIL(::sluice::DeviceError, call) << "failed: " << result_name(r) << " (" << int(r) << ")";
}

uint64_t validation_errors() { return g_validation_errors.load(); }

}  // namespace sluice::vulkan
