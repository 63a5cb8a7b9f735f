#include "heapbench/sweep.hpp"

#include <algorithm>
#include <tuple>

namespace heapbench {

Sweep default_sweep() {
  Sweep s;
  // Powers of two cover the size classes; 24, 100, 1000 and 3000 sit between
  // them, so rounding inside the allocator shows up as a step.
  s.sizes = {16, 24, 64, 100, 256, 1000, 1024, 3000, 4096, 16384, 65536};
  // One warp, one block's worth of warps, full residency on a 132-SM H200
  // (132 x 2048 = 270,336 threads), and 2^20 (oversubscribed, as users do).
  s.threads = {32, 1024, 32768, 1u << 20};
  s.heaps = {8 * kMiB, 64 * kMiB, 1024 * kMiB};
  s.max_demand_fraction = 0.5;
  return s;
}

void sort_run_order(std::vector<Case>& cases) {
  std::stable_sort(cases.begin(), cases.end(), [](const Case& a, const Case& b) {
    return std::tie(a.heap, a.pattern, a.api, a.size, a.align, a.threads) <
           std::tie(b.heap, b.pattern, b.api, b.size, b.align, b.threads);
  });
}

std::vector<Case> plan_cases(const std::string& pattern, const std::string& api, const Sweep& sweep) {
  std::vector<Case> cases;
  for (auto heap : sweep.heaps) {
    for (auto size : sweep.sizes) {
      for (auto threads : sweep.threads) {
        Case c{pattern, api, size, 0, threads, heap};
        if (sweep.max_demand_fraction > 0 &&
            static_cast<double>(c.demand()) > sweep.max_demand_fraction * static_cast<double>(heap)) {
          continue;
        }
        cases.push_back(c);
      }
    }
  }
  sort_run_order(cases);
  // The same point given twice on the command line ("--sizes=1K,1024") is run once.
  cases.erase(std::unique(cases.begin(), cases.end(),
                          [](const Case& a, const Case& b) { return case_name(a) == case_name(b); }),
              cases.end());
  return cases;
}

}  // namespace heapbench
