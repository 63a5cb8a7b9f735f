#pragma once
// The docs' lists of axes, made from the axis table (axes.hpp) as the names,
// axis_values and the schema are: `heapbench schema --doc=NAME` prints them and
// scripts/regen-docs puts them between the markers of docs/json.md and
// docs/cli.md (the test results_schema fails while they differ).
#include <string>
#include <string_view>
#include <vector>

namespace heapbench {

// The names --doc takes, in order: "axis-values" (docs/json.md's table of
// axis_values' keys) and "swept-flags" (docs/cli.md's headings of the swept
// axes' flags).
const std::vector<std::string_view>& axis_doc_names();
// The markdown of one of them; throws std::invalid_argument for another name.
std::string axis_doc(std::string_view name);

}  // namespace heapbench
