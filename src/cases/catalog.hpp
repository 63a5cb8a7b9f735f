#pragma once
// What heapbench can measure: allocation patterns and device allocation APIs,
// by the names that appear in benchmark names, JSON and plots. The APIs and
// their traits are listed once, in cases/api_list.hpp (kApiTraits), which
// the host reads through api_traits_list() and find_api_traits() below;
// the patterns in their own files, gathered by CMakeLists.txt's
// heapbench_pattern() lines into cases/pattern_list.hpp (kPatternTraits, kPatterns).
#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "heapbench/api_traits.hpp"
#include "heapbench/case.hpp"
#include "cases/pattern_traits.hpp"
// Generated: each pattern file's traits section and HEAPBENCH_PATTERN_LISTS.
#include "cases/pattern_list.hpp"

namespace heapbench {

namespace detail {
template <std::size_t... N>
constexpr auto concat_patterns(const PatternList<N>&... lists) {
  PatternList<(N + ... + 0)> out{};
  std::size_t i = 0;
  auto put = [&](const auto& list) {
    for (const PatternTraits* t : list) out[i++] = t;
  };
  (put(lists), ...);
  return out;
}
template <std::size_t N>
constexpr std::array<std::string_view, N> pattern_names(const PatternList<N>& list) {
  std::array<std::string_view, N> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = list[i]->name;
  return out;
}
}  // namespace detail

// Every pattern, in the order --help lists them and the sweeps measure them.
inline constexpr auto kPatternTraits =
    detail::concat_patterns(HEAPBENCH_PATTERN_LISTS);
inline constexpr auto kPatterns = detail::pattern_names(kPatternTraits);

// The pattern named `name`, or nullptr: the one place a name becomes a pattern.
constexpr const PatternTraits* find_pattern_traits(std::string_view name) {
  for (const PatternTraits* t : kPatternTraits) {
    if (t->name == name) return t;
  }
  return nullptr;
}

// Every API heapbench knows, built or not, in the order --help lists them: the
// built-in ones and the adapters' (cases/api_list.hpp's kApiTraits, which
// on the host only src/cases/api_list.cpp includes).
const std::vector<ApiTraits>& api_traits_list();
// The names of the APIs built into this binary, in that order.
const std::vector<std::string_view>& built_api_names();
// The entry named `name` (built or not), or nullptr: the one place a name
// becomes an API.
const ApiTraits* find_api_traits(std::string_view name);
// The zoo's families and their pinned commits, "family@commit,..." (empty
// without HEAPBENCH_ZOO): the results' context records them (heapbench_zoo).
std::string_view zoo_pins();

bool is_pattern(std::string_view name);
bool is_api(std::string_view name);
// The API takes an alignment (and the case name carries align:<bytes>).
bool takes_align(std::string_view api);
// Whether a pattern x API pair exists: stack memory belongs to one thread and
// one frame, so alloca is measured per thread only (PatternTraits::sources).
bool supported(std::string_view pattern, std::string_view api);
bool supported(const PatternTraits& pattern, const ApiTraits& api);

// capacity and capacity_fill: fills to the first NULL, measured against the
// heap's size rather than per round of allocate/use/free.
bool is_capacity_family(std::string_view pattern);

// malloc_fnptr, bump_fnptr, malloc_nvfunction, bump_nvfunction: an allocator
// reached through an indirect call, measured in per_thread and per_thread_latency.
bool is_call_path(std::string_view api);

// Why an API that heapbench knows is missing from this build's built_api_names() (the
// toolkit it was configured with cannot build it), or "" if it is built or
// unknown. --help and --apis tell the user this instead of "unknown name".
std::string not_built_reason(std::string_view api);

// What this build's toolkit could not build, and why, for --apis' help:
// "; a,b not built: why" for each reason, the APIs sharing one named together
// in api_traits_list()'s order ("" where every API is built).
std::string not_built_note();

// Why a case that the planner lists cannot be measured with its API
// (ApiTraits::min_heap, max_size: an allocator of the zoo, docs/zoo.md), or ""
// if it can. The run reports such a case as an error with this reason, never a
// number.
std::string contract_skip_reason(const Case& c);
std::string contract_skip_reason(const Case& c, const ApiTraits& api);  // with these traits
// A fault heapbench knows of in what a case calls, not in heapbench (a case
// of it that ends in a CUDA error says so, naming the note and its
// reproducer): "" for every other case. docs/notes/ holds the notes.
std::string known_fault(const Case& c);

// Whether `size` means something for the pattern (PatternTraits::valid_size):
// printf's size is the bytes of arguments per call, whole 8-byte arguments from
// 8 to 64; any size > 0 elsewhere.
bool valid_size(std::string_view pattern, std::uint64_t size);

// The device limit a pattern's cases set (the one place a pattern maps to it):
// printf sets its FIFO (cudaLimitPrintfFifoSize), every other pattern the
// device heap (cudaLimitMallocHeapSize). Either is given in MiB by --heaps.
Limit limit_of(std::string_view pattern);

// "device_heap", "own_arena", "stack", "printf_fifo"; "direct", "function_pointer", "nvfunction".
std::string_view source_key(Source source);
std::string_view call_path_key(CallPath path);
// Every one of them, in the enums' order (the results schema's enums).
std::vector<std::string_view> source_keys();
std::vector<std::string_view> call_path_keys();

// The results file's "apis" block: every API built into this binary by name,
// {order, source, baseline, display_name, takes_align, frees, call_path[, inner]}
// ("order": its place in api_traits_list(), which a reader sorting keys loses).
nlohmann::ordered_json apis_json();

}  // namespace heapbench
