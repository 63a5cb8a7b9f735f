#pragma once
// What a pattern is, as the host needs to know it: its name and the facts the
// sweep, the catalog and the case name read. Plain C++ (the host side builds
// without CUDA headers).
//
// A pattern is one file, src/patterns/<stem>.cu, and one CMake line,
// heapbench_pattern(<stem>). The file opens with its traits, inside
// `#ifdef HEAPBENCH_PATTERN_TRAITS_ONLY`: `patterns::<name>_traits` for each
// pattern it runs and `patterns::<stem>_patterns`, their list. The rest of the
// file (`#else`) is its kernels and `detail::make_<stem>(traits, case,
// budget)`. The CMake line compiles the file into the device library and
// appends it to the generated cases/pattern_list.hpp, which includes the
// traits part of every file: cases/catalog.hpp builds kPatternTraits from
// the lists, src/device/pattern_registry.cu pairs each list with its factory.
#include <array>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string_view>

#include "heapbench/api_traits.hpp"
#include "heapbench/case.hpp"  // Limit: the device limit a pattern's cases set

namespace heapbench {

// The API sources (ApiTraits::source) a pattern takes, as a bit set.
constexpr unsigned source_bit(Source s) { return 1u << static_cast<unsigned>(s); }
inline constexpr unsigned kHeapSources = source_bit(Source::device_heap) | source_bit(Source::own_arena);

// The most axes beyond size, align, threads and the limit (the workloads')
// that one pattern takes.
inline constexpr std::size_t kMaxPatternAxes = 4;

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
  // Its launches get this many times --kernel-budget-ms: a launch that must wait
  // for the host (printf into a full FIFO) needs more than an allocating one.
  double budget_factor = 1.0;
  // The axes beyond size, align, threads and the limit that it takes (the
  // workloads'), by their keys in the axis table (cases/axes.hpp): its case
  // names and axis_values carry them, no other pattern's do.
  std::array<std::string_view, kMaxPatternAxes> axes{};

  constexpr bool takes(Source s) const { return (sources & source_bit(s)) != 0; }

  // For the pattern files' definitions: a copy with one fact changed.
  constexpr PatternTraits with_stack() const { return with(&PatternTraits::sources, sources | source_bit(Source::stack)); }
  constexpr PatternTraits with_call_paths() const { return with(&PatternTraits::call_paths, true); }
  constexpr PatternTraits filling_heap() const { return with(&PatternTraits::fills_heap, true); }
  constexpr PatternTraits budget_times(double f) const { return with(&PatternTraits::budget_factor, f); }
  constexpr PatternTraits in_own_sweep() const { return with(&PatternTraits::own_sweep, true); }
  // .with_axes("size_min", "load_pct"): keys of the axis table's rows
  // (AxisPresence::pattern_takes; a host test holds every key to one).
  template <class... Keys>
  constexpr PatternTraits with_axes(Keys... keys) const {
    PatternTraits t = *this;
    for (std::string_view key : {std::string_view(keys)...}) {
      std::size_t i = 0;
      while (i < t.axes.size() && !t.axes[i].empty()) ++i;
      if (i == t.axes.size()) throw std::logic_error("a pattern takes at most kMaxPatternAxes axes");
      t.axes[i] = key;
    }
    return t;
  }
  constexpr bool takes_axis(std::string_view key) const {
    for (std::string_view a : axes) {
      if (!a.empty() && a == key) return true;
    }
    return false;
  }
  constexpr PatternTraits shared_by(std::uint64_t threads) const { return with(&PatternTraits::threads_per_call, threads); }
  constexpr PatternTraits limited_by(Limit l, unsigned source_bits) const {
    return with(&PatternTraits::limit, l).with(&PatternTraits::sources, source_bits);
  }
  constexpr PatternTraits sizes(std::uint64_t lo, std::uint64_t hi, std::uint64_t step) const {
    return with(&PatternTraits::min_size, lo).with(&PatternTraits::max_size, hi).with(&PatternTraits::size_step, step);
  }
  template <class T>
  constexpr PatternTraits with(T PatternTraits::*field, T value) const {
    PatternTraits t = *this;
    t.*field = value;
    return t;
  }
  constexpr bool valid_size(std::uint64_t size) const {
    return size >= min_size && size <= max_size && size % size_step == 0;
  }
};

// A pattern file's traits, in the order they are listed (--help, the sweeps).
template <std::size_t N>
using PatternList = std::array<const PatternTraits*, N>;

}  // namespace heapbench
