#pragma once
// The device of the CUDA and HIP backends: hcq's queue contract (hcq/queue.h, hcq/device.h) over driver
// streams, written once against the Driver table (driver.h). backends/cuda/device.cpp and
// backends/hip/device.cpp only find the GPU, describe it and pick its compiler.
//
// Each hardware queue is an hcq::CommandProcessor (hcq/command_processor.h): host-held waits,
// skip-and-fail, completion lists applied in record order with clamped times, in-order retirement,
// status, hang reset and shutdown are hcq's. This backend supplies the encoder and the completion
// primitive:
//   hardware queue   one non-blocking stream each: compute:0 and copy:0; copies use cuMemcpyAsync on
//                    unified addresses (device buffers, or pinned host memory)
//   exec             cuLaunchKernel(global blocks of local threads, KernelParams)
//   signal(s, v)     where the device has 64-bit stream memory operations, cuStreamWriteValue64 of v
//                    into s's device word (below); then an event recorded on the stream (its time is
//                    s's timestamp; a segment ending in a signal uses it as its end event)
//   wait(s, v)       if one of this device's streams has a pending write of at least v to s:
//                    cuStreamWaitEvent on that write's event (an order the driver's scheduler sees: one
//                    made by memory operations alone may deadlock, as cuStreamWaitValue64's documentation
//                    warns), then, with memory operations, cuStreamWaitValue64(s's device word >= v): the
//                    wait stays on the GPU; otherwise (a host set(), another device, a write not launched
//                    yet) the command processor holds the rest of the submission on the host; when the
//                    other stream records a write of s it offers the wait again, or that stream's thread
//                    records the waiting submission itself (CommandProcessor::written, can_encode_wait)
//   timestamp(s)     an event recorded on the stream
//   memory_barrier   nothing: a stream runs its commands one after another
//   segment          what was launched since the last one, ended by an event; waiting for a segment
//                    polls that event (spinning briefly, then backing off to sleeping)
//   graph replays    kernels+barriers only (hcq::Graph): one driver graph (graph.h); single launches
//                    when the driver has no graphs or refused to build one
//
// Device words: a GPU cannot write an hcq::Signal's value directly without breaking the Signal's
// contract (hcq/signal.h): its host waiters sleep until woken, its value only grows, and its timestamp is
// stored before its value. So each signal that a stream of this device writes gets, while writes or
// waits on it are in flight, a device word in pinned, device-mapped host memory (cuMemHostAlloc +
// cuMemHostGetDevicePointer): streams write and await that word, and the command processor publishes the
// value to the Signal (Signal::device_write, which wakes waiters) once the write's event completed.
//
// Timestamps: event times (cuEventElapsedTime against a calibration event whose host time is known,
// moved forward every second) converted to the host clock; hcq clamps them into the window in which the
// host saw the segment run.
//
// Faults: a kernel fault is sticky in a driver context: the query that sees it fails the segment's
// signals with `[exec] CUDA: kernel fault in submission N (kernel 'k' on compute:0): cuEventQuery:
// <error name> (<driver message>)`, and every later submission of the queue fails with the same
// message. The process survives; the device stays unusable (as the driver's context does). Hangs
// (hcq/device.h): a wait that times out finds the queue's oldest segment past the hang timeout; the
// queue is abandoned with its stream (the kernel keeps running on the GPU; the stream is not destroyed,
// as some drivers block in that until the stream's work is done), its work fails, and a fresh queue on a
// fresh stream takes its place.
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
