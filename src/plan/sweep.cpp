#include "plan/sweep.hpp"
#include "cases/case_naming.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "cases/catalog.hpp"
#include "cases/case_input.hpp"

namespace heapbench {

namespace {

// The patterns measured in rounds of allocate, use and free over the heap: every
// one but the capacity families, printf (its FIFO, not the heap) and size_map,
// which have their own parts.
std::vector<std::string> round_patterns() {
  std::vector<std::string> out;
  for (const PatternTraits* p : kPatternTraits) {
    if (!p->fills_heap && p->limit == Limit::malloc_heap && !p->own_sweep) out.emplace_back(p->name);
  }
  return out;
}

// What the capacity parts fill: CUDA's heap through malloc (aligned, cuda_std_aligned
// and new share that heap), and every API with an arena of its own (bump, slab,
// the adapters of -DHEAPBENCH_ALLOCATORS that own one).
std::vector<std::string> capacity_apis() {
  std::vector<std::string> out{std::string(api::kMalloc.name)};
  for (const ApiTraits& t : api_traits_list()) {
    if (t.built && t.owns_arena() && !t.is_call_path()) out.emplace_back(t.name);
  }
  return out;
}

}  // namespace

std::uint64_t heap_footprint(const Case& c) {
  if (c.api == nullptr || !c.api->heap_backed()) return c.demand();
  const std::uint64_t per_call_threads = c.pattern ? std::max<std::uint64_t>(c.pattern->threads_per_call, 1) : 1;
  const std::uint64_t calls = (c.threads + per_call_threads - 1) / per_call_threads;
  return std::max(c.demand(), calls * kMinHeapBlock);
}

namespace {
// A part given by its axes, alignment 16, the workload axes at their defaults.
Sweep part(std::vector<std::string> patterns, std::vector<std::string> apis, std::vector<std::uint64_t> sizes,
           std::vector<std::uint64_t> threads, std::vector<std::uint64_t> heaps, double max_demand_fraction) {
  Sweep s;
  s.patterns = std::move(patterns);
  s.apis = std::move(apis);
  s.sizes = std::move(sizes);
  s.aligns = {16};
  s.set("threads", std::move(threads));
  s.heaps = std::move(heaps);
  s.max_demand_fraction = max_demand_fraction;
  return s;
}
}  // namespace

std::vector<Sweep> default_sweep() {
  // Powers of two cover the size classes; 24, 100, 1000 and 3000 sit between
  // them, so rounding inside the allocator shows up as a step. One warp, one
  // block's worth of warps, 32 K threads, and 2^20 (beyond the 132 x 2048 =
  // 270,336 threads an H200 holds at once).
  Sweep spine = part({"per_thread"}, {"malloc"}, {16, 24, 64, 100, 256, 1000, 1024, 3000, 4096, 16384, 65536},
                     {32, 1024, 32768, 1u << 20}, {8 * kMiB, 64 * kMiB, 1024 * kMiB}, 0.5);
  Sweep matrix = part(round_patterns(), {built_api_names().begin(), built_api_names().end()}, {64, 4096},
                      {1024, 65536}, {1024 * kMiB}, 0.5);
  matrix.aligns = {16, 4096};
  // Capacity: 1024 threads fill each heap with one block size. Every fill ends
  // with one failing call per thread, and on an H200 failing calls on a full
  // heap are slow: with 32 K threads one 8 MiB case took about a minute, and
  // with 1024 threads filling 64 MiB with blocks of 1 KiB or less ran past the
  // 5 s kernel budget (results/H200/capacity.json). So every size
  // fills 8 MiB, and only 4 KiB and 64 KiB blocks fill 64 MiB.
  Sweep capacity = part({"capacity"}, capacity_apis(), {16, 64, 256, 1024, 4096, 65536}, {1024}, {8 * kMiB}, 0.0);
  Sweep capacity_large = part({"capacity"}, capacity_apis(), {4096, 65536}, {1024}, {64 * kMiB}, 0.0);
  // Failure curve: a fixed demand of 8 MiB (32 K threads x 256 B, or mixed sizes
  // of at most 256 B) against heaps from half the demand to four times it.
  Sweep failure_curve = part({"per_thread", "per_thread_mixed"}, {"malloc"}, {256}, {32768},
                             {4 * kMiB, 6 * kMiB, 8 * kMiB, 12 * kMiB, 16 * kMiB, 32 * kMiB}, 0.0);
  // The first fill alone, with 64 K threads: what the refills make too slow on
  // larger heaps.
  Sweep capacity_fill = part({"capacity_fill"}, capacity_apis(), {64}, {65536}, {64 * kMiB}, 0.0);
  // printf: 8 lines per thread with 1 or 8 arguments, into FIFOs of 1, 8
  // (CUDA's default) and 64 MiB; 32 K threads overflow the smaller FIFOs on
  // purpose. (2^18 threads into a full FIFO outlast the 5 s budget on an H200:
  // printf slows to ~7e4 calls/s once the FIFO is full.)
  Sweep printf_fifo = part({"printf"}, {"printf"}, {8, 64}, {1024, 32768}, {1 * kMiB, 8 * kMiB, 64 * kMiB}, 0.0);
  // The stack against the heap over sizes: alloca raises cudaLimitStackSize to
  // each size (plus the frame) for its case.
  Sweep stack = part({"per_thread"}, {"malloc", "alloca"}, {16, 256, 1024, 16384}, {1024, 65536}, {1024 * kMiB}, 0.5);
  return {spine, matrix, capacity, capacity_large, failure_curve, capacity_fill, printf_fifo, stack};
}

std::vector<Sweep> quick_sweep() {
  // One point each of the round patterns, the capacity families and printf.
  Sweep rounds;
  rounds.patterns = round_patterns();
  rounds.apis.assign(built_api_names().begin(), built_api_names().end());
  rounds.sizes = {64};
  rounds.aligns = {16};
  rounds.set("threads", {65536});
  rounds.heaps = {1024 * kMiB};
  Sweep capacity = rounds;
  capacity.patterns = {"capacity", "capacity_fill"};
  capacity.set("threads", {1024});
  capacity.heaps = {8 * kMiB};
  Sweep printf_fifo = capacity;
  printf_fifo.patterns = {"printf"};
  printf_fifo.apis = {"printf"};
  printf_fifo.sizes = {8};
  return {rounds, capacity, printf_fifo};
}

std::vector<std::string> zoo_apis() {
  // The built-in APIs (api::): every other entry of api_traits_list() is an adapter.
  constexpr std::array builtin = {api::kMalloc,     api::kAligned,      api::kCudaStdAligned,    api::kNew,
                                  api::kBump,       api::kAlloca,       api::kPrintf,            api::kMallocFnptr,
                                  api::kBumpFnptr,  api::kMallocNvfunction, api::kBumpNvfunction,
                                  api::kWarpAggregated, api::kTwoPass, api::kTwoPassAsync};
  std::vector<std::string> out{std::string(api::kMalloc.name), std::string(api::kBump.name)};
  for (const ApiTraits& t : api_traits_list()) {
    const bool is_builtin =
        std::any_of(builtin.begin(), builtin.end(), [&](const ApiTraits& b) { return b.name == t.name; });
    if (t.built && t.has_handle() && !t.is_call_path() && !is_builtin) out.emplace_back(t.name);
  }
  return out;
}


std::vector<Sweep> zoo_sweep() {
  const std::vector<std::string> apis = zoo_apis();
  std::vector<std::uint64_t> survey_sizes;  // 16 B ... 8 KiB, the survey's sizes
  for (std::uint64_t s = 16; s <= 8192; s *= 2) survey_sizes.push_back(s);
  // 100,000 x 8 KiB is 819 MB: on 2 GiB it stays within half the heap.
  Sweep per_thread = part({"per_thread"}, apis, survey_sizes, {10000, 100000}, {2048 * kMiB}, 0.5);
  std::vector<std::uint64_t> scaling_threads;
  for (std::uint64_t t = 1u << 10; t <= 1u << 20; t *= 2) scaling_threads.push_back(t);
  Sweep scaling = part({"per_thread"}, apis, {16, 64}, scaling_threads, {1024 * kMiB}, 0.5);
  // per_warp and per_block ask for 32x and 256x the size per call.
  Sweep groups = part({"per_warp", "per_block", "cross_kernel", "cross_kernel_remote_free"}, apis,
                      {16, 64, 256, 1024, 4096}, {100000}, {1024 * kMiB}, 0.5);
  Sweep churn = part({"churn"}, apis, {64, 4096}, {65536}, {1024 * kMiB}, 0.5);
  // Failing calls on a full heap are slow for malloc (about 0.3 s a round at
  // 8 MiB for blocks up to 1 KiB, results/H200/default-sweep.json): small
  // blocks fill 16 MiB only.
  Sweep capacity = part({"capacity"}, apis, {16, 64, 256, 1024, 4096, 65536}, {1024}, {16 * kMiB}, 0.0);
  Sweep capacity_large = part({"capacity"}, apis, {4096, 65536}, {1024}, {64 * kMiB}, 0.0);
  return {per_thread, scaling, groups, churn, capacity, capacity_large};
}

std::vector<Sweep> workloads_sweep() {
  // Every built API the pattern takes (planned pairs only: supported()).
  const std::vector<std::string> apis(built_api_names().begin(), built_api_names().end());
  Sweep output;
  output.patterns = {"output"};
  output.apis = apis;
  output.sizes = {64};
  output.set("size_min", {4});
  output.aligns = {16};
  output.set("threads", {1000, 10000, 100000, 1000000});
  output.set("writes", {0, 1});
  output.heaps = {1024 * kMiB};
  // 10^6 outputs of up to 4 KiB are 2 GB; with a heap's own rounding and headers, 4 GiB.
  Sweep output_large = output;
  output_large.sizes = {4096};
  output_large.heaps = {4096 * kMiB};
  // The data structures with the allocators (CUDA's heap once, as malloc; the
  // bump ceiling; every adapter): the heap APIs besides malloc behave as it does.
  Sweep graph;
  graph.patterns = {"graph"};
  graph.apis = zoo_apis();
  graph.sizes = {4};
  graph.aligns = {16};
  graph.set("threads", {1u << 16});
  graph.graphs = {"rmat", "grid"};
  graph.heaps = {1024 * kMiB};
  Sweep hash = graph;
  hash.patterns = {"hash"};
  hash.sizes = {16};
  hash.set("threads", {100000, 1000000});
  hash.set("load_pct", {50, 200});
  return {output, output_large, graph, hash};
}

std::vector<std::uint64_t> size_map_sizes() {
  std::vector<std::uint64_t> sizes;
  // Every 16 B (CUDA's heap alignment) up to 8 KiB: fine enough that no class
  // boundary below 8 KiB falls between two points by more than 16 B.
  for (std::uint64_t s = 16; s <= 8192; s += 16) sizes.push_back(s);
  // Then 8 points per doubling up to 1 MiB (each a multiple of 16): past 8 KiB a
  // class is wider, and a step of 2^(1/8) = 9 % still places a boundary within 9 %.
  for (int k = 1; k <= 7 * 8; ++k) {
    const double bytes = 8192.0 * std::exp2(k / 8.0);
    const auto s = static_cast<std::uint64_t>(std::llround(bytes / 16.0)) * 16;
    if (s > sizes.back()) sizes.push_back(s);
  }
  return sizes;
}

std::vector<Sweep> size_map_sweep() {
  Sweep map;
  map.patterns = {"size_map"};
  map.apis = {"malloc"};
  map.sizes = size_map_sizes();
  map.aligns = {16};
  // 256 threads: enough blocks for a median stride, few enough that a round of
  // the slowest class (about 8e4 calls/s for 1 KiB on an H200) lasts ~3 ms and
  // that 256 x 1 MiB fits a 1 GiB heap at the 61 % utilisation measured for
  // 64 KiB blocks. The heap stays at 1 GiB because every case ends with a
  // capacity probe that fills the heap with 64 KiB blocks: a 4 GiB probe would
  // cost more than the case.
  map.set("threads", {256});
  map.heaps = {1024 * kMiB};
  return {map};
}

namespace {
const AxisDecl& swept_axis(std::string_view key) {
  const AxisDecl* a = find_axis(key);
  if (a == nullptr || !a->is_swept()) throw std::logic_error(fmt::format("'{}' is not an axis a sweep spans", key));
  return *a;
}
}  // namespace

std::vector<std::uint64_t> Sweep::*Sweep::integers_of(std::string_view axis) {
  if (axis == "size") return &Sweep::sizes;
  if (axis == "align") return &Sweep::aligns;
  if (axis == "malloc_heap" || axis == "printf_fifo") return &Sweep::heaps;
  return nullptr;
}

std::vector<std::string> Sweep::*Sweep::names_of(std::string_view axis) {
  if (axis == "pattern") return &Sweep::patterns;
  if (axis == "api") return &Sweep::apis;
  if (axis == "graph") return &Sweep::graphs;
  throw std::logic_error(fmt::format("'{}' is not an axis of names a sweep's part sets", axis));
}

Sweep& Sweep::set(std::string_view axis, std::vector<std::uint64_t> values) {
  if (const auto member = integers_of(axis)) {
    this->*member = std::move(values);
  } else {
    spans_[std::string(swept_axis(axis).key)] = std::move(values);
  }
  return *this;
}

const std::vector<std::string>& Sweep::names(std::string_view axis) const { return this->*names_of(axis); }

Sweep& Sweep::set_names(std::string_view axis, std::vector<std::string> names) {
  this->*names_of(axis) = std::move(names);
  return *this;
}

std::vector<std::uint64_t> Sweep::values(const AxisDecl& axis) const {
  if (axis.text()) throw std::logic_error(fmt::format("'{}' is an axis of names", axis.key));
  if (const auto member = integers_of(axis.key)) return this->*member;
  if (const auto it = spans_.find(axis.key); it != spans_.end()) return it->second;
  if (axis.is_swept() && axis.swept->fallback) return {*axis.swept->fallback};
  return {};
}

std::vector<std::uint64_t> Sweep::values(std::string_view axis) const {
  const AxisDecl* a = find_axis(axis);
  if (a == nullptr || a->text() || !a->has_flag()) {
    throw std::logic_error(fmt::format("'{}' is not an integer axis a sweep's part sets", axis));
  }
  return values(*a);
}

void sort_run_order(std::vector<Case>& cases) {
  // Heap-major, then pattern, API, size, alignment, graph, trace and the swept axes in their run order.
  const auto head = [](const Case& c) {
    return std::make_tuple(c.limit_bytes, c.pattern_name(), c.api_name(), c.size, c.align, std::string_view(c.graph),
                           std::string_view(c.trace));
  };
  std::stable_sort(cases.begin(), cases.end(), [&head](const Case& a, const Case& b) {
    if (head(a) != head(b)) return head(a) < head(b);
    for (const AxisDecl* axis : swept_axes()) {
      const std::uint64_t x = integer_of(a, *axis), y = integer_of(b, *axis);
      if (x != y) return x < y;
    }
    return false;
  });
}

namespace {

// The traits a sweep part names, looked up once: a name neither list knows
// (or an API not built) is left out, as an unsupported pair is.
template <class Traits, class Find>
std::vector<const Traits*> traits_of(const std::vector<std::string>& names, Find find) {
  std::vector<const Traits*> out;
  for (const auto& name : names) {
    if (const Traits* t = find(name)) out.push_back(t);
  }
  return out;
}

// `c` at every combination of the part's values of swept_axes()[i] and those
// after it, each kept unless its demand exceeds the part's max_demand_fraction.
void add_axis_points(const Sweep& s, Case c, std::size_t i, std::vector<Case>& cases) {
  if (i == swept_axes().size()) {
    if (c.pattern->takes_axis("size_min")) {
      if (c.size_min == 0) c.size_min = c.size;  // not given: every request is `size`
      if (c.size_min > c.size) return;            // an empty range
    }
    if (s.max_demand_fraction > 0 &&
        static_cast<double>(heap_footprint(c)) > s.max_demand_fraction * static_cast<double>(c.limit_bytes)) {
      return;
    }
    cases.push_back(c);
    return;
  }
  const AxisDecl& axis = *swept_axes()[i];
  if (!pattern_takes(*c.pattern, axis)) {
    add_axis_points(s, c, i + 1, cases);  // not this pattern's: the Case default stands
    return;
  }
  for (auto value : s.values(axis)) {
    set_integer(c, axis, value);
    add_axis_points(s, c, i + 1, cases);
  }
}

// The points of one sweep part for one supported pattern x API pair.
void add_points(const Sweep& s, const PatternTraits& pattern, const ApiTraits& api, std::vector<Case>& cases) {
  const std::vector<std::uint64_t> no_align = {0};
  for (auto align : api.takes_align ? s.aligns : no_align) {
    for (auto heap : s.heaps) {
      for (auto size : s.sizes) {
        // Sizes another part's axes bring that this pattern cannot take
        // (printf: 8 to 64 bytes of arguments); options refuse them when given.
        if (!pattern.valid_size(size)) continue;
        Case c;
        c.pattern = &pattern;
        c.api = &api;
        c.size = size;
        c.align = align;
        c.limit_bytes = heap;
        c.trace = s.trace;  // one trace a part (replay's only; the others leave it empty and unnamed)
        set_input(c, s.trace_file, s.input_hash);
        if (!pattern.takes_axis("graph")) {
          add_axis_points(s, c, 0, cases);
          continue;
        }
        for (const auto& graph : s.graphs) {
          c.graph = graph;
          if (!s.graph_file.empty()) set_input(c, s.graph_file, s.input_hash);
          add_axis_points(s, c, 0, cases);
        }
      }
    }
  }
}

}  // namespace

std::vector<Case> plan_cases(const std::vector<Sweep>& sweeps) {
  std::vector<Case> cases;
  for (const Sweep& s : sweeps) {
    const auto apis = traits_of<ApiTraits>(s.apis, [](const std::string& n) {
      const ApiTraits* t = find_api_traits(n);
      return t != nullptr && t->built ? t : nullptr;
    });
    for (const PatternTraits* pattern : traits_of<PatternTraits>(s.patterns, find_pattern_traits)) {
      for (const ApiTraits* api : apis) {
        if (supported(*pattern, *api)) add_points(s, *pattern, *api, cases);
      }
    }
  }
  sort_run_order(cases);
  // The same point reached twice ("--sizes=1K,1024", or by both parts) runs once.
  cases.erase(std::unique(cases.begin(), cases.end(),
                          [](const Case& a, const Case& b) { return case_name(a) == case_name(b); }),
              cases.end());
  return cases;
}

}  // namespace heapbench
