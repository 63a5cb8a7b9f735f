// Drives heapbench's real harness (bench/: case registration, warm-up, rounds,
// capacity probes, heap changes, NVTX ranges) through the Backend seam with a
// backend that needs no GPU. Its rounds do no work and report a fixed time;
// this binary exists only so the NVTX test can record the ranges the harness
// emits. Extra arguments go to Google Benchmark.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "families.hpp"

namespace heapbench {
namespace {

class IdleRound final : public Round {
 public:
  explicit IdleRound(const Case& c) : c_(c) {}
  void begin() override {}
  void allocate() override {}
  IterationResult collect() override {
    IterationResult r;
    r.tally.attempts = r.tally.successes = r.tally.frees = c_.threads;
    r.tally.bytes = c_.threads * c_.size;
    r.tally.alloc_seconds = r.tally.free_seconds = 1e-3;
    r.timed_seconds = 2e-3;
    return r;
  }

 private:
  Case c_;
};

class NoGpuBackend final : public Backend {
 public:
  Heap ensure_heap(std::uint64_t bytes) override {
    const bool reset = current_ != 0 && current_ != bytes;
    current_ = bytes;
    return {bytes, reset};
  }
  void invalidate() override {}
  std::uint64_t probe_capacity(std::uint64_t heap_bytes) override { return heap_bytes / 2; }
  std::unique_ptr<Round> make_round(const Case& c, double) override { return std::make_unique<IdleRound>(c); }

 private:
  std::uint64_t current_ = 0;
};

}  // namespace
}  // namespace heapbench

int main(int argc, char** argv) {
  using namespace heapbench;
  NoGpuBackend backend;
  const std::vector<Case> cases = {
      {"per_thread", "malloc", 64, 0, 1024, 8 * kMiB},
      {"per_warp", "malloc", 64, 0, 2048, 8 * kMiB},
      {"per_thread", "malloc", 64, 0, 4096, 64 * kMiB},
  };
  register_cases(cases, RunConfig{&backend, 5.0, 2});
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  return benchmark::RunSpecifiedBenchmarks() == cases.size() ? 0 : 1;
}
