#pragma once
// BEAM search (SLUICE_BEAM=n, DESIGN.md §5): a kernel's optimization actions chosen by timing candidate
// kernels on the device, instead of the hand-coded heuristic's.
//
// The search: the heuristic's kernel and the plain kernel are timed first; then a beam of the n fastest
// action lists grows one action at a time (codegen/search.h gives every kernel one action further), each
// round's candidates compiled in batches (in parallel where the compiler allows) and each timed by the
// device's profile record of its run (the fastest of a few runs), until a round finds nothing faster or the
// kernel's time budget is spent (counted from the end of round 0; the first batch after it always runs).
// A candidate that fails to compile, fails on the device or runs past its deadline is skipped with its
// reason (SLUICE_DEBUG >= 1 logs it), never chosen.
//
// The winner is checked before it is kept: its outputs from random inputs are compared with the reference
// evaluator of the kernel AST (core/eval/kernel_eval.h), every output element of a small kernel and an
// even sample of a large one. A winner that disagrees is dropped and the next fastest checked, up to the
// three fastest; the heuristic's actions are the fallback. The result is cached on disk, keyed by the
// SHA-256 of the AST, the device, its compiler's target and the beam width, in `<cache dir>/beam/`, so a
// later process reads it and times nothing (an entry whose actions no longer apply is searched again; a
// search that timed nothing past round 0 is not cached). A kernel with nothing to launch is not searched.
// Each candidate runs once untimed before its timed runs (a first launch pays for what later ones reuse).
// Buffers for the timing are the search's own (never a user's). The search turns the device's profiling on
// around each run and takes its records: records of other work that complete meanwhile are taken with them (a
// SLUICE_PROFILE trace misses those).
//
// Threading: any thread; the device must not be used by this call's caller meanwhile for anything it
// waits on. Failures of the device itself (lost, hung past the hang policy) throw hcq errors; realize
// catches any error of a search, logs it and builds the kernel with the heuristic's actions.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/codegen/kernel.h"
#include "core/codegen/search.h"
#include "core/ir/uop.h"
#include "hcq/device.h"
#include "renderers/renderer.h"

namespace sluice {

struct BeamOptions {
  int width = 0;          // beam width (SLUICE_BEAM); 0: no search
  double budget_s = 30;   // search time per kernel (SLUICE_BEAM_BUDGET), checked between batches of 8
                          // candidates, the first always timed (round 0 and the check of the winner come
                          // on top)
  int repeats = 3;        // timed runs per candidate (the fastest counts)
  bool use_cache = true;  // read and write the disk cache
  // Test hook: called for each candidate before it is compiled; an Error it throws skips the candidate,
  // and a kernel it returns replaces the candidate's (a wrong kernel, to see the check refuse it).
  std::function<void(codegen::Candidate&)> probe;
};

// SLUICE_BEAM and SLUICE_BEAM_BUDGET; read on every call (cheap). ValueError naming the variable and its
// text when either is not a number in range (width 0 to 64, budget > 0 seconds).
BeamOptions beam_options_from_env();

struct BeamResult {
  std::vector<codegen::Opt> opts;  // the actions to build the kernel with
  bool from_cache = false;
  // The winner's and the heuristic kernel's time (cached: as stored; heuristic_us 0 where its kernel was
  // skipped).
  double best_us = 0, heuristic_us = 0;
  size_t timed = 0;                   // candidates timed
  std::vector<std::string> skipped;   // "<opts>: <reason>" for each candidate skipped
  std::vector<std::string> rejected;  // "<opts>: <mismatch>" for each winner the check refused
};

// The actions for `ast` (a compute kernel AST) on `dev`, rendered and sized by `target`.
BeamResult beam_search(const UOp& ast, hcq::Device& dev, const render::Target& target, const BeamOptions& o);

// The cache file a search for (ast, dev, width) reads and writes; empty when the device's compiler has no
// cache directory.
std::string beam_cache_path(const UOp& ast, hcq::Device& dev, int width);

}  // namespace sluice
