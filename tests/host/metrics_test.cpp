#include "heapbench/metrics.hpp"

#include <gtest/gtest.h>

namespace heapbench {
namespace {

TEST(Figures, HandComputedCase) {
  Tally t;
  t.attempts = 1000;
  t.successes = 750;
  t.bytes = 750 * 64;
  t.frees = 750;
  t.alloc_seconds = 0.5;
  t.free_seconds = 0.25;
  const Figures f = compute_figures(t);
  EXPECT_DOUBLE_EQ(f.allocs_per_s, 1500.0);
  EXPECT_DOUBLE_EQ(f.frees_per_s, 3000.0);
  EXPECT_DOUBLE_EQ(f.bytes_per_s, 96000.0);
  EXPECT_DOUBLE_EQ(f.fail_rate, 0.25);
}

TEST(Figures, TalliesAddUpBeforeRatesAreTaken) {
  // Two iterations: the rate is total successes over total time, not the mean of rates.
  Tally a{100, 100, 1600, 100, 1.0, 1.0};
  const Tally b{100, 50, 800, 50, 3.0, 1.0};
  a += b;
  const Figures f = compute_figures(a);
  EXPECT_DOUBLE_EQ(f.allocs_per_s, 150.0 / 4.0);
  EXPECT_DOUBLE_EQ(f.frees_per_s, 150.0 / 2.0);
  EXPECT_DOUBLE_EQ(f.fail_rate, 50.0 / 200.0);
}

TEST(Figures, NothingMeasuredGivesZeroNotNaN) {
  const Figures f = compute_figures(Tally{});
  EXPECT_EQ(f.allocs_per_s, 0.0);
  EXPECT_EQ(f.frees_per_s, 0.0);
  EXPECT_EQ(f.bytes_per_s, 0.0);
  EXPECT_EQ(f.fail_rate, 0.0);
}

TEST(Capacity, HandComputedFill) {
  // 4 blocks of 48 B on a 1024 B heap, 64 B apart (16 B of overhead each).
  CapacityRaw raw;
  raw.heap_bytes = 1024;
  raw.size = 48;
  raw.addresses = {1000, 1064, 1128, 1192};
  raw.freed_bytes = 2 * 48;            // every other block
  raw.refill_bytes[0] = 96;            // one 96 B block fits
  raw.refill_bytes[1] = 0;             // no 192 B block
  raw.refill_bytes[2] = 0;
  raw.recovery_blocks = 3;
  raw.recovery_seconds = 0.5;
  raw.random_freed_bytes = 96;   // two 48 B blocks freed at random
  raw.random_refill_bytes = 24;  // a quarter of it came back as 2x blocks
  const CapacityFigures f = capacity_figures(raw);
  EXPECT_DOUBLE_EQ(f.recovery_allocs_per_s, 6.0);
  EXPECT_DOUBLE_EQ(f.ext_frag_random, 0.75);
  EXPECT_DOUBLE_EQ(f.utilization, 4 * 48 / 1024.0);
  EXPECT_DOUBLE_EQ(f.overhead_bytes, 16.0);
  EXPECT_DOUBLE_EQ(f.addr_range_ratio, (192 + 48) / (4 * 48.0));
  EXPECT_DOUBLE_EQ(f.ext_frag[0], 0.0);
  EXPECT_DOUBLE_EQ(f.ext_frag[1], 1.0);
  EXPECT_DOUBLE_EQ(f.recovery, 0.75);
}

TEST(Capacity, PerfectPackingAndEmptyFills) {
  CapacityRaw raw;
  raw.heap_bytes = 4096;
  raw.size = 1024;
  raw.addresses = {0, 1024, 2048, 3072};
  raw.recovery_blocks = 4;
  const CapacityFigures f = capacity_figures(raw);
  EXPECT_DOUBLE_EQ(f.utilization, 1.0);
  EXPECT_DOUBLE_EQ(f.overhead_bytes, 0.0);
  EXPECT_DOUBLE_EQ(f.addr_range_ratio, 1.0);
  EXPECT_DOUBLE_EQ(f.ext_frag[0], 0.0) << "nothing freed: no fragmentation figure";
  EXPECT_DOUBLE_EQ(f.ext_frag_random, 0.0);
  EXPECT_DOUBLE_EQ(f.recovery_allocs_per_s, 0.0) << "no time measured: no rate";
  EXPECT_DOUBLE_EQ(f.recovery, 1.0);
  const CapacityFigures none = capacity_figures(CapacityRaw{});
  EXPECT_EQ(none.utilization, 0.0);
  EXPECT_EQ(none.recovery, 0.0);
}

TEST(Capacity, AddressSpanOverRounds) {
  CapacityRaw a, b;
  a.size = b.size = 100;
  a.addresses = {1000, 1100, 1200};  // packed: 300 bytes of 300
  b.addresses = {1300, 1400};        // the next round lands after the first
  AddressSpan span;
  EXPECT_EQ(span.ratio(), 0.0);
  span.add(a);
  EXPECT_DOUBLE_EQ(span.ratio(), 1.0);
  span.add(b);
  EXPECT_DOUBLE_EQ(span.ratio(), (1400 - 1000 + 100) / 300.0);
  span.add(CapacityRaw{});  // an empty round changes nothing
  EXPECT_DOUBLE_EQ(span.ratio(), 500 / 300.0);
}

TEST(Percentiles, NearestRankOnHandComputedSamples) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);  // 1..100, reversed
  const Percentiles p = percentiles(v);
  EXPECT_EQ(p.p50, 50.0);
  EXPECT_EQ(p.p90, 90.0);
  EXPECT_EQ(p.p99, 99.0);
  EXPECT_EQ(p.max, 100.0);
  std::vector<double> one = {7.0};
  const Percentiles q = percentiles(one);
  EXPECT_EQ(q.p50, 7.0);
  EXPECT_EQ(q.p99, 7.0);
  EXPECT_EQ(q.max, 7.0);
  std::vector<double> none;
  EXPECT_EQ(percentiles(none).max, 0.0);
  std::vector<double> ten = {5, 1, 9, 3, 7, 2, 8, 4, 6, 10};
  EXPECT_EQ(percentiles(ten).p90, 9.0);
  EXPECT_EQ(percentiles(ten).p50, 5.0);
}

}  // namespace
}  // namespace heapbench

namespace heapbench {
namespace {

TEST(MedianStride, IsTheBytesABlockReallyTakes) {
  // 80-byte blocks in two regions far apart, unsorted: the gap between regions is ignored.
  std::vector<std::uint64_t> a = {1000 + 80 * 3, 1000, 1000 + 80, 1 << 20, (1 << 20) + 80, 1000 + 80 * 2};
  EXPECT_DOUBLE_EQ(median_stride(a), 80.0);
  std::vector<std::uint64_t> one = {4096};
  EXPECT_DOUBLE_EQ(median_stride(one), 0.0);
  std::vector<std::uint64_t> none;
  EXPECT_DOUBLE_EQ(median_stride(none), 0.0);
}

}  // namespace
}  // namespace heapbench
