#pragma once
// What a program run through heapbench (docs/apps.md) tells the runner: the
// GPU time of its timed section end to end, each kernel's GPU time (those that
// allocate apart from those that do not), the calls that returned NULL, and a
// hash of its output, which the runner holds against the program's run on
// CUDA's heap. Host code; events are recorded on the default stream.
//
//   heapbench::app::Report report("grid_points");
//   report.begin();                                            // the timed section starts
//   report.launch("sort_points", true, [&] { sort_points_k<<<g, b>>>(...); });
//   report.launch("free_grid", true, [&] { free_grid_k<<<g, b>>>(...); });
//   report.end();                                              // ... and ends
//   report.output(heapbench::app::fnv1a(host_result.data(), bytes));
//   report.write(heap.nulls());
//
// write() writes JSON to the path in HEAPBENCH_APP_REPORT (to a temporary name,
// renamed: heapbench/atomic_file.hpp), or one line to stdout without it.
//
// Built with HEAPBENCH_TRACE=1 (the recording build heapbench_add_app makes,
// cmake/apps.cmake) and with HEAPBENCH_APP_TRACE naming a file, the Report also
// records the launches that allocate (launch(..., true, ...)) into that trace
// (heapbench/trace_recorder.hpp): one trace launch per launch(), its shape taken
// from its events (a launch() may run several kernels), none for one that
// recorded no event; write() finishes the file. Every other build records
// nothing and pays nothing for it.
//
// Report is BasicReport<CudaEvents>: its times are CUDA events'. A program on
// heapbench's stand-in device (tests/apps/standin_list.cpp, whose kernels run
// on the CPU) gives it a clock of its own with CudaEvents' members, and writes
// the same report through the same code.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "heapbench/app_objects.hpp"  // fnv1a
#include "heapbench/atomic_file.hpp"
#include "heapbench/trace_recorder.hpp"

namespace heapbench::app {

inline constexpr int kReportVersion = 1;

// A Report's clock: CUDA events on the default stream, made, recorded, read in
// milliseconds and destroyed; check_launch() throws with what failed.
struct CudaEvents {
  using Event = cudaEvent_t;
  static Event make() {
    Event e = nullptr;
    check(cudaEventCreate(&e), "cudaEventCreate");
    return e;
  }
  static void record(Event e) { check(cudaEventRecord(e), "cudaEventRecord"); }
  static double ms(Event from, Event to) {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, from, to), "cudaEventElapsedTime");
    return ms;
  }
  static void destroy(Event e) { cudaEventDestroy(e); }
  // After launching `what` (its launch's error), or with `wait` once the last kernel is done (its error).
  static void check_launch(const char* what, bool wait) {
    check(wait ? cudaDeviceSynchronize() : cudaGetLastError(), what);
  }

 private:
  static void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw std::runtime_error(std::string("heapbench::app: ") + what + ": " + cudaGetErrorString(e));
  }
};

template <class Clock>
class BasicReport {
 public:
  explicit BasicReport(std::string program) : program_(std::move(program)) {}
  ~BasicReport() {
    for (auto& l : launches_) destroy(l.events);
    destroy(section_);
  }
  BasicReport(const BasicReport&) = delete;
  BasicReport& operator=(const BasicReport&) = delete;

  void begin() {
    if (HEAPBENCH_TRACE && recorder_ == nullptr) {
      const char* trace = std::getenv("HEAPBENCH_APP_TRACE");
      if (trace != nullptr && *trace != '\0') recorder_ = std::make_unique<trace::Recorder>(trace);
    }
    section_ = make();
    Clock::record(section_.first);
  }
  void end() {
    if (section_.first == Event{}) throw std::logic_error("heapbench::app::Report: end() before begin()");
    Clock::record(section_.second);
  }
  // Runs `launch` (one kernel launch, or several that count as one kernel)
  // between two events; `allocates`: its kernels call the allocator (and,
  // recording, are one launch of the trace).
  template <class F>
  void launch(const std::string& kernel, bool allocates, F&& f) {
    Timed t{kernel, allocates, make()};
    const bool recorded = HEAPBENCH_TRACE && allocates && recorder_ != nullptr;  // folded away in a measured build
    if (recorded) recorder_->begin();
    Clock::record(t.events.first);
    f();
    Clock::check_launch(("launching " + kernel).c_str(), false);
    Clock::record(t.events.second);
    launches_.push_back(std::move(t));
    if (recorded) recorder_->end();
  }
  void output(std::uint64_t hash) { hash_ = hash; has_hash_ = true; }
  // Extra figures the program reports (steps run, objects alive at the end, ...).
  void figure(const std::string& name, double value) { figures_[name] = value; }

  void write(unsigned long long nulls) {
    Clock::check_launch("the program's last kernel", true);
    if (!has_hash_) throw std::logic_error("heapbench::app::Report: no output() given: the runner needs the hash");
    nlohmann::json k = nlohmann::json::object();
    double alloc_ms = 0, other_ms = 0;
    for (const auto& l : launches_) {
      const double ms = elapsed(l.events);
      auto& e = k[l.kernel];
      e["allocates"] = l.allocates;
      e["launches"] = e.value("launches", 0) + 1;
      e["ms"] = e.value("ms", 0.0) + ms;
      (l.allocates ? alloc_ms : other_ms) += ms;
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash_));
    nlohmann::json j = {
        {"version", kReportVersion},        {"program", program_},
        {"section_ms", elapsed(section_)},  {"alloc_kernels_ms", alloc_ms},
        {"other_kernels_ms", other_ms},     {"kernels", k},
        {"nulls", nulls},                   {"output_hash", hex},
        {"figures", figures_},
    };
    if (recorder_ != nullptr) {
      recorder_->finish();
      j["trace"] = {{"launches", recorder_->launches()}, {"empty_launches", recorder_->empty_launches()}};
    }
    const char* path = std::getenv("HEAPBENCH_APP_REPORT");
    if (path == nullptr || *path == '\0') {
      std::printf("%s\n", j.dump().c_str());
      return;
    }
    AtomicFile f(path);
    f.write(j.dump(1) + "\n");
    f.commit();
  }

 private:
  using Event = typename Clock::Event;
  using Events = std::pair<Event, Event>;
  struct Timed {
    std::string kernel;
    bool allocates;
    Events events;
  };
  static Events make() {
    Events e{};
    e.first = Clock::make();
    e.second = Clock::make();
    return e;
  }
  static void destroy(Events& e) {
    if (e.first != Event{}) Clock::destroy(e.first);
    if (e.second != Event{}) Clock::destroy(e.second);
    e = {};
  }
  static double elapsed(const Events& e) {
    if (e.first == Event{}) throw std::logic_error("heapbench::app::Report: the timed section was never begun");
    return Clock::ms(e.first, e.second);
  }

  std::string program_;
  Events section_{};
  std::vector<Timed> launches_;
  std::map<std::string, double> figures_;
  std::uint64_t hash_ = 0;
  bool has_hash_ = false;
  std::unique_ptr<trace::Recorder> recorder_;  // recording: HEAPBENCH_TRACE=1 and HEAPBENCH_APP_TRACE set
};

using Report = BasicReport<CudaEvents>;

}  // namespace heapbench::app
