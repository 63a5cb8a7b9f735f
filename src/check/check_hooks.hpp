#pragma once
// What `heapbench check` (bench/subcommands/check.cpp) needs from whatever runs the battery:
// the allocators it can check and, in a row's own process, a function that runs
// one row. The CUDA binary's come from src/check/check.cu (kernels on the
// GPU); the tests' from tests/check/ (the same bodies on CPU threads).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "check/check.hpp"

namespace heapbench::check {

struct RowPlan;

struct CheckApi {
  std::string name;
  Capabilities caps;
  bool free_null = false;  // free(NULL) is part of its contract (CUDA's own APIs): the edge row asks it
  bool device_heap = true; // its memory is CUDA's device heap (else its own arena)
};

struct CheckHooks {
  std::vector<CheckApi> apis;
  // In a row's process: runs the row (throws Hang for a launch that did not end).
  std::function<RowResult(const CheckApi& api, const RowPlan& plan)> run_row;
  // Empty: the sanitizer row runs the battery under compute-sanitizer where one
  // is found. Otherwise why the row is NOT RUN here.
  std::string no_sanitizer;
};

namespace gpu {
// The CUDA binary's: every allocator with a device handle (src/check/check.cu).
CheckHooks cuda_check_hooks();
}  // namespace gpu

}  // namespace heapbench::check
