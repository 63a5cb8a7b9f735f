#include "heapbench/case.hpp"

#include <fmt/format.h>

#include "heapbench/catalog.hpp"

#include <algorithm>
#include <regex>
#include <stdexcept>

namespace heapbench {

std::string_view limit_key(Limit limit) { return limit == Limit::printf_fifo ? "printf_fifo" : "malloc_heap"; }
std::string_view limit_label(Limit limit) { return limit == Limit::printf_fifo ? "fifo" : "heap"; }

Limit Case::limit() const { return limit_of(pattern); }

std::string case_name(const Case& c) {
  std::string name = fmt::format("{}/{}/size:{}", c.pattern, c.api, c.size);
  if (c.align != 0) name += fmt::format("/align:{}", c.align);
  name += fmt::format("/threads:{}/{}:{}", c.threads, limit_label(c.limit()), c.limit_bytes / kMiB);
  return name;
}

std::vector<bool> filter_matches(const std::vector<std::string>& names, const std::string& filter) {
  // Mirrors Google Benchmark's FindBenchmarks: "" and "all" mean everything; a
  // leading '-' keeps the names that do not match; the rest is an extended regex.
  std::string spec = filter.empty() || filter == "all" ? "." : filter;
  bool negate = false;
  if (!spec.empty() && spec.front() == '-') {
    negate = true;
    spec.erase(0, 1);
  }
  std::regex re;
  try {
    re = std::regex(spec, std::regex::extended);
  } catch (const std::regex_error& e) {
    throw std::invalid_argument(fmt::format("--benchmark_filter='{}' is not a valid regex: {}", filter, e.what()));
  }
  std::vector<bool> out;
  out.reserve(names.size());
  for (const auto& name : names) out.push_back(std::regex_search(name, re) != negate);
  return out;
}

std::size_t count_matching(const std::vector<std::string>& names, const std::string& filter) {
  const auto m = filter_matches(names, filter);
  return static_cast<std::size_t>(std::count(m.begin(), m.end(), true));
}

}  // namespace heapbench
