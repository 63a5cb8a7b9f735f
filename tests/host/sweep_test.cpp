#include "plan/sweep.hpp"
#include "cases/case_naming.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "cases/catalog.hpp"

namespace heapbench {
namespace {

// How many times a run of `cases` in order changes the heap (= device resets after the first).
int heap_changes(const std::vector<Case>& cases) {
  int n = 0;
  for (std::size_t i = 1; i < cases.size(); ++i) n += cases[i].limit_bytes != cases[i - 1].limit_bytes;
  return n;
}

Sweep one(std::vector<std::uint64_t> sizes, std::vector<std::uint64_t> threads, std::vector<std::uint64_t> heaps) {
  Sweep s;
  s.patterns = {"per_thread"};
  s.apis = {"malloc"};
  s.sizes = std::move(sizes);
  s.aligns = {16};
  s.set("threads", std::move(threads));
  s.heaps = std::move(heaps);
  return s;
}

TEST(Sweep, DefaultCoversTheAxesTheIssueNames) {
  const Sweep s = default_sweep().front();
  EXPECT_EQ(s.sizes.front(), 16u);
  EXPECT_EQ(s.sizes.back(), 64u * 1024);
  EXPECT_EQ(s.values("threads").front(), 32u);
  EXPECT_EQ(s.values("threads").back(), 1u << 20);
  EXPECT_EQ(s.heaps.front(), 8 * kMiB);
  bool odd = false;
  for (auto v : s.sizes) odd |= (v & (v - 1)) != 0;
  EXPECT_TRUE(odd) << "the default sweep must include sizes that are not powers of two";
}

TEST(Sweep, CasesRunHeapMajorSoEachHeapSizeResetsOnce) {
  const auto cases = plan_cases({one({4096, 16}, {1024, 32}, {1024 * kMiB, 8 * kMiB, 64 * kMiB})});
  ASSERT_EQ(cases.size(), 12u);
  EXPECT_EQ(heap_changes(cases), 2);
  EXPECT_EQ(cases.front().malloc_heap(), 8 * kMiB);
  EXPECT_EQ(cases.back().malloc_heap(), 1024 * kMiB);
  // Any filtered subsequence of a heap-major order is heap-major too.
  std::vector<Case> only_16;
  for (const auto& c : cases) if (c.size == 16) only_16.push_back(c);
  EXPECT_EQ(heap_changes(only_16), 2);
}

TEST(Sweep, PrintfFifosShareTheHeapMajorGroupsOfTheirBytes) {
  Sweep s = one({8, 64}, {1024}, {64 * kMiB, 8 * kMiB});
  s.patterns = {"printf", "per_thread"};
  s.apis = {"printf", "malloc"};
  const auto cases = plan_cases({s});
  ASSERT_EQ(cases.size(), 8u);
  EXPECT_EQ(heap_changes(cases), 1) << "one device reset per value, whichever limit it sets";
  for (const auto& c : cases) {
    if (c.pattern_name() == "printf") {
      EXPECT_EQ(c.malloc_heap(), 0u) << case_name(c);
      EXPECT_EQ(c.printf_fifo(), c.limit_bytes) << case_name(c);
    } else {
      EXPECT_EQ(c.malloc_heap(), c.limit_bytes) << case_name(c);
      EXPECT_EQ(c.printf_fifo(), 0u) << case_name(c);
    }
  }
}

TEST(Sweep, DemandFractionPrunesOversubscribedPointsOnly) {
  Sweep s = one({16, 1024}, {32, 1u << 20}, {8 * kMiB});
  s.max_demand_fraction = 0.5;
  const auto cases = plan_cases({s});
  // 2^20 x 16 B = 16 MiB and 2^20 x 1 KiB = 1 GiB exceed 4 MiB; 32 x 1 KiB does not.
  ASSERT_EQ(cases.size(), 2u);
  for (const auto& c : cases) EXPECT_EQ(c.threads, 32u);
  s.max_demand_fraction = 0.0;
  EXPECT_EQ(plan_cases({s}).size(), 4u);
}

TEST(Sweep, SmallRequestsWeighAtLeastTheHeapsSmallestBlock) {
  // 2^20 x 16 B asks 16 MiB, but takes 64 MiB of CUDA's heap: more than half of 64 MiB.
  Sweep s = one({16, 24, 64, 100}, {32768, 1u << 20}, {64 * kMiB, 1024 * kMiB});
  s.max_demand_fraction = 0.5;
  std::vector<std::string> kept;
  for (const auto& c : plan_cases({s})) kept.push_back(case_name(c));
  EXPECT_EQ(kept, (std::vector<std::string>{
                      "per_thread/malloc/size:16/threads:32768/heap:64",
                      "per_thread/malloc/size:24/threads:32768/heap:64",
                      "per_thread/malloc/size:64/threads:32768/heap:64",
                      "per_thread/malloc/size:100/threads:32768/heap:64",
                      "per_thread/malloc/size:16/threads:32768/heap:1024",
                      "per_thread/malloc/size:16/threads:1048576/heap:1024",
                      "per_thread/malloc/size:24/threads:32768/heap:1024",
                      "per_thread/malloc/size:24/threads:1048576/heap:1024",
                      "per_thread/malloc/size:64/threads:32768/heap:1024",
                      "per_thread/malloc/size:64/threads:1048576/heap:1024",
                      "per_thread/malloc/size:100/threads:32768/heap:1024",
                      "per_thread/malloc/size:100/threads:1048576/heap:1024",
                  }));
  // An arena of its own has no such block: bump keeps 2^20 x 16 B on 64 MiB.
  EXPECT_EQ(heap_footprint(make_case("per_thread", "bump", 16, 0, 1u << 20, 64 * kMiB)), 16 * kMiB);
  EXPECT_EQ(heap_footprint(make_case("per_thread", "malloc", 16, 0, 1u << 20, 64 * kMiB)), 64 * kMiB);
  // One call per warp of 32 x 16 B = 512 B: no change.
  EXPECT_EQ(heap_footprint(make_case("per_warp", "malloc", 16, 0, 1u << 20, 64 * kMiB)), 16 * kMiB);
}

// The default sweep as planned before heap_footprint: demand = threads x size.
std::vector<std::string> default_names_by_requested_bytes() {
  std::vector<Case> all;
  for (Sweep s : default_sweep()) {
    const double fraction = s.max_demand_fraction;
    s.max_demand_fraction = 0;
    for (const Case& c : plan_cases({s})) {
      if (fraction == 0 || static_cast<double>(c.demand()) <= fraction * static_cast<double>(c.limit_bytes)) {
        all.push_back(c);
      }
    }
  }
  sort_run_order(all);
  std::vector<std::string> names;
  for (const Case& c : all) {
    if (names.empty() || names.back() != case_name(c)) names.push_back(case_name(c));
  }
  return names;
}

TEST(Sweep, TheDefaultSweepLosesOnlyItsTwoBudgetSpendersInOrder) {
  // The two points that spent the 5 s kernel budget on every default sweep on
  // the H200; every other name stays, in the same order.
  std::vector<std::string> before = default_names_by_requested_bytes();
  const std::vector<std::string> removed = {"per_thread/malloc/size:16/threads:1048576/heap:64",
                                            "per_thread/malloc/size:24/threads:1048576/heap:64"};
  for (const auto& r : removed) {
    const auto at = std::find(before.begin(), before.end(), r);
    ASSERT_NE(at, before.end()) << r << " was in the default sweep";
    before.erase(at);
  }
  std::vector<std::string> now;
  for (const Case& c : plan_cases(default_sweep())) now.push_back(case_name(c));
  EXPECT_EQ(now, before);
}

// A pattern that takes `axis` (per_thread for the axes every pattern takes).
std::string pattern_taking(const AxisDecl& axis) {
  for (const PatternTraits* p : kPatternTraits) {
    if (pattern_takes(*p, axis)) return std::string(p->name);
  }
  return "";
}

TEST(Sweep, EverySweptRowOfTheAxisTableSpansItsValuesInRunOrder) {
  std::set<std::string_view> swept;
  for (const AxisDecl& axis : axis_table()) {
    if (!axis.is_swept()) continue;
    swept.insert(axis.key);
    Sweep s = one({8192}, {1024}, {64 * kMiB});
    s.patterns = {pattern_taking(axis)};
    ASSERT_FALSE(s.patterns.front().empty()) << "no pattern takes the axis " << axis.key;
    s.set(axis.key, {4096, 32, 1024});
    std::vector<std::uint64_t> got;
    for (const Case& c : plan_cases({s})) got.push_back(integer_of(c, axis));
    EXPECT_EQ(got, (std::vector<std::uint64_t>{32, 1024, 4096})) << axis.key;
  }
  for (std::string_view key : {"threads", "size_min", "load_pct", "writes"}) EXPECT_EQ(swept.count(key), 1u) << key;
}

// Threads vary slowest of the swept axes, then size_min, load_pct and writes:
// the order cases ran in before the axes were rows of the table.
TEST(Sweep, TheSweptAxesRunThreadsFirst) {
  ASSERT_GE(swept_axes().size(), 4u);  // threads and the workloads' size_min, load_pct, writes; a new one may follow
  EXPECT_EQ(swept_axes().front()->key, "threads");
  Sweep s = one({64}, {10000, 1000}, {1024 * kMiB});
  s.patterns = {"output"};
  s.apis = {"two_pass"};
  s.set("size_min", {16, 4}).set("writes", {1});
  std::vector<std::string> names;
  for (const auto& c : plan_cases({s})) names.push_back(case_name(c));
  EXPECT_EQ(names, (std::vector<std::string>{"output/two_pass/size:64/size_min:4/threads:1000/writes:1/heap:1024",
                                             "output/two_pass/size:64/size_min:16/threads:1000/writes:1/heap:1024",
                                             "output/two_pass/size:64/size_min:4/threads:10000/writes:1/heap:1024",
                                             "output/two_pass/size:64/size_min:16/threads:10000/writes:1/heap:1024"}));
}

TEST(Sweep, APartTakesARowsFallbackAndRefusesAnAxisItCannotSpan) {
  const Sweep s;
  EXPECT_EQ(s.values("load_pct"), std::vector<std::uint64_t>{100});
  EXPECT_EQ(s.values("size_min"), std::vector<std::uint64_t>{0});
  EXPECT_TRUE(s.values("threads").empty()) << "every part sets its threads";
  Sweep t;
  EXPECT_THROW(t.set("load_pcts", {50}), std::logic_error) << "a flag's spelling is not the key";
  EXPECT_THROW(t.set("trace", {1}), std::logic_error) << "a trace's name comes from its file";
  EXPECT_THROW(t.set("pattern", {1}), std::logic_error) << "patterns are names";
  EXPECT_THROW(t.set_names("size", {"64"}), std::logic_error) << "sizes are integers";
  EXPECT_THROW(t.values("api"), std::logic_error) << "APIs are names";
  EXPECT_THROW(t.values("trace"), std::logic_error) << "no flag sets a trace";
  t.sizes = {16, 64};
  EXPECT_EQ(t.values("size"), t.sizes);
}

// Every axis a flag sets is set by its key (what options.cpp does with each
// flag), into the member plan_cases reads: sizes, aligns and heaps keep their
// own rules there (only the sizes a pattern takes, alignments only for an API
// that takes one, heap-major order).
TEST(Sweep, EveryAxisAFlagSetsIsSetByItsKey) {
  Sweep s;
  s.set("size", {64}).set("align", {16}).set("malloc_heap", {8 * kMiB}).set("threads", {32});
  s.set_names("pattern", {"per_thread"}).set_names("api", {"malloc"}).set_names("graph", {"grid"});
  EXPECT_EQ(s.sizes, std::vector<std::uint64_t>{64});
  EXPECT_EQ(s.aligns, std::vector<std::uint64_t>{16});
  EXPECT_EQ(s.heaps, std::vector<std::uint64_t>{8 * kMiB});
  EXPECT_EQ(s.values(*find_axis("printf_fifo")), s.heaps) << "--heaps sets either limit";
  EXPECT_EQ(s.patterns, std::vector<std::string>{"per_thread"});
  EXPECT_EQ(s.apis, std::vector<std::string>{"malloc"});
  EXPECT_EQ(s.graphs, std::vector<std::string>{"grid"});
  EXPECT_EQ(s.names("graph"), s.graphs);
  EXPECT_EQ(plan_cases({s}).size(), 1u);
}

TEST(Sweep, RepeatedAxisValuesRunOnce) {
  const auto cases = plan_cases({one({1024, 1024, 16}, {32, 32}, {8 * kMiB, 8 * kMiB})});
  std::set<std::string> names;
  for (const auto& c : cases) names.insert(case_name(c));
  EXPECT_EQ(cases.size(), 2u);
  EXPECT_EQ(names.size(), 2u);
}

TEST(Sweep, DefaultSweepIsAllWithinHalfTheHeap) {
  for (const auto& c : plan_cases(default_sweep())) {
    if (is_capacity_family(c.pattern_name())) continue;  // fills the heap to the first NULL by design
    if (c.limit() != Limit::malloc_heap) continue;        // printf: no heap; overflows its FIFO by design
    if (c.size == 256 && c.threads == 32768 && c.api_name() == "malloc" && c.malloc_heap() <= 16 * kMiB) continue;  // failure curve
    EXPECT_LE(c.demand() * 2, c.malloc_heap()) << case_name(c);
  }
}

TEST(Sweep, DefaultCoversEveryPatternAndApiWithBothBaselines) {
  const auto cases = plan_cases(default_sweep());
  for (auto pattern : kPatterns) {
    for (auto api : built_api_names()) {
      const bool found = std::any_of(cases.begin(), cases.end(), [&](const Case& c) {
        return c.pattern_name() == pattern && c.api_name() == api;
      });
      // The capacity families fill CUDA's heap through malloc alone (the other
      // CUDA APIs share it) and every API with an arena of its own (bump, slab);
      // size_map (per_thread plus an address copy) runs in --sweep=size_map,
      // the workloads in --sweep=workloads.
      const ApiTraits* t = find_api_traits(api);
      const bool expected = supported(pattern, api) && !find_pattern_traits(pattern)->own_sweep &&
                            (!is_capacity_family(pattern) || api == "malloc" || t->owns_arena());
      EXPECT_EQ(found, expected) << pattern << "/" << api;
    }
  }
}

TEST(Sweep, AlignmentIsAnAxisOnlyForAlignedApis) {
  Sweep s = one({64}, {32}, {8 * kMiB});
  s.apis = {"malloc", "aligned", "cuda_std_aligned", "bump"};
  s.aligns = {16, 4096};
  std::vector<std::string> names;
  for (const auto& c : plan_cases({s})) names.push_back(case_name(c));
  std::vector<std::string> expected = {
      "per_thread/aligned/size:64/align:16/threads:32/heap:8",
      "per_thread/aligned/size:64/align:4096/threads:32/heap:8",
      "per_thread/bump/size:64/threads:32/heap:8",
      "per_thread/cuda_std_aligned/size:64/align:16/threads:32/heap:8",
      "per_thread/cuda_std_aligned/size:64/align:4096/threads:32/heap:8",
      "per_thread/malloc/size:64/threads:32/heap:8",
  };
  if (!is_api("cuda_std_aligned")) {  // not built on CCCL 2.x: no cases, rather than cases that cannot run
    expected.erase(expected.begin() + 3, expected.begin() + 5);
  }
  EXPECT_EQ(names, expected);
}

TEST(Sweep, DefaultHasAFailureCurveAtFixedDemand) {
  std::vector<std::uint64_t> heaps;
  for (const auto& c : plan_cases(default_sweep())) {
    if (c.pattern_name() == "per_thread_mixed" && c.size == 256 && c.threads == 32768) heaps.push_back(c.malloc_heap() / kMiB);
  }
  EXPECT_EQ(heaps, (std::vector<std::uint64_t>{4, 6, 8, 12, 16, 32}));
}

TEST(Catalog, AllocaIsPerThreadOnly) {
  EXPECT_TRUE(supported("per_thread", "alloca"));
  for (auto pattern : kPatterns) {
    if (pattern != "per_thread") EXPECT_FALSE(supported(pattern, "alloca")) << pattern;
    EXPECT_EQ(supported(pattern, "malloc"), pattern != "printf") << pattern;
    EXPECT_EQ(supported(pattern, "printf"), pattern == "printf") << "printf is its own pattern's only API";
  }
  EXPECT_TRUE(valid_size("printf", 64));
  EXPECT_FALSE(valid_size("printf", 72));
  EXPECT_FALSE(valid_size("printf", 12));
  EXPECT_TRUE(valid_size("per_thread", 12));
  EXPECT_FALSE(supported("per_grid", "malloc"));
  EXPECT_FALSE(supported("per_thread", "calloc"));
  EXPECT_TRUE(takes_align("aligned"));
  EXPECT_TRUE(takes_align("cuda_std_aligned"));
  EXPECT_FALSE(takes_align("malloc"));
}

}  // namespace
}  // namespace heapbench

namespace heapbench {
namespace {

TEST(Sweep, SizeMapIsEvery16BytesTo8KiBThenCoarserTo1MiB) {
  const auto sizes = size_map_sizes();
  ASSERT_EQ(sizes.size(), 568u);
  for (std::size_t i = 0; i < 512; ++i) EXPECT_EQ(sizes[i], 16 * (i + 1));
  EXPECT_EQ(sizes.back(), 1024u * 1024);
  for (std::size_t i = 1; i < sizes.size(); ++i) {
    EXPECT_GT(sizes[i], sizes[i - 1]);
    EXPECT_EQ(sizes[i] % 16, 0u) << sizes[i];
    // Past 8 KiB no step is wider than 2^(1/8), so a boundary is placed within 10 %.
    if (sizes[i - 1] >= 8192) EXPECT_LE(static_cast<double>(sizes[i]) / sizes[i - 1], 1.10) << sizes[i];
  }
  const auto cases = plan_cases(size_map_sweep());
  ASSERT_EQ(cases.size(), 568u);
  EXPECT_EQ(case_name(cases.front()), "size_map/malloc/size:16/threads:256/heap:1024");
}

}  // namespace
}  // namespace heapbench

// printf's launches wait for the host to drain a full FIFO (2.4-5.2 s on the
// H200 for 32,768 threads into 1 MiB, once past the 5 s default): its traits ask
// for four kernel budgets, and no allocating pattern for more than one.
TEST(PatternTraitsBudget, OnlyPrintfWaitsForTheHost) {
  for (const heapbench::PatternTraits* t : heapbench::kPatternTraits) {
    EXPECT_EQ(t->budget_factor, t->name == "printf" ? 4.0 : 1.0) << t->name;
  }
}

namespace heapbench {
namespace {

// --sweep=zoo: the allocator adapters of this build (here the bundled slab;
// the zoo's families where -DHEAPBENCH_ZOO builds them) beside malloc and bump.
TEST(ZooSweep, MeasuresEveryAdapterBesideMallocAndBumpOnly) {
  const auto apis = zoo_apis();
  ASSERT_GE(apis.size(), 2u);
  EXPECT_EQ(apis[0], "malloc");
  EXPECT_EQ(apis[1], "bump");
  EXPECT_NE(std::find(apis.begin(), apis.end(), "slab"), apis.end());
  for (const auto& name : apis) {
    const ApiTraits* t = find_api_traits(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_TRUE(t->built && t->has_handle() && !t->is_call_path()) << name;
  }
  for (const char* other : {"aligned", "cuda_std_aligned", "new", "alloca", "printf", "malloc_fnptr", "bump_fnptr"}) {
    EXPECT_EQ(std::find(apis.begin(), apis.end(), other), apis.end()) << other;
  }
}

bool has(const std::vector<Case>& cases, const std::string& name) {
  return std::any_of(cases.begin(), cases.end(), [&](const Case& c) { return case_name(c) == name; });
}

TEST(ZooSweep, HasTheSurveysPointsForEveryApi) {
  const auto cases = plan_cases(zoo_sweep());
  for (const auto& api : zoo_apis()) {
    for (std::uint64_t size = 16; size <= 8192; size *= 2) {
      for (int threads : {10000, 100000}) {
        EXPECT_TRUE(has(cases, fmt::format("per_thread/{}/size:{}/threads:{}/heap:2048", api, size, threads)))
            << api << " " << size << " " << threads;
      }
    }
    for (std::uint64_t threads = 1024; threads <= (1u << 20); threads *= 2) {
      for (int size : {16, 64}) {
        EXPECT_TRUE(has(cases, fmt::format("per_thread/{}/size:{}/threads:{}/heap:1024", api, size, threads)));
      }
    }
    for (const char* pattern : {"per_warp", "per_block", "cross_kernel", "cross_kernel_remote_free"}) {
      for (int size : {16, 64, 256, 1024, 4096}) {
        EXPECT_TRUE(has(cases, fmt::format("{}/{}/size:{}/threads:100000/heap:1024", pattern, api, size)));
      }
    }
    for (int size : {64, 4096}) {
      EXPECT_TRUE(has(cases, fmt::format("churn/{}/size:{}/threads:65536/heap:1024", api, size)));
    }
    for (int size : {16, 64, 256, 1024, 4096, 65536}) {
      EXPECT_TRUE(has(cases, fmt::format("capacity/{}/size:{}/threads:1024/heap:16", api, size)));
    }
    for (int size : {4096, 65536}) {
      EXPECT_TRUE(has(cases, fmt::format("capacity/{}/size:{}/threads:1024/heap:64", api, size)));
    }
  }
  // Those points and no others: 20 + 22 + 20 + 2 + 8 per API.
  EXPECT_EQ(cases.size(), 72 * zoo_apis().size());
  for (const auto& c : cases) {
    EXPECT_GE(c.malloc_heap(), 16 * kMiB) << case_name(c);  // the survey's least heap (mallocMC's min_heap is 8 MiB)
    if (!is_capacity_family(c.pattern_name())) EXPECT_LE(heap_footprint(c) * 2, c.malloc_heap()) << case_name(c);
  }
  // Heap-major: one device reset (under isolation, one process) per heap size.
  EXPECT_EQ(heap_changes(cases), 3);
}

TEST(ContractSkip, AHeapUnderTheLeastOrABlockOverTheLargestHasAReason) {
  const ApiTraits limited = with_max_size(with_min_heap(ApiTraits{"limited", Source::own_arena}, 16 * kMiB), 4096);
  const Case small_heap{find_pattern_traits("per_thread"), &limited, 64, 0, 1024, 8 * kMiB};
  EXPECT_EQ(contract_skip_reason(small_heap, limited),
            "not supported: limited needs a heap of at least 16777216 bytes, the case has 8388608");
  const Case large_block{find_pattern_traits("per_thread"), &limited, 8192, 0, 1024, 16 * kMiB};
  EXPECT_EQ(contract_skip_reason(large_block, limited),
            "not supported: limited serves blocks of at most 4096 bytes, the case asks for 8192");
  EXPECT_EQ(contract_skip_reason(Case{find_pattern_traits("per_thread"), &limited, 4096, 0, 1024, 16 * kMiB}, limited), "");
  // per_warp asks for one block for its 32 threads: 256 B each is 8 KiB.
  EXPECT_EQ(contract_skip_reason(Case{find_pattern_traits("per_warp"), &limited, 256, 0, 1024, 16 * kMiB}, limited),
            "not supported: limited serves blocks of at most 4096 bytes, the case asks for 8192 (256 B for each of "
            "the 32 threads that share a block)");
  EXPECT_EQ(contract_skip_reason(Case{find_pattern_traits("per_warp"), &limited, 128, 0, 1024, 16 * kMiB}, limited), "");
  // An allocator that traps when full has no first NULL for capacity to find;
  // every other pattern it runs.
  const ApiTraits traps = traps_when_full(ApiTraits{"traps", Source::own_arena});
  for (const char* pattern : {"capacity", "capacity_fill"}) {
    EXPECT_EQ(contract_skip_reason(Case{find_pattern_traits(pattern), &traps, 64, 0, 1024, 16 * kMiB}, traps),
              fmt::format("not supported: traps cannot return NULL when its heap runs out (it traps), and {} fills "
                          "the heap to the first NULL", pattern));
  }
  EXPECT_EQ(contract_skip_reason(Case{find_pattern_traits("churn"), &traps, 64, 0, 1024, 16 * kMiB}, traps), "");
  // No limit by default, and none on the built-in APIs.
  EXPECT_EQ(contract_skip_reason(large_block, ApiTraits{"open", Source::own_arena}), "");
  for (auto api : built_api_names()) {
    const ApiTraits* t = find_api_traits(api);
    if (t->min_heap == 0 && t->max_size == 0 && t->null_when_full) {
      EXPECT_EQ(contract_skip_reason(make_case("per_thread", api, 1u << 30, 0, 32, 1 * kMiB)), "") << api;
    }
  }
}

}  // namespace
}  // namespace heapbench

namespace heapbench {
namespace {

TEST(Sweep, AnAxisOnlyItsPatternsTakeLeavesTheOthersAtItsDefault) {
  Sweep s = one({64}, {1024}, {1024 * kMiB});
  s.patterns = {"per_thread", "output"};
  s.apis = {"malloc"};
  s.set("size_min", {4, 16}).set("writes", {0, 1});
  std::vector<std::string> names;
  for (const auto& c : plan_cases({s})) names.push_back(case_name(c));
  const std::vector<std::string> expected = {
      "output/malloc/size:64/size_min:4/threads:1024/writes:0/heap:1024",
      "output/malloc/size:64/size_min:4/threads:1024/writes:1/heap:1024",
      "output/malloc/size:64/size_min:16/threads:1024/writes:0/heap:1024",
      "output/malloc/size:64/size_min:16/threads:1024/writes:1/heap:1024",
      "per_thread/malloc/size:64/threads:1024/heap:1024"};
  EXPECT_EQ(names, expected);
}

TEST(Sweep, ASizeMinAboveTheSizeIsNoPointAndNoneGivenIsTheSize) {
  Sweep s = one({64, 4096}, {1024}, {1024 * kMiB});
  s.patterns = {"output"};
  s.apis = {"two_pass"};
  s.set("size_min", {128});
  std::vector<std::string> names;
  for (const auto& c : plan_cases({s})) names.push_back(case_name(c));
  EXPECT_EQ(names, (std::vector<std::string>{"output/two_pass/size:4096/size_min:128/threads:1024/writes:1/heap:1024"}));
  s.set("size_min", {0});
  const auto fixed = plan_cases({s});
  ASSERT_EQ(fixed.size(), 2u);
  EXPECT_EQ(fixed[0].size_min, 64u);
  EXPECT_EQ(fixed[1].size_min, 4096u);
}

TEST(Sweep, WorkloadsCoverEveryStrategyAndTheirData) {
  const auto cases = plan_cases(workloads_sweep());
  std::set<std::string> output_apis, graphs, loads;
  for (const auto& c : cases) {
    EXPECT_TRUE(c.pattern->own_sweep) << case_name(c);
    if (c.pattern_name() == "output") output_apis.insert(std::string(c.api_name()));
    if (c.pattern_name() == "graph") graphs.insert(c.graph);
    if (c.pattern_name() == "hash") loads.insert(std::to_string(c.axis("load_pct")));
  }
  for (const char* api : {"malloc", "new", "bump", "slab", "warp_aggregated", "two_pass", "two_pass_async"}) {
    EXPECT_EQ(output_apis.count(api), 1u) << api;
  }
  EXPECT_EQ(graphs, (std::set<std::string>{"grid", "rmat"}));
  EXPECT_EQ(loads, (std::set<std::string>{"200", "50"}));
}

}  // namespace
}  // namespace heapbench
