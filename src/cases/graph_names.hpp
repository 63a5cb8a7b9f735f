#pragma once
// The graph axis' generated graphs (the graph workload makes them,
// workloads/graph_input.hpp): the names the options parser accepts for
// --graphs, below the workloads that build them.
#include <algorithm>
#include <array>
#include <string_view>

namespace heapbench {

inline constexpr std::array<std::string_view, 2> kGeneratedGraphs{"rmat", "grid"};

inline bool is_generated_graph(std::string_view name) {
  return std::find(kGeneratedGraphs.begin(), kGeneratedGraphs.end(), name) != kGeneratedGraphs.end();
}

}  // namespace heapbench
