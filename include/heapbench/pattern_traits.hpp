#pragma once
// What a pattern is, as the host needs to know it: its name and the facts the
// sweep, the catalog and the case name read. Plain C++ (the host side builds
// without CUDA headers). Each pattern file (src/device/<stem>.cu) opens with a
// section that defines its traits with this type and lists them in
// `patterns::<stem>_patterns`; the CMake line `heapbench_pattern(<stem>)` adds
// the file to the device library and to the generated list that
// heapbench/catalog.hpp reads (kPatternTraits). The device library pairs each
// list with the file's factory, `detail::make_<stem>` (src/device/pattern_registry.hpp).
#include <array>
#include <cstdint>
#include <limits>
#include <string_view>

#include "heapbench/api_traits.hpp"

namespace heapbench {

// The device limit a case of the pattern sets: its name's last segment and the
// size --heaps gives (in MiB).
enum class Limit {
  malloc_heap,  // cudaLimitMallocHeapSize
  printf_fifo,  // cudaLimitPrintfFifoSize
};

// The API sources (ApiTraits::source) a pattern takes, as a bit set.
constexpr unsigned source_bit(Source s) { return 1u << static_cast<unsigned>(s); }
inline constexpr unsigned kHeapSources = source_bit(Source::device_heap) | source_bit(Source::own_arena);

struct PatternTraits {
  std::string_view name;        // as it appears in case names, JSON and plots
  std::string_view summary;     // one line: the workload
  Limit limit = Limit::malloc_heap;
  unsigned sources = kHeapSources;  // source_bit()s of the APIs it measures
  bool call_paths = false;          // also the indirect call-path APIs (ApiTraits::is_call_path) over those sources
  bool fills_heap = false;          // fills to the first NULL, measured against the heap's size (the capacity family)
  bool own_sweep = false;           // measured only by a sweep of its own (size_map: --sweep=size_map)
  std::uint64_t threads_per_call = 1;  // threads that share one allocation call
  // Sizes that mean something for the pattern: min..max bytes in steps of `size_step`.
  std::uint64_t min_size = 1;
  std::uint64_t max_size = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t size_step = 1;

  constexpr bool takes(Source s) const { return (sources & source_bit(s)) != 0; }
  constexpr bool valid_size(std::uint64_t size) const {
    return size >= min_size && size <= max_size && size % size_step == 0;
  }
};

// A pattern file's traits, in the order they are listed (--help, the sweeps).
template <std::size_t N>
using PatternList = std::array<const PatternTraits*, N>;

}  // namespace heapbench
