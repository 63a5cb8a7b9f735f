#pragma once
// One benchmark case: a point of the sweep, and the one function that names it.
#include <cstdint>
#include <string>
#include <vector>

namespace heapbench {

inline constexpr std::uint64_t kMiB = 1024ull * 1024ull;

struct Case {
  std::string pattern;         // "per_thread", ...
  std::string api;             // "malloc", ...
  std::uint64_t size = 0;      // bytes per allocation
  std::uint64_t align = 0;     // 0: the API takes no alignment
  std::uint64_t threads = 0;   // concurrently allocating threads
  std::uint64_t heap = 0;      // cudaLimitMallocHeapSize asked for, bytes (a whole number of MiB)

  std::uint64_t demand() const { return size * threads; }
};

// `<pattern>/<api>/size:<bytes>[/align:<bytes>]/threads:<n>/heap:<MiB>`: the
// benchmark name, so --benchmark_filter reads like the axes.
std::string case_name(const Case& c);

// Which of `names` Google Benchmark would select with --benchmark_filter=`filter`
// (same rules as count_matching). Throws std::invalid_argument for a bad regex.
std::vector<bool> filter_matches(const std::vector<std::string>& names, const std::string& filter);

// How many of `names` Google Benchmark would select with --benchmark_filter=`filter`
// (same rules: empty or "all" selects all, a leading '-' negates, POSIX extended regex).
// Throws std::invalid_argument if the regex does not compile.
std::size_t count_matching(const std::vector<std::string>& names, const std::string& filter);

}  // namespace heapbench
