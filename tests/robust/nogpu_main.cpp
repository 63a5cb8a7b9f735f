// heapbench's program (bench/app.cpp) over a stand-in device, for tests that
// need the program's behaviour around a device but no kernel: the results file
// under interruption, a device error in one case, and bad input judged against
// the device (a heap larger than its memory). Nothing it prints is a
// measurement. Environment:
//   HEAPBENCH_NOGPU_ROUND_MS   sleep per round (default 1)
//   HEAPBENCH_NOGPU_FAIL       cases whose name contains this fail with a DeviceError
//   HEAPBENCH_NOGPU_ABORT      cases whose name contains this abort() the process
//   HEAPBENCH_NOGPU_HANG       cases whose name contains this never return (as a
//                              thread spinning inside an allocator), for --case-timeout;
//                              the workloads' and replay's too
//   HEAPBENCH_NOGPU_DEVICES    device count (default 1)
//   HEAPBENCH_NOGPU_MEASURING_MS  capacity's and printf's rounds also sleep this
//                              long beside their timed launch and report it as their
//                              measuring work (capacity's fills, printf's drain;
//                              default 0)
//   HEAPBENCH_NOGPU_ROUND_NOISE  rounds report 2 ms x (1 +- this), alternately (default 0)
//   HEAPBENCH_NOGPU_TRACE      a file this appends one line to for each use of the
//                              device (heap set-up, round), so a test can tell
//                              that nothing ran
//   HEAPBENCH_NOGPU_CAPACITY   a heap model: calls succeed until the bytes they hold
//                              would pass this fraction of the heap, the rest return
//                              NULL (unset: every call succeeds), for heapbench advise
//   HEAPBENCH_NOGPU_ENERGY_W   a stand-in energy counter: this many watts, the counter
//                              moving every HEAPBENCH_NOGPU_ENERGY_UPDATE_MS (default 1) ms
//                              of wall time (unset: no energy counter, as without NVML)
//   HEAPBENCH_NOGPU_BREAK      drop or overlap: the workloads' strategies broken on purpose
//                              (tests/workloads/cpu_rounds.hpp), for their verifiers
//   size_map cases report block addresses whose stride is the request plus 16 B,
//   rounded up to a power of two (at least 32 B): size classes a test can find.
//   The workloads (output, graph, hash) run for real on the CPU, with the host's
//   allocator for every API (tests/workloads/cpu_rounds.hpp).
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "app.hpp"
#include "cases/case_naming.hpp"
#include "cpu_rounds.hpp"
#include "cases/catalog.hpp"
#include "cases/mixed_sizes.hpp"

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
  SleepingRound(const Case& c, std::uint64_t heap) : c_(c), heap_(heap) {}
  void begin() override {}
  void allocate() override {
    trace("round " + case_name(c_));
    std::this_thread::sleep_for(std::chrono::milliseconds(std::stoi(env("HEAPBENCH_NOGPU_ROUND_MS", "1"))));
    if (measures_beside()) std::this_thread::sleep_for(std::chrono::milliseconds(measuring_ms()));
    const std::string fail = env("HEAPBENCH_NOGPU_FAIL", "");
    if (!fail.empty() && case_name(c_).find(fail) != std::string::npos) {
      throw DeviceError("stand-in device: an illegal address in " + case_name(c_));
    }
    const std::string crash = env("HEAPBENCH_NOGPU_ABORT", "");
    if (!crash.empty() && case_name(c_).find(crash) != std::string::npos) std::abort();
    const std::string hang = env("HEAPBENCH_NOGPU_HANG", "");
    while (!hang.empty() && case_name(c_).find(hang) != std::string::npos) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  }
  IterationResult collect() override {
    IterationResult r;
    r.tally.attempts = r.tally.successes = r.tally.frees = c_.threads;
    const double noise = std::stod(env("HEAPBENCH_NOGPU_ROUND_NOISE", "0"));
    const double scale = 1 + ((rounds_++ % 2) ? noise : -noise);
    r.tally.alloc_seconds = r.tally.free_seconds = 1e-3 * scale;
    r.timed_seconds = 2e-3 * scale;
    if (measures_beside()) r.measuring_seconds = 1e-3 * measuring_ms();
    if (const char* frac = std::getenv("HEAPBENCH_NOGPU_CAPACITY")) fill_model(r, std::stod(frac));
    if (c_.pattern_name() == "size_map") {
      std::uint64_t stride = 32;
      while (stride < c_.size + 16) stride *= 2;
      BlockAddresses blocks;
      for (std::uint64_t i = 0; i < c_.threads; ++i) blocks.addresses.push_back((1ull << 32) + i * stride);
      r.observed.put(std::move(blocks));
    }
    return r;
  }
  std::unique_ptr<Reducer> reducer() const override {
    if (c_.pattern_name() != "size_map") return Round::reducer();
    return combine(allocation_reducer(), stride_reducer());
  }

 private:
  // Calls in thread order take bytes until the next would pass `fraction` of
  // the heap: the fail rate falls as the heap grows, as on a GPU.
  void fill_model(IterationResult& r, double fraction) {
    const std::uint64_t per_call = c_.pattern->threads_per_call;
    const std::uint64_t calls = (c_.threads + per_call - 1) / per_call;
    const double room = fraction * static_cast<double>(heap_);
    std::uint64_t held = 0, ok = 0;
    for (std::uint64_t i = 0; i < calls; ++i) {
      const std::uint64_t bytes = c_.pattern_name() == "per_thread_mixed" ? mixed_size(i, c_.size) : c_.size * per_call;
      if (static_cast<double>(held + bytes) > room) continue;
      held += bytes;
      ++ok;
    }
    r.tally.attempts = calls;
    r.tally.successes = r.tally.frees = ok;
    r.tally.bytes = held;
  }

  bool measures_beside() const { return c_.pattern_name() == "capacity" || c_.pattern_name() == "printf"; }
  static int measuring_ms() { return std::stoi(env("HEAPBENCH_NOGPU_MEASURING_MS", "0")); }

  Case c_;
  std::uint64_t heap_;
  int rounds_ = 0;
};

class StandInBackend final : public Backend {
 public:
  Heap ensure_limit(std::uint64_t bytes) override {
    trace("heap " + std::to_string(bytes));
    const bool reset = (current_ != 0 && current_ != bytes) || dirty_;
    current_ = bytes;
    dirty_ = false;
    resets += reset;
    return {bytes, reset};
  }
  void invalidate() override { dirty_ = true; }
  std::uint64_t probe_capacity(std::uint64_t heap_bytes) override { return heap_bytes / 2; }
  std::unique_ptr<Round> make_round(const Case& c, double) override {
    const std::string hang = env("HEAPBENCH_NOGPU_HANG", "");
    if (!hang.empty() && case_name(c).find(hang) != std::string::npos) return std::make_unique<SleepingRound>(c, current_);
    if (auto r = workloads::cpu::make_round(c, workloads::cpu::break_named(env("HEAPBENCH_NOGPU_BREAK", "")))) {
      trace("round " + case_name(c));
      return r;
    }
    return std::make_unique<SleepingRound>(c, current_);
  }
  int resets = 0;

 private:
  std::uint64_t current_ = 0;
  bool dirty_ = false;
};

// A counter of energy that grows with wall time, in steps.
class StandInEnergy final : public energy::Reader {
 public:
  StandInEnergy(double watts, double update_s) : watts_(watts), update_s_(update_s) {}
  std::uint64_t total_energy_mj() override {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    return static_cast<std::uint64_t>(std::floor(s / update_s_) * update_s_ * watts_ * 1e3);
  }
  std::optional<double> power_w() override { return watts_; }
  std::optional<std::uint64_t> clock_event_reasons() override { return energy::kSwPowerCap; }
  std::string device() const override { return "stand-in"; }

 private:
  double watts_, update_s_;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

energy::Opened stand_in_energy(const DeviceInfo&) {
  const std::string watts = env("HEAPBENCH_NOGPU_ENERGY_W", "");
  if (watts.empty()) return {nullptr, "stand-in device: no energy counter"};
  return {std::make_unique<StandInEnergy>(std::stod(watts), std::stod(env("HEAPBENCH_NOGPU_ENERGY_UPDATE_MS", "1")) * 1e-3),
          ""};
}

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
                                               },
                                               nullptr, heapbench::stand_in_energy});
}
