// Every pattern x API on a small grid: the counts each round reports, the
// correctness checks, failures under an oversubscribed heap, truncation at the
// kernel budget, and that the heap is as large after a case as before it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <tuple>

#include "cases/catalog.hpp"
#include "cases/case_naming.hpp"
#include "device/device.hpp"
#include "cases/mixed_sizes.hpp"
#include "patterns/printf_fifo.hpp"
#include "measure/round_phases.hpp"
#include "zoo_apis.hpp"

namespace heapbench {
namespace {

constexpr double kBudget = 10.0;

std::uint64_t threads_per_call(const std::string& pattern) {
  if (pattern == "per_warp") return 32;
  if (pattern == "per_block") return 256;
  return 1;
}

Case case_of(const std::string& pattern, const std::string& api, std::uint64_t size, std::uint64_t threads,
               std::uint64_t heap) {
  return make_case(pattern, api, size, takes_align(api) ? 64u : 0u, threads, heap);
}

using Pair = std::tuple<std::string, std::string>;

std::vector<Pair> all_pairs() {
  std::vector<Pair> out;
  for (auto p : kPatterns) {
    for (auto a : built_api_names()) {
      if (from_zoo(a)) continue;
      // capacity is a different measurement: see CapacityGpu below; the
      // workloads (patterns with axes of their own) are workloads_gpu_test.cpp's.
      if (supported(p, a) && !is_capacity_family(p) && p != "printf" && find_pattern_traits(p)->axes.front().empty()) {
        out.emplace_back(std::string(p), std::string(a));
      }
    }
  }
  return out;
}

class EveryPair : public ::testing::TestWithParam<Pair> {};

// 1000 threads: not a multiple of a warp or a block, so partial warps and blocks
// take part. Odd size 100: slices of per_warp/per_block are not word-aligned.
TEST_P(EveryPair, AmpleHeapEveryCallSucceedsAndEveryByteReadsBack) {
  const auto& [pattern, api] = GetParam();
  HeapSession s(0);
  const Case c = case_of(pattern, api, 100, 1000, 256 * kMiB);
  const std::uint64_t heap = s.ensure_heap(c.malloc_heap());
  const std::uint64_t before = probe_heap_capacity(heap);
  {
    auto r = make_cuda_round(c, kBudget);
    for (int round = 0; round < 2; ++round) {
      const IterationResult res = run_round(*r, round);
      EXPECT_EQ(res.problem(kBudget), "") << "round " << round;
      EXPECT_GT(res.tally.attempts, 0u);
      EXPECT_EQ(res.tally.successes, res.tally.attempts);
      EXPECT_GT(res.tally.alloc_seconds, 0.0);
      EXPECT_GT(res.timed_seconds, 0.0);
      if (pattern == "churn") {
        EXPECT_EQ(res.tally.frees, res.tally.successes);
        EXPECT_GE(res.tally.bytes, res.tally.successes * 16);
        EXPECT_LE(res.tally.bytes, res.tally.successes * 100);
      } else if (pattern == "per_thread_mixed") {
        std::uint64_t expected = 0;
        for (std::uint64_t tid = 0; tid < c.threads; ++tid) expected += mixed_size(tid, c.size);
        EXPECT_EQ(res.tally.attempts, c.threads);
        EXPECT_EQ(res.tally.bytes, expected);
        EXPECT_EQ(res.tally.frees, res.tally.successes);
      } else {
        const std::uint64_t per_call = threads_per_call(pattern);
        EXPECT_EQ(res.tally.attempts, (c.threads + per_call - 1) / per_call);
        EXPECT_EQ(res.tally.bytes, res.tally.successes * per_call * c.size);
        EXPECT_EQ(res.tally.frees, api == "alloca" ? 0u : res.tally.successes);
      }
      // The counters the pattern's reducer writes from this round.
      Counters counters;
      {
        auto reducer = r->reducer();
        reducer->add(res);
        reducer->write(counters, heap);
      }
      const bool times_use = pattern.rfind("cross_kernel", 0) == 0;
      EXPECT_EQ(counters.count("use_bytes_per_s"), times_use ? 1u : 0u);
      EXPECT_EQ(counters.count("frees_per_s"), api != "alloca" ? 1u : 0u);
      EXPECT_EQ(counters.count("lat_p50_ns"), pattern == "per_thread_latency" ? 1u : 0u);
      EXPECT_EQ(counters.count("stride_bytes"), pattern == "size_map" ? 1u : 0u);
      EXPECT_EQ(counters.at("heap_bytes"), static_cast<double>(heap));
      if (pattern == "size_map") {
        // Every block of the round, distinct, and at least `size` apart.
        const auto* blocks = res.observed.find<BlockAddresses>();
        ASSERT_NE(blocks, nullptr);
        std::vector<std::uint64_t> a = blocks->addresses;
        ASSERT_EQ(a.size(), res.tally.successes);
        EXPECT_GE(median_stride(a), static_cast<double>(c.size));
      } else {
        EXPECT_EQ(res.observed.find<BlockAddresses>(), nullptr);
      }
      if (pattern == "per_thread_latency") {
        const auto* lat = res.observed.find<LatencySamples>();
        ASSERT_NE(lat, nullptr);
        EXPECT_EQ(lat->alloc_ns.size(), c.threads);
        EXPECT_EQ(lat->free_ns.size(), c.threads);
        for (double ns : lat->alloc_ns) EXPECT_GT(ns, 0.0);
      }
      if (times_use) {
        EXPECT_GT(res.tally.use_seconds, 0.0);
        EXPECT_EQ(res.tally.use_bytes, 2 * c.threads * c.size);
      }
    }
  }
  EXPECT_EQ(probe_heap_capacity(heap), before) << "the case left blocks on the heap";
}

TEST_P(EveryPair, OversubscribedHeapFailsSomeCallsWithoutError) {
  const auto& [pattern, api] = GetParam();
  if (api == "alloca") GTEST_SKIP() << "the stack has no heap to oversubscribe";
  HeapSession s(0);
  // 8192 x 4 KiB = 32 MiB asked of an 8 MiB heap (or bump arena). churn holds
  // up to 8 blocks per thread of 16 B..4 KiB: also well past 8 MiB. An
  // allocator with a least heap above 8 MiB (ApiTraits::min_heap: gallatin's
  // 16 MiB) gets that heap and as many more threads, four times its heap.
  const std::uint64_t heap = std::max<std::uint64_t>(8 * kMiB, find_api_traits(api)->min_heap);
  const Case c = case_of(pattern, api, 4096, heap / 1024, heap);
  s.ensure_heap(c.malloc_heap());
  auto r = make_cuda_round(c, kBudget);
  const IterationResult res = run_round(*r, 0);
  EXPECT_EQ(res.problem(kBudget), "");
  EXPECT_GT(res.tally.attempts, res.tally.successes) << "no call failed";
  EXPECT_GT(res.tally.successes, 0u);
  EXPECT_EQ(res.tally.frees, res.tally.successes);
}

INSTANTIATE_TEST_SUITE_P(Pairs, EveryPair, ::testing::ValuesIn(all_pairs()), [](const auto& info) {
  return std::get<0>(info.param) + "_" + std::get<1>(info.param);
});

class PerThreadSizes : public ::testing::TestWithParam<std::uint64_t> {};

// Sizes that exercise the word loop, the byte tail, and both.
TEST_P(PerThreadSizes, MallocBlocksAreWritableAndAligned) {
  HeapSession s(0);
  const Case c = make_case("per_thread", "malloc", GetParam(), 0, 1000, 64 * kMiB);
  s.ensure_heap(c.malloc_heap());
  auto r = make_cuda_round(c, kBudget);
  const IterationResult res = run_round(*r, 0);
  EXPECT_EQ(res.problem(kBudget), "");
  EXPECT_EQ(res.tally.successes, 1000u);
  EXPECT_EQ(res.tally.bytes, 1000u * GetParam());
}
INSTANTIATE_TEST_SUITE_P(Sizes, PerThreadSizes, ::testing::Values(1, 3, 16, 100, 1000, 4096, 3001));

TEST(Alignment, EveryAlignedApiHonoursLargeAlignments) {
  for (const char* api : {"aligned", "cuda_std_aligned", "bump"}) {
    if (!is_api(api)) continue;  // cuda_std_aligned where CCCL < 3: not built (CMakeLists.txt)
    for (std::uint64_t align : {256u, 4096u}) {
      HeapSession s(0);
      const Case c = make_case("per_thread", api, 48, align, 512, 64 * kMiB);
      s.ensure_heap(c.malloc_heap());
      auto r = make_cuda_round(c, kBudget);
      const IterationResult res = run_round(*r, 0);
      EXPECT_EQ(res.problem(kBudget), "") << api << " align " << align;
      EXPECT_EQ(res.misaligned, 0u);
    }
  }
}

// 1024 threads fill an 8 MiB heap with 256 B blocks.
TEST(CapacityGpu, MallocFillsMostOfTheHeapAndRecoversAfterFreeing) {
  HeapSession s(0);
  const Case c = make_case("capacity", "malloc", 256, 0, 1024, 8 * kMiB);
  const std::uint64_t heap = s.ensure_heap(c.malloc_heap());
  const std::uint64_t before = probe_heap_capacity(heap);
  {
    auto r = make_cuda_round(c, kBudget);
    const IterationResult res = run_round(*r, 0);
    ASSERT_EQ(res.problem(kBudget), "");
    const CapacityRaw* raw = res.observed.find<CapacityRaw>();
    ASSERT_NE(raw, nullptr);
    const CapacityFigures f = capacity_figures(*raw);
    EXPECT_EQ(raw->heap_bytes, heap);
    EXPECT_GT(f.utilization, 0.3);
    EXPECT_LE(f.utilization, 1.0);
    EXPECT_GE(f.overhead_bytes, 0.0);
    EXPECT_GE(f.addr_range_ratio, 1.0);
    EXPECT_GT(f.recovery, 0.9);
    EXPECT_GT(f.recovery_allocs_per_s, 0.0);
    for (double e : f.ext_frag) EXPECT_LE(e, 1.0);
    EXPECT_LE(f.ext_frag_random, 1.0);
    EXPECT_EQ(raw->random_freed_bytes, raw->recovery_blocks / 2 * c.size);
    EXPECT_EQ(raw->freed_bytes, raw->addresses.size() / 2 * c.size);
    EXPECT_TRUE(std::is_sorted(raw->addresses.begin(), raw->addresses.end()));
  }
  EXPECT_EQ(probe_heap_capacity(heap), before) << "capacity must leave the heap empty";
}

// The first fill alone gives the same utilisation as the full measurement's
// first fill, and frees every block.
TEST(CapacityGpu, FillOnlyMatchesTheFullFillAndLeavesTheHeapEmpty) {
  HeapSession s(0);
  const std::uint64_t heap = s.ensure_heap(8 * kMiB);
  const std::uint64_t before = probe_heap_capacity(heap);
  CapacityFigures full, fill;
  {
    auto r = make_cuda_round(make_case("capacity", "malloc", 64, 0, 1024, 8 * kMiB), kBudget);
    const IterationResult res = run_round(*r, 0);
    ASSERT_EQ(res.problem(kBudget), "");
    const CapacityRaw* raw = res.observed.find<CapacityRaw>();
    ASSERT_NE(raw, nullptr);
    EXPECT_FALSE(raw->fill_only);
    full = capacity_figures(*raw);
  }
  {
    auto r = make_cuda_round(make_case("capacity_fill", "malloc", 64, 0, 1024, 8 * kMiB), kBudget);
    const IterationResult res = run_round(*r, 0);
    ASSERT_EQ(res.problem(kBudget), "");
    const CapacityRaw* raw = res.observed.find<CapacityRaw>();
    ASSERT_NE(raw, nullptr);
    EXPECT_TRUE(raw->fill_only);
    EXPECT_EQ(raw->freed_bytes, 0u);
    EXPECT_EQ(raw->recovery_blocks, 0u);
    fill = capacity_figures(*raw);
  }
  EXPECT_GT(fill.utilization, 0.3);
  EXPECT_NEAR(fill.utilization, full.utilization, 0.01);
  EXPECT_DOUBLE_EQ(fill.overhead_bytes, full.overhead_bytes);
  EXPECT_EQ(probe_heap_capacity(heap), before) << "capacity_fill must leave the heap empty";
}

TEST(CapacityGpu, BumpFillsItsArenaExactlyAndNeverReuses) {
  HeapSession s(0);
  const Case c = make_case("capacity", "bump", 256, 0, 1024, 8 * kMiB);
  s.ensure_heap(c.malloc_heap());
  auto r = make_cuda_round(c, kBudget);
  const IterationResult res = run_round(*r, 0);
  ASSERT_EQ(res.problem(kBudget), "");
  const CapacityRaw* raw = res.observed.find<CapacityRaw>();
  ASSERT_NE(raw, nullptr);
  const CapacityFigures f = capacity_figures(*raw);
  EXPECT_DOUBLE_EQ(f.utilization, 1.0);
  EXPECT_DOUBLE_EQ(f.overhead_bytes, 0.0);
  EXPECT_DOUBLE_EQ(f.addr_range_ratio, 1.0);
  EXPECT_DOUBLE_EQ(f.ext_frag[0], 1.0) << "a bump allocator gives nothing back";
  EXPECT_DOUBLE_EQ(f.recovery, 0.0);
  EXPECT_DOUBLE_EQ(f.ext_frag_random, 0.0) << "nothing recovered, nothing freed at random";
}

// printf into a 1 MiB FIFO: a few lines all arrive, intact and in full; many
// more than fit lose some, and what arrives is still well formed.
TEST(PrintfGpu, FifoDeliversWhatFitsAndLosesTheRest) {
  HeapSession s(0);
  s.invalidate();  // a fresh context: the FIFO cannot be resized after a kernel printed
  s.ensure_heap(1 * kMiB);
  {
    auto r = make_cuda_round(make_case("printf", "printf", 16, 0, 256, 1 * kMiB), kBudget);
    const IterationResult res = run_round(*r, 0);
    ASSERT_EQ(res.problem(kBudget), "");
    ASSERT_NE(res.observed.find<PrintfRaw>(), nullptr);
    const PrintfRaw& p = *res.observed.find<PrintfRaw>();
    EXPECT_EQ(p.calls, 256 * kPrintfLinesPerThread);
    EXPECT_EQ(p.lines.delivered, p.calls);
    EXPECT_EQ(p.lines.garbled, 0u);
    EXPECT_EQ(p.ret_documented, p.calls) << "device printf returns the number of arguments";
    EXPECT_EQ(p.fifo_bytes, 1 * kMiB);
    std::printf("PRINTF 2048 lines of 2 arguments into 1 MiB: delivered %llu\n",
                static_cast<unsigned long long>(p.lines.delivered));
  }
  {
    auto r = make_cuda_round(make_case("printf", "printf", 16, 0, 32768, 1 * kMiB), kBudget);
    const IterationResult res = run_round(*r, 0);
    ASSERT_EQ(res.problem(kBudget), "");
    ASSERT_NE(res.observed.find<PrintfRaw>(), nullptr);
    const PrintfRaw& p = *res.observed.find<PrintfRaw>();
    const PrintfFigures f = printf_figures(p);
    EXPECT_GT(p.lines.delivered, 0u);
    EXPECT_LT(p.lines.delivered, p.calls) << "262,144 lines cannot all fit in 1 MiB";
    EXPECT_GT(f.bytes_per_line, 0.0);
    EXPECT_EQ(p.ret_documented + p.ret_negative, p.calls) << "every call returned the documented value or an error";
    std::printf("PRINTF %llu lines of 2 arguments into 1 MiB: delivered %llu, garbled %llu, %.1f bytes per line, "
                "returns as documented %llu, negative %llu, other %lld\n",
                static_cast<unsigned long long>(p.calls), static_cast<unsigned long long>(p.lines.delivered),
                static_cast<unsigned long long>(p.lines.garbled), f.bytes_per_line,
                static_cast<unsigned long long>(p.ret_documented), static_cast<unsigned long long>(p.ret_negative),
                static_cast<long long>(p.ret_other));
  }
}

// The harness synchronises after a batch's launches (BatchControl::end) and only
// then collects: the runtime drains printf's FIFO at that first launch or
// synchronisation, so a drain timed in collect() timed an empty one and
// reported ~1e10 lines/s (results/H200/harness/step4/after.json). The round
// times it from its launch to collect(), less the kernel.
TEST(PrintfGpu, TheDrainIsTimedBeforeTheHarnessSynchronises) {
  HeapSession s(0);
  s.invalidate();
  s.ensure_heap(8 * kMiB);
  auto r = make_cuda_round(make_case("printf", "printf", 16, 0, 2048, 8 * kMiB), kBudget);
  r->begin_batch();
  r->begin();
  r->allocate();
  // The harness's next device work: any launch or synchronisation drains the
  // FIFO (BatchControl::end launches a kernel and synchronises); here a probe's.
  (void)probe_heap_capacity(8 * kMiB);
  const IterationResult res = r->collect();
  ASSERT_EQ(res.problem(kBudget), "");
  const PrintfRaw& p = *res.observed.find<PrintfRaw>();
  ASSERT_EQ(p.lines.delivered, p.calls) << "16,384 lines of 256 FIFO bytes each fit in 8 MiB";
  const PrintfFigures f = printf_figures(p);
  EXPECT_GT(p.flush_seconds, 0.0);
  EXPECT_LT(f.flush_lines_per_s, 1e8) << "the runtime writes each line through stdout: not 10^8 a second";
  EXPECT_DOUBLE_EQ(res.measuring_seconds, p.flush_seconds) << "the drain counts as measuring";
  std::printf("PRINTF drain of %llu lines: %.3f ms, %.3g lines/s\n", static_cast<unsigned long long>(p.lines.delivered),
              p.flush_seconds * 1e3, f.flush_lines_per_s);
}

TEST(Budget, ASpentBudgetIsReportedAsTruncationNotAsAFigure) {
  for (const char* pattern : {"per_thread", "churn"}) {
    HeapSession s(0);
    const Case c = make_case(pattern, "malloc", 64, 0, 1u << 16, 64 * kMiB);
    s.ensure_heap(c.malloc_heap());
    auto r = make_cuda_round(c, 1e-9);
    const IterationResult res = run_round(*r, 0);
    EXPECT_GT(res.not_started, 0u) << pattern;
    EXPECT_NE(res.problem(1e-9).find("truncated"), std::string::npos) << pattern;
  }
}

}  // namespace
}  // namespace heapbench
