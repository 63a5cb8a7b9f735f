#pragma once
// Registration of every case with Google Benchmark.
#include <vector>

#include "heapbench/case.hpp"
#include "heapbench/device.hpp"

namespace heapbench {

// Google Benchmark appends this to the name of every case timed with
// UseManualTime(); --benchmark_filter sees it too.
inline constexpr const char* kManualTimeSuffix = "/manual_time";

struct RunConfig {
  HeapSession* session;
  double kernel_budget_s;
};

// Registers the cases in the order given (run order).
void register_cases(const std::vector<Case>& cases, const RunConfig& cfg);

}  // namespace heapbench
