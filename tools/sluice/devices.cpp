// `sluice devices`: every backend compiled in, present or absent (with the reason), and for each device
// that opens its properties (hcq::Properties), queues and supported dtypes.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

#include "tools/sluice/cli.h"

namespace sluice::cli {
namespace {

nlohmann::json device_json(const DeviceSlot& s) {
  nlohmann::json j = {{"name", s.name}, {"present", s.present}};
  if (!s.present) {
    j["reason"] = s.reason;
    return j;
  }
  hcq::Properties p = s.dev->properties();
  j["device_name"] = p.device_name;
  j["vendor"] = p.vendor;
  j["driver_version"] = p.driver_version;
  j["software"] = p.software;
  j["compiler"] = s.dev->compiler().description();
  j["memory_bytes"] = p.memory_bytes;
  j["queues"] = {{"compute", s.dev->queue_count(hcq::QueueKind::Compute)},
                 {"copy", s.dev->queue_count(hcq::QueueKind::Copy)}};
  j["limits"] = {{"max_workgroup_size", p.max_workgroup_size},
                 {"local_memory_bytes", p.local_memory_bytes},
                 {"max_buffers", p.max_buffers}};
  j["dtypes"] = {
      {"float16", p.float16}, {"bfloat16", p.bfloat16}, {"int64", p.int64}, {"float64", p.float64}};
  return j;
}

// "  label            text", the text wrapped under its column so no line passes 80.
void field(const char* label, const std::string& text) {
  const std::vector<std::string> lines = wrap(text, 80 - 19);
  for (size_t i = 0; i < lines.size(); ++i) std::printf("  %-16s %s\n", i ? "" : label, lines[i].c_str());
}

void print_human(const nlohmann::json& devs) {
  for (const auto& d : devs) {
    std::string name = d["name"];
    if (!d["present"]) {
      // The whole reason, wrapped under its column: it is what a user acts on (install a driver).
      const std::vector<std::string> lines = wrap(d["reason"], 80 - 20);
      for (size_t i = 0; i < lines.size(); ++i)
        std::printf("%-10s %-8s %s\n", i ? "" : name.c_str(), i ? "" : "absent", lines[i].c_str());
      continue;
    }
    std::printf("%-10s present  %s\n", name.c_str(), std::string(d["device_name"]).c_str());
    if (d["software"]) field("kind", "software: a GPU API emulated on the CPU (ranked after CPU)");
    std::string drv = d["driver_version"];
    std::printf("  %-16s %s%s%s\n", "vendor", std::string(d["vendor"]).c_str(),
                drv.empty() ? "" : ", driver ", drv.c_str());
    field("compiler", d["compiler"]);
    std::printf("  %-16s %s\n", "memory", format_bytes(d["memory_bytes"]).c_str());
    std::printf("  %-16s %d compute, %d copy\n", "queues", int(d["queues"]["compute"]),
                int(d["queues"]["copy"]));
    const auto& l = d["limits"];
    uint32_t max_bufs = l["max_buffers"];
    std::printf("  %-16s workgroup %u, local memory %s, buffers %s\n", "limits",
                unsigned(l["max_workgroup_size"]), format_bytes(l["local_memory_bytes"]).c_str(),
                max_bufs ? std::to_string(max_bufs).c_str() : "no limit");
    std::string dts;
    for (const char* k : {"float16", "bfloat16", "int64", "float64"})
      dts += std::string(dts.empty() ? "" : "  ") + k + (d["dtypes"][k] ? " yes" : " no");
    std::printf("  %-16s %s\n", "dtypes", dts.c_str());
  }
}

}  // namespace

void add_devices_command(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("devices", "Backends compiled in and the devices that open");
  static bool json = false;
  cmd->add_flag("--json", json, "Machine-readable output on stdout");
  cmd->footer(
      "Examples:\n"
      "  sluice devices\n"
      "  sluice devices --json\n"
      "Each backend compiled in is present (it opened) or absent, with the reason.\n"
      "A present device shows its hardware (marked when it is software: a GPU API\n"
      "emulated on the CPU, ranked after the CPU device for the default), vendor\n"
      "and driver, what compiles its kernels and its version, memory, queues\n"
      "(compute and copy), limits (work-group size, local memory, buffers per\n"
      "kernel) and the dtypes its kernels may use.\n" +
      exit_codes_help("not used (an absent device is not an error)"));
  cmd->callback([&exit_code] {
    nlohmann::json devs = nlohmann::json::array();
    for (const DeviceSlot& s : enumerate_devices()) devs.push_back(device_json(s));
    if (json)
      std::cout << nlohmann::json{{"devices", devs}}.dump(2) << "\n";
    else
      print_human(devs);
    exit_code = 0;
  });
}

}  // namespace sluice::cli
