#include "measure/round_phases.hpp"

#include "measure/nvtx.hpp"

namespace heapbench {

void enqueue_round(Round& round, std::int64_t index, Backend* backend, KernelCost* cost) {
  {
    nvtx::range r{nvtx::phase(nvtx::Phase::allocate, index)};
    round.begin();
    if (cost != nullptr) backend->watch_kernels(cost);
    round.allocate();
    if (cost != nullptr) backend->watch_kernels(nullptr);
  }
  if (round.has_use_phase()) {
    nvtx::range r{nvtx::phase(nvtx::Phase::use, index)};
    round.use();
  }
  if (round.has_free_phase()) {
    nvtx::range r{nvtx::phase(nvtx::Phase::free_, index)};
    round.release();
  }
}

IterationResult run_round(Round& round, std::int64_t index) {
  round.begin_batch();
  enqueue_round(round, index);
  nvtx::range r{nvtx::phase(nvtx::Phase::verify, index)};
  return round.collect();
}

}  // namespace heapbench
