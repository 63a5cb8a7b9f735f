#pragma once
// Registration of every case with Google Benchmark.
#include <string>
#include <vector>

#include "heapbench/backend.hpp"
#include "heapbench/case.hpp"

namespace heapbench {

// Google Benchmark appends this to the name of every case timed with
// UseManualTime(); --benchmark_filter sees it too.
inline constexpr const char* kManualTimeSuffix = "/manual_time";

struct RunConfig {
  Backend* backend;
  double kernel_budget_s;
  int fixed_iterations = 0;  // --profile: this many timed rounds per case, no calibration
};

// The name Google Benchmark gives a case: case_name(), then "/iterations:N"
// under --profile, then kManualTimeSuffix. --benchmark_filter matches this.
std::string benchmark_name(const Case& c, const RunConfig& cfg);

// Registers the cases in the order given (run order).
void register_cases(const std::vector<Case>& cases, const RunConfig& cfg);

}  // namespace heapbench
