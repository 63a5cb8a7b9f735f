#pragma once
// A round's phases enqueued in order, each inside its NVTX range: the harness's
// part of running a Round (src/measure/backend.hpp), apart from the
// seam itself. The GPU tests compile src/measure/round_phases.cpp too, without the harness.
#include <cstdint>

#include "measure/backend.hpp"

namespace heapbench {

// Enqueues one round, each phase inside its NVTX range with `index` (the
// round's number, -1 for warm-up rounds) as payload. With `cost`, the kernels
// of its allocate phase add their cost to it (Backend::watch_kernels).
void enqueue_round(Round& round, std::int64_t index, Backend* backend = nullptr, KernelCost* cost = nullptr);
// One round by itself, without a hold: enqueue_round, then collect() inside the
// `verify` range (the harness's batches do the same around Backend::end_batch).
IterationResult run_round(Round& round, std::int64_t index);

}  // namespace heapbench
