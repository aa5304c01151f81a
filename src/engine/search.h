// BEAM search (BEAM=N): the opts for a kernel, found by timing candidates on the device.
//
// Start from the unoptimized kernel and the default heuristics; each round applies every action to
// every kernel in the beam, compiles the new candidates (in parallel), times them on scratch copies of
// the output buffers (inputs are only read), skips those that fail to build and those far slower than
// the best, and keeps the N fastest. It stops when a round finds nothing faster or the time budget
// (BEAM_TIME_LIMIT seconds, default 60) is spent. The winner is cached on disk per (AST, device,
// compiler, N), so another process with the same kernel does not search again. At the end, the
// heuristic's kernel and each round's winner are timed again in turns, and the fastest is the result.
#pragma once
#include <cstdint>
#include <vector>

#include "codegen/kernel.h"
#include "runtime/device.h"

namespace tg {

// The opts to apply to `k` (which has none yet) on `device`; bufs are the kernel's buffers, outputs
// first (n_outputs of them).
std::vector<Opt> beam_search(const Kernel& k, const std::string& device, const std::vector<Buffer*>& bufs, size_t n_outputs, int width);

// The actions BEAM tries on each kernel of its beam (an invalid one is skipped: KernelOptError).
std::vector<Opt> beam_actions();

// Searches actually run in this process (not answered from the disk cache).
int64_t beam_searches_run();

// "UPCAST 1 16;UNROLL 0 4": the cache format of an opt list, and back.
std::string opts_to_string(const std::vector<Opt>& opts);
std::vector<Opt> opts_from_string(const std::string& s);

}  // namespace tg
