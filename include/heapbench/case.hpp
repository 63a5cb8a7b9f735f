#pragma once
// One benchmark case: a point of the sweep, what an allocator's owner is made
// for. A Case holds its pattern's and its API's traits, not their names: names
// become traits once, where a sweep is planned (plan_cases) or a case is made
// from names (make_case, cases/case_naming.hpp, with the function that names a
// case: the harness's, not this public header's); after that nothing looks a
// name up.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace heapbench {

struct PatternTraits;  // cases/pattern_traits.hpp
struct ApiTraits;      // heapbench/api_traits.hpp
struct CaseInput;      // cases/case_input.hpp: the harness's

inline constexpr std::uint64_t kMiB = 1024ull * 1024ull;

// The device limit a case sets, by the key its value has in a results file's
// axis_values. Which one a pattern sets: limit_of(pattern) (catalog.hpp).
enum class Limit {
  malloc_heap,  // cudaLimitMallocHeapSize: the device heap (and the arena of an own_arena API, as large)
  printf_fifo,  // cudaLimitPrintfFifoSize: the printf pattern's FIFO
};

// "malloc_heap" or "printf_fifo": the key of the limit in axis_values.
std::string_view limit_key(Limit limit);

struct Case {
  const PatternTraits* pattern = nullptr;  // an entry of kPatternTraits (per_thread, ...)
  const ApiTraits* api = nullptr;          // an entry of the list of APIs (find_api_traits: malloc, ...)
  std::uint64_t size = 0;      // bytes per allocation (printf: bytes of arguments per call)
  std::uint64_t align = 0;     // 0: the API takes no alignment
  std::uint64_t threads = 0;   // concurrently allocating threads
  // Bytes of the device limit limit() names, a whole number of MiB (the --heaps
  // axis). Either limit can be set only after a device reset, so cases run
  // grouped by this value (heap-major), one reset per value.
  std::uint64_t limit_bytes = 0;
  // The workloads' axes (src/workloads/, docs/workloads.md): a pattern names the
  // ones it takes (PatternTraits::axes); every other pattern leaves them at
  // their defaults, which case_name and axis_values leave out.
  std::uint64_t size_min = 0;  // sizes drawn from [size_min, size] (output, graph, hash take it); 0: not an axis here
  // The integer axes one pattern takes that have no field here (output's
  // writes, hash's load_pct): their values by their rows' places among such
  // rows of the axis table (cases/axes.hpp); unset, an axis reads as its
  // default. Read and set by key: axis(), set_axis().
  std::array<std::optional<std::uint64_t>, 4> keyed_axes{};
  std::string graph;           // graph: rmat, grid, or the name of a Matrix Market file's graph (--graph)
  std::string trace;           // replay: the trace's name (its file's stem, --trace)
  // The file the case reads (a --graph file, replay's --trace file) and its
  // pinned content hash: the harness's (nullptr: none).
  std::shared_ptr<const CaseInput> input;

  // The value of the integer axis `key` kept by key (writes, load_pct), or its
  // default where none was set. Throws std::invalid_argument for a key that is
  // no such axis.
  std::uint64_t axis(std::string_view key) const;
  void set_axis(std::string_view key, std::uint64_t value);

  std::string_view pattern_name() const;
  std::string_view api_name() const;
  // size x threads; the largest uint64 where that does not fit (it never fits a heap).
  std::uint64_t demand() const { return threads != 0 && size > ~std::uint64_t{0} / threads ? ~std::uint64_t{0} : size * threads; }
  Limit limit() const;
  // cudaLimitMallocHeapSize asked for, bytes; 0 for a case that sets the FIFO instead.
  std::uint64_t malloc_heap() const { return limit() == Limit::malloc_heap ? limit_bytes : 0; }
  // cudaLimitPrintfFifoSize asked for, bytes; 0 for a case that sets the heap instead.
  std::uint64_t printf_fifo() const { return limit() == Limit::printf_fifo ? limit_bytes : 0; }
  // The arena an own_arena API reserves: as large as the heap, so it and the
  // device heap's APIs are measured on the same amount of memory.
  std::uint64_t arena_bytes() const { return malloc_heap(); }
};

}  // namespace heapbench
