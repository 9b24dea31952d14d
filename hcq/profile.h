#pragma once
// hcq::ProfileRecord — one timed command (DESIGN.md §4, Profiling).
//
// With Device::set_profiling(true), a device records the device-side start and end of every exec and copy
// its queues run, and its allocator times every copyin and copyout; Device::take_profile() hands the
// records over. Times are on the host clock (hcq::now_ns, steady, ns) on every backend: the CPU device and
// NULL read it themselves, VULKAN converts timestamp queries through VK_EXT_calibrated_timestamps (without
// it, no exec or copy records), CL through an offset measured at open, CUDA through elapsed time from a
// host-timed event; converted times are clamped into the window in which the host saw the work run.
// runtime/profile.h turns the records into a Perfetto trace.
//
// A submitted command carries where it came from, so the host can join it with what it recorded: the
// timeline value its submit returned and its packet's word offset in the submitted HwQueue (the
// HwQueue::Cmd::at its record call hands back).
#include <cstdint>
#include <string>

namespace sluice::hcq {

// Which way a copy moves bytes: an HwQueue copy is between device addresses; the allocator's copyin and
// copyout cross between host and device.
enum class Transfer : uint8_t { None, DeviceToDevice, HostToDevice, DeviceToHost };

struct ProfileRecord {
  std::string device;  // "CPU"
  std::string queue;   // "compute:0", "copy:0"; "transfer" for the allocator's copyin/copyout
  std::string name;    // the kernel's name, or "copy"
  uint64_t start_ns = 0, end_ns = 0;
  uint64_t bytes = 0;       // copies: bytes moved
  uint64_t submission = 0;  // the timeline value of the submission it ran in; 0: not a submitted command
  uint32_t at = 0;          // its packet's word offset in that submission's HwQueue
  Transfer transfer = Transfer::None;  // copies: which way
};

}  // namespace sluice::hcq
