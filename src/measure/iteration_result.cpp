#include "measure/iteration_result.hpp"

#include <fmt/format.h>

namespace heapbench {

std::string IterationResult::problem(double kernel_budget_s) const {
  std::string why;
  auto add = [&](const std::string& s) { why += why.empty() ? s : "; " + s; };
  if (not_started) {
    add(fmt::format("truncated: {} thread(s), summed over the round's launches, found the {:g} s kernel budget spent and stopped "
                    "(--kernel-budget-ms raises it)",
                    not_started, kernel_budget_s));
  }
  if (misaligned) add(fmt::format("{} blocks were not aligned as the API promises", misaligned));
  if (!fault.empty()) add(fault);
  if (corrupted) add(fmt::format("{} blocks did not read back what was written (overlap or corruption)", corrupted));
  return why;
}

}  // namespace heapbench
