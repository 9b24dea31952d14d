#pragma once
// The device of the CUDA and HIP backends: hcq's queue contract (hcq/queue.h, hcq/device.h) over driver
// streams, written once against the Driver table (driver.h). backends/cuda/device.cpp and
// backends/hip/device.cpp only find the GPU, describe it and pick its compiler.
//
// HCQ mapping
//   hardware queue   one non-blocking stream each: compute:0 and copy:0; copies use cuMemcpyAsync on
//                    unified addresses (device buffers, or pinned host memory)
//   exec             cuLaunchKernel(global blocks of local threads, KernelParams)
//   signal(s, v)     where the device has 64-bit stream memory operations, cuStreamWriteValue64 of v
//                    into s's device word (below); then an event recorded on the stream (its time is
//                    s's timestamp; a submission ending in a signal uses it as its end event)
//   wait(s, v)       nothing if s already reached v; if one of this device's streams has a pending write
//                    of at least v to s: cuStreamWaitEvent on that write's event (an order the driver's
//                    scheduler sees: one made by memory operations alone may deadlock, as
//                    cuStreamWaitValue64's documentation warns), then, with memory operations,
//                    cuStreamWaitValue64(s's device word >= v): the wait stays on the GPU;
//                    otherwise (a host set(), another device) the submission is held on the host until
//                    s reaches v, then enqueued; if s fails first the submission is skipped and the
//                    signals it would have written fail with s's error
//   timestamp(s)     an event recorded on the stream
//   memory_barrier   nothing: a stream runs its commands one after another
//   kernels+barriers only (hcq::Graph replays): one driver graph (graph.h); single launches as above
//                    when the driver has no graphs or refused to build one
//
// Device words: a GPU cannot write an hcq::Signal's value directly without breaking the Signal's
// contract (hcq/signal.h): its host waiters sleep until woken, its value only grows, and its timestamp is
// stored before its value. So each signal that a stream of this device writes gets, while writes or
// waits on it are in flight, a device word in pinned, device-mapped host memory (cuMemHostAlloc +
// cuMemHostGetDevicePointer): streams write and await that word, and the completion thread publishes
// the value to the Signal (Signal::device_write, which wakes waiters) once the write's event completed.
//
// Completion thread (one per device): it polls the oldest submission of each stream (cuEventQuery on its
// end event), retires finished ones in order (signal values and timestamps, profile records), advances
// the timeline in timeline order across both streams, and enqueues held submissions whose waits are met.
// It spins briefly after activity and then backs off to sleeping, so an idle device costs no CPU.
//
// Timestamps: event times (cuEventElapsedTime against a calibration event whose host time is known)
// converted to the host clock, clamped into [submit time, retire time] so that they always fall inside
// the host's own window.
//
// Signal lifetime (hcq/signal.h): submit takes a SignalRef to every signal the submission names; held
// submissions, the completion thread and the per-signal device words use only those, so a signal
// destroyed while its submission is pending is never touched: its writes are dropped.
//
// Faults: a kernel fault is sticky in a driver context: the completion thread sees the error on an
// event, fails every pending signal with `[exec] CUDA: kernel fault ...: cuEventQuery: <error name>
// (<driver message>)`, fails the timeline and continues on a fresh one; later submissions fail their
// signals with the same message. The process survives; the device stays unusable (as the driver's
// context does). Hangs (hcq/device.h): a wait that times out finds the stream's oldest submission past
// the hang timeout; the stream is abandoned (the kernel keeps running on the GPU; the driver frees the
// stream once it finishes), its submissions fail, and a fresh stream takes its place.
//
// Threading: hcq's. Failures: hcq::Error naming the driver call (driver.h).
#include <functional>
#include <memory>
#include <string>

#include "backends/cuda/driver.h"
#include "hcq/device.h"

namespace sluice::cuda {

struct DeviceSpec {
  const Driver* drv = nullptr;
  CUdevice device = 0;
  std::string name;       // "CUDA", "CUDA:1", "HIP"
  hcq::Properties props;  // from the device's attributes
  // The compiler for this device's exact architecture (called once, at open).
  std::function<std::unique_ptr<hcq::Compiler>()> make_compiler;
};

// Opens the device: retains its primary context, creates the streams and starts the completion thread.
// Throws hcq::Error naming the driver call that failed.
std::unique_ptr<hcq::Device> open_stream_device(DeviceSpec spec);

// Whether the device's streams write and await signal words with 64-bit stream memory operations (false:
// the event fallback). For tests and benchmarks; `dev` must come from open_stream_device.
bool uses_stream_mem_ops(const hcq::Device& dev);
// "" while hcq::Graph replays run as driver graphs; otherwise why they run as single launches (a driver
// without graphs, or the driver's error from building or updating one: graph.h). For tests and benchmarks.
std::string graphs_unavailable(hcq::Device& dev);

}  // namespace sluice::cuda
