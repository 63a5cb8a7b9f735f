// heapbench's program (bench/app.cpp) over a stand-in device, for tests that
// need the program's behaviour around a device but no kernel: the results file
// under interruption, a device error in one case, and bad input judged against
// the device (a heap larger than its memory). Nothing it prints is a
// measurement. Environment:
//   HEAPBENCH_NOGPU_ROUND_MS   sleep per round (default 1)
//   HEAPBENCH_NOGPU_FAIL       cases whose name contains this fail with a DeviceError
//   HEAPBENCH_NOGPU_ABORT      cases whose name contains this abort() the process
//   HEAPBENCH_NOGPU_DEVICES    device count (default 1)
//   HEAPBENCH_NOGPU_ROUND_NOISE  rounds report 2 ms x (1 +- this), alternately (default 0)
//   HEAPBENCH_NOGPU_TRACE      a file this appends one line to for each use of the
//                              device (heap set-up, round), so a test can tell
//                              that nothing ran
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "app.hpp"

namespace heapbench {
namespace {

std::string env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

void trace(const std::string& what) {
  if (const char* path = std::getenv("HEAPBENCH_NOGPU_TRACE")) std::ofstream(path, std::ios::app) << what << '\n';
}

class SleepingRound final : public Round {
 public:
  explicit SleepingRound(const Case& c) : c_(c) {}
  void begin() override {}
  void allocate() override {
    trace("round " + case_name(c_));
    std::this_thread::sleep_for(std::chrono::milliseconds(std::stoi(env("HEAPBENCH_NOGPU_ROUND_MS", "1"))));
    const std::string fail = env("HEAPBENCH_NOGPU_FAIL", "");
    if (!fail.empty() && case_name(c_).find(fail) != std::string::npos) {
      throw DeviceError("stand-in device: an illegal address in " + case_name(c_));
    }
    const std::string crash = env("HEAPBENCH_NOGPU_ABORT", "");
    if (!crash.empty() && case_name(c_).find(crash) != std::string::npos) std::abort();
  }
  IterationResult collect() override {
    IterationResult r;
    r.tally.attempts = r.tally.successes = r.tally.frees = c_.threads;
    const double noise = std::stod(env("HEAPBENCH_NOGPU_ROUND_NOISE", "0"));
    const double scale = 1 + ((rounds_++ % 2) ? noise : -noise);
    r.tally.alloc_seconds = r.tally.free_seconds = 1e-3 * scale;
    r.timed_seconds = 2e-3 * scale;
    return r;
  }

 private:
  Case c_;
  int rounds_ = 0;
};

class StandInBackend final : public Backend {
 public:
  Heap ensure_heap(std::uint64_t bytes) override {
    trace("heap " + std::to_string(bytes));
    const bool reset = (current_ != 0 && current_ != bytes) || dirty_;
    current_ = bytes;
    dirty_ = false;
    resets += reset;
    return {bytes, reset};
  }
  void invalidate() override { dirty_ = true; }
  std::uint64_t probe_capacity(std::uint64_t heap_bytes) override { return heap_bytes / 2; }
  std::unique_ptr<Round> make_round(const Case& c, double) override { return std::make_unique<SleepingRound>(c); }
  int resets = 0;

 private:
  std::uint64_t current_ = 0;
  bool dirty_ = false;
};

DeviceInfo probe(int index) {
  const int count = std::stoi(env("HEAPBENCH_NOGPU_DEVICES", "1"));
  if (index >= count) throw NoDeviceError("--device=" + std::to_string(index) + ": no such stand-in device");
  DeviceInfo d;
  d.index = index;
  d.name = "stand-in device (heapbench tests, no GPU)";
  d.total_memory = 1ull << 30;  // 1 GiB, so --heaps=1G and larger are refused
  return d;
}

}  // namespace
}  // namespace heapbench

int main(int argc, char** argv) {
  return heapbench::run_heapbench(argc, argv, {heapbench::probe, [](int) -> std::unique_ptr<heapbench::Backend> {
                                                 return std::make_unique<heapbench::StandInBackend>();
                                               }});
}
