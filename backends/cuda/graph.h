#pragma once
// hcq::Graph replays as CUDA (HIP) graphs. hcq::Graph (hcq/graph.h) records a fixed list of kernels into
// one queue and resubmits it with patched arguments, telling the device which graph it replays
// (Device::submit_graph). A graph of kernels and barriers only, two kernels or more, runs as one driver
// graph: built and instantiated from its recorded items on its first replay, then launched with
// cuGraphLaunch after cuGraphExecKernelNodeSetParams updates the nodes whose launch sizes or arguments
// changed since the last replay, and destroyed when the hcq::Graph is (forget). Launching a graph costs
// one driver call instead of one per kernel. Ordinary submissions never run as driver graphs.
//
// Nodes form a chain (a stream runs a submission's kernels in order, so the chain is what the barriers
// and the in-order queue promise). A parameter update affects only later launches, never one in flight.
// The driver copies a node's argument values when the node is added or updated, so the KernelParams
// packed for a call may go when the call returns.
//
// A driver that refuses to build or update a graph (never tried on real hardware: some HIP versions
// accept only functions registered by a host binary in kernel nodes) turns graphs off for the device:
// launch() returns false before anything was enqueued, the device launches the kernels one by one, and
// disabled() keeps the driver's error.
//
// Threading: not thread-safe; the device calls it under its submission lock. Failures: hcq::Error
// naming the driver call (cuGraphLaunch).
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "backends/cuda/driver.h"

namespace sluice::cuda {

class GraphCache {
 public:
  GraphCache(const Driver& drv, std::string device) : drv_(drv), device_(std::move(device)) {}
  ~GraphCache();
  GraphCache(const GraphCache&) = delete;
  GraphCache& operator=(const GraphCache&) = delete;

  // Whether a graph's recorded queue (its packets, hcq/queue.h) can run as a driver graph.
  static bool supports(std::span<const uint64_t> words);
  // Launches the replay of hcq::Graph `graph` (words: its recorded queue) on `stream`; false (nothing
  // enqueued) when the graph is not supported or graphs are disabled.
  bool launch(uint64_t graph, std::span<const uint64_t> words, CUstream stream);
  // The hcq::Graph is gone: its driver graph is destroyed (a launch in flight completes first).
  void forget(uint64_t graph);
  // "" while graphs work, else the error that disabled them.
  const std::string& disabled() const { return disabled_; }

 private:
  struct Node {
    CUgraphNode node = nullptr;
    unsigned grid[3], block[3];
    std::vector<uint64_t> slots;  // the arguments of the last launch
  };
  struct Entry {
    CUgraph graph = nullptr;
    CUgraphExec exec = nullptr;
    std::vector<Node> nodes;
  };
  Entry build(std::span<const uint64_t> words);
  void update(Entry& e, std::span<const uint64_t> words);
  void destroy(Entry& e);

  const Driver& drv_;
  std::string device_;
  std::map<uint64_t, Entry> entries_;  // by hcq::Graph::id()
  std::string disabled_;
};

}  // namespace sluice::cuda
