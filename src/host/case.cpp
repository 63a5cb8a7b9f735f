#include "heapbench/case.hpp"

#include "heapbench/axis_values.hpp"

#include <fmt/format.h>

#include "heapbench/catalog.hpp"

#include <algorithm>
#include <regex>
#include <stdexcept>

namespace heapbench {

std::string_view limit_key(Limit limit) { return limit == Limit::printf_fifo ? "printf_fifo" : "malloc_heap"; }
std::string_view limit_label(Limit limit) { return limit == Limit::printf_fifo ? "fifo" : "heap"; }

Limit Case::limit() const { return pattern != nullptr ? pattern->limit : Limit::malloc_heap; }
std::string_view Case::pattern_name() const { return pattern != nullptr ? pattern->name : std::string_view{}; }
std::string_view Case::api_name() const { return api != nullptr ? api->name : std::string_view{}; }

Case make_case(std::string_view pattern, std::string_view api, std::uint64_t size, std::uint64_t align,
               std::uint64_t threads, std::uint64_t limit_bytes) {
  Case c;
  c.pattern = find_pattern_traits(pattern);
  if (c.pattern == nullptr) throw std::invalid_argument(fmt::format("unknown pattern '{}'", pattern));
  c.api = find_api_traits(api);
  if (c.api == nullptr || !c.api->built) throw std::invalid_argument(fmt::format("no API '{}' in this build", api));
  c.size = size;
  c.align = align;
  c.threads = threads;
  c.limit_bytes = limit_bytes;
  return c;
}

namespace {
bool takes(const Case& c, AxisBit bit) { return c.pattern != nullptr && c.pattern->takes_axis(bit); }
}  // namespace

// The workload axes (PatternTraits::axes) appear only in the names of the
// patterns that take them, so no other pattern's names changed with them.
std::string case_name(const Case& c) {
  std::string name = fmt::format("{}/{}/size:{}", c.pattern_name(), c.api_name(), c.size);
  if (takes(c, kAxisSizeMin)) name += fmt::format("/size_min:{}", c.size_min);
  if (c.align != 0) name += fmt::format("/align:{}", c.align);
  if (takes(c, kAxisGraph)) name += fmt::format("/graph:{}", c.graph);
  if (takes(c, kAxisTrace)) name += fmt::format("/trace:{}", c.trace);
  name += fmt::format("/threads:{}", c.threads);
  if (takes(c, kAxisLoad)) name += fmt::format("/load_pct:{}", c.load_pct);
  if (takes(c, kAxisWrites)) name += fmt::format("/writes:{}", c.writes);
  name += fmt::format("/{}:{}", limit_label(c.limit()), c.limit_bytes / kMiB);
  return name;
}

// Beside case_name: a new axis is one segment there and one key here.
nlohmann::ordered_json axis_values(const Case& c) {
  nlohmann::ordered_json v = {{"pattern", c.pattern_name()}, {"api", c.api_name()}, {"size", c.size}};
  if (takes(c, kAxisSizeMin)) v["size_min"] = c.size_min;
  if (c.align != 0) v["align"] = c.align;
  if (takes(c, kAxisGraph)) v["graph"] = c.graph;
  if (takes(c, kAxisTrace)) v["trace"] = c.trace;
  v["threads"] = c.threads;
  if (takes(c, kAxisLoad)) v["load_pct"] = c.load_pct;
  if (takes(c, kAxisWrites)) v["writes"] = c.writes;
  v[std::string(limit_key(c.limit()))] = c.limit_bytes;
  return v;
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
