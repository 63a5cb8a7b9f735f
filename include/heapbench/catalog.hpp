#pragma once
// What heapbench can measure: allocation patterns and device allocation APIs,
// by the names that appear in benchmark names, JSON and plots. The APIs and
// their traits are listed once, in heapbench/api_traits.hpp (kApiTraits, kApis);
// the patterns in their own files, gathered by CMakeLists.txt's
// heapbench_pattern() lines into heapbench/pattern_list.hpp (kPatternTraits, kPatterns).
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "heapbench/api_traits.hpp"
#include "heapbench/pattern_traits.hpp"
// Generated: each pattern file's traits section and HEAPBENCH_PATTERN_LISTS.
#include "heapbench/pattern_list.hpp"

namespace heapbench {

namespace patterns {
// Not yet in a pattern file of their own (heapbench_pattern() in CMakeLists.txt).
inline constexpr PatternTraits per_thread_traits = [] {
  PatternTraits t{"per_thread", "each thread allocates, uses and frees its own block"};
  t.sources |= source_bit(Source::stack);
  t.call_paths = true;
  return t;
}();
inline constexpr PatternTraits per_thread_mixed_traits{
    "per_thread_mixed", "per_thread with seeded sizes uniform over [min(16, size), size]"};
inline constexpr PatternTraits per_thread_latency_traits = [] {
  PatternTraits t{"per_thread_latency",
                  "per_thread with clock64 around every call (a separate family: per_thread stays clean)"};
  t.call_paths = true;
  return t;
}();
inline constexpr PatternTraits per_block_traits = [] {
  PatternTraits t{"per_block", "thread 0 allocates for the block, shares through __shared__"};
  t.threads_per_call = 256;
  return t;
}();
inline constexpr PatternTraits cross_kernel_traits{"cross_kernel",
                                                   "allocate, use and free in three launches via a __device__ table"};
inline constexpr PatternTraits cross_kernel_remote_free_traits{"cross_kernel_remote_free",
                                                               "the same, each block freed by a different thread"};
inline constexpr PatternTraits churn_traits{"churn", "seeded random allocations and frees of mixed sizes in one kernel"};
inline constexpr PatternTraits capacity_traits = [] {
  PatternTraits t{"capacity",
                  "fill to the first NULL, free every other block, refill larger: utilisation, fragmentation"};
  t.fills_heap = true;
  return t;
}();
inline constexpr PatternTraits capacity_fill_traits = [] {
  PatternTraits t{"capacity_fill",
                  "capacity's first fill only, then free: utilisation of heaps too large for the refills"};
  t.fills_heap = true;
  return t;
}();
inline constexpr PatternTraits size_map_traits = [] {
  PatternTraits t{"size_map",
                  "per_thread plus the median address stride between blocks: the allocator's size classes "
                  "(--sweep=size_map)"};
  t.own_sweep = true;
  return t;
}();
inline constexpr PatternTraits printf_traits = [] {
  PatternTraits t{"printf",
                  "not the heap: device printf into its FIFO (cudaLimitPrintfFifoSize), lines delivered and lost"};
  t.limit = Limit::printf_fifo;
  t.sources = source_bit(Source::printf_fifo);
  // the bytes of arguments per call: whole 8-byte arguments from 8 to 64
  t.min_size = 8;
  t.max_size = 64;
  t.size_step = 8;
  return t;
}();
inline constexpr PatternList<3> builtin_head = {&per_thread_traits, &per_thread_mixed_traits,
                                                &per_thread_latency_traits};
inline constexpr PatternList<8> builtin_tail = {&per_block_traits, &cross_kernel_traits,
                                                &cross_kernel_remote_free_traits, &churn_traits,
                                                &capacity_traits, &capacity_fill_traits,
                                                &size_map_traits, &printf_traits};
}  // namespace patterns

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
    detail::concat_patterns(patterns::builtin_head, HEAPBENCH_PATTERN_LISTS, patterns::builtin_tail);
inline constexpr auto kPatterns = detail::pattern_names(kPatternTraits);

// The pattern named `name`, or nullptr: the one place a name becomes a pattern.
constexpr const PatternTraits* find_pattern_traits(std::string_view name) {
  for (const PatternTraits* t : kPatternTraits) {
    if (t->name == name) return t;
  }
  return nullptr;
}



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

// Why an API that heapbench knows is missing from this build's kApis (the
// toolkit it was configured with cannot build it), or "" if it is built or
// unknown. --help and --apis tell the user this instead of "unknown name".
std::string not_built_reason(std::string_view api);

// Whether `size` means something for the pattern (PatternTraits::valid_size):
// printf's size is the bytes of arguments per call, whole 8-byte arguments from
// 8 to 64; any size > 0 elsewhere.
bool valid_size(std::string_view pattern, std::uint64_t size);

// The device limit a case's last name segment sets: "heap"
// (cudaLimitMallocHeapSize) for the heap families, "fifo"
// (cudaLimitPrintfFifoSize) for printf (PatternTraits::limit). Either is given
// in MiB by --heaps.
std::string_view limit_label(std::string_view pattern);
std::string_view limit_label(Limit limit);

}  // namespace heapbench
