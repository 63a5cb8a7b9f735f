#pragma once
// The JSON Schema of a results file (docs/results.schema.json), made by the
// program from its declarations: the counters (counter_units.hpp), the axes
// (axes.hpp) and the API traits' enums, over a base that holds what no
// declaration says (Google Benchmark's fields, the context). `heapbench
// schema` prints it; CI checks the committed file is this.
#include <nlohmann/json.hpp>

namespace heapbench {

nlohmann::ordered_json results_schema();

}  // namespace heapbench
