#pragma once
// Every benchmark entry of a results file carries its case's axes as JSON
// fields, "axis_values" (as nvbench writes each state's), so a reader takes
// them from there and never parses the name.
#include <nlohmann/json.hpp>

#include "heapbench/case.hpp"

namespace heapbench {

inline constexpr const char* kAxisValuesKey = "axis_values";

// {"pattern", "api", "size", "align" (only for an API that takes one),
// "threads", and the case's limit under limit_key(c.limit()): "malloc_heap" or
// "printf_fifo"}, in that order. size, align and the limit are bytes; all
// numbers are integers.
// Defined in src/cases/case.cpp, beside case_name.
nlohmann::ordered_json axis_values(const Case& c);

}  // namespace heapbench
