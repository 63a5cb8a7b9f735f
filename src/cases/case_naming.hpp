#pragma once
// The harness's functions over a Case (heapbench/case.hpp, public): making one
// from names and naming one. Defined in case.cpp, from the axis table (axes.hpp).
#include <cstdint>
#include <string>
#include <string_view>

#include "heapbench/case.hpp"

namespace heapbench {

// The case of the pattern and the built API named so, with these axis values:
// where names become traits. Throws std::invalid_argument naming an unknown
// pattern or an API not built into this binary.
Case make_case(std::string_view pattern, std::string_view api, std::uint64_t size, std::uint64_t align,
               std::uint64_t threads, std::uint64_t limit_bytes);

// `<pattern>/<api>/size:<bytes>[/align:<bytes>]/threads:<n>/heap:<MiB>` (printf:
// `fifo:<MiB>`): the benchmark name, so --benchmark_filter reads like the axes.
// Made from the axis table (src/cases/axes.hpp), as axis_values are.
std::string case_name(const Case& c);
// The same without its limit segment: the point a search over heap sizes
// (heapbench advise) moves the limit under.
std::string case_point_name(const Case& c);

}  // namespace heapbench
