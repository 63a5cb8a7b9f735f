#include "measure/metrics.hpp"

#include <gtest/gtest.h>

#include "measure/iteration_result.hpp"

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

// The reducers: what they write from the batches they were given.
Counters written(const Reducer& r, std::uint64_t heap_bytes = 1 << 20) {
  Counters out;
  r.write(out, heap_bytes);
  return out;
}

IterationResult batch_of(Tally t) {
  IterationResult r;
  r.tally = t;
  return r;
}

TEST(AllocationReducer, RatesOverTheSummedTallyAndTheReportedHeap) {
  Tally a;
  a.attempts = 100;
  a.successes = 50;
  a.bytes = 50 * 64;
  a.frees = 50;
  a.alloc_seconds = 1;
  a.free_seconds = 0.5;
  Tally b = a;
  b.successes = 150;  // a second batch with more successes
  b.attempts = 300;
  b.frees = 150;
  b.bytes = 150 * 64;
  auto r = allocation_reducer();
  r->add(batch_of(a));
  r->add(batch_of(b));
  const Counters c = written(*r, 12345);
  EXPECT_DOUBLE_EQ(c.at("allocs_per_s"), 100.0);
  EXPECT_DOUBLE_EQ(c.at("frees_per_s"), 200.0);
  EXPECT_DOUBLE_EQ(c.at("bytes_per_s"), 6400.0);
  EXPECT_DOUBLE_EQ(c.at("fail_rate"), 0.5);
  EXPECT_DOUBLE_EQ(c.at("heap_bytes"), 12345.0);
  EXPECT_EQ(c.count("use_bytes_per_s"), 0u);
  EXPECT_EQ(c.size(), 5u);
}

TEST(AllocationReducer, WritesOnlyTheCountersThePatternReports) {
  AllocationCounters which;
  which.frees = false;
  which.fail_rate = false;
  which.use = true;
  Tally t;
  t.use_bytes = 1000;
  t.use_seconds = 0.5;
  auto r = allocation_reducer(which);
  r->add(batch_of(t));
  const Counters c = written(*r);
  EXPECT_EQ(c.count("frees_per_s"), 0u);
  EXPECT_EQ(c.count("fail_rate"), 0u);
  EXPECT_DOUBLE_EQ(c.at("use_bytes_per_s"), 2000.0);
}

TEST(AllocationReducer, PeakBytesIsTheLargestRoundsBytesHeldAtOnce) {
  AllocationCounters which;
  which.peak = true;
  IterationResult four_rounds;  // 4 rounds of 1000 B each
  four_rounds.tally.bytes = 4000;
  four_rounds.round_seconds = {1, 1, 1, 1};
  IterationResult one_round;  // one round that obtained more (fewer NULLs)
  one_round.tally.bytes = 1500;
  auto r = allocation_reducer(which);
  r->add(four_rounds);
  r->add(one_round);
  EXPECT_DOUBLE_EQ(written(*r).at("peak_bytes"), 1500.0);
  EXPECT_EQ(written(*allocation_reducer()).count("peak_bytes"), 0u) << "only where a round holds its blocks at once";
}

TEST(LatencyReducer, PercentilesOverEveryBatchsSamples) {
  auto r = latency_reducer();
  IterationResult a, b;
  a.observed.put(LatencySamples{{1, 2, 3}, {10}});
  b.observed.put(LatencySamples{{4}, {20, 30}});
  r->add(a);
  r->add(b);
  r->add(IterationResult{});  // a batch without samples adds none
  const Counters c = written(*r);
  EXPECT_DOUBLE_EQ(c.at("lat_p50_ns"), 2.0);
  EXPECT_DOUBLE_EQ(c.at("lat_max_ns"), 4.0);
  EXPECT_DOUBLE_EQ(c.at("free_lat_p50_ns"), 20.0);
  EXPECT_DOUBLE_EQ(c.at("free_lat_p99_ns"), 30.0);
  EXPECT_EQ(c.size(), 8u);
  EXPECT_DOUBLE_EQ(written(*latency_reducer()).at("lat_p99_ns"), 0.0) << "no samples: zeros, as percentiles() says";
}

TEST(StrideReducer, MeanOfTheBatchesMedianStrides) {
  auto r = stride_reducer();
  EXPECT_EQ(written(*r).count("stride_bytes"), 0u) << "no batch with two blocks: no figure";
  IterationResult a, b, one;
  a.observed.put(BlockAddresses{{0, 32, 64}});
  b.observed.put(BlockAddresses{{128, 0, 64}});
  one.observed.put(BlockAddresses{{4096}});
  r->add(a);
  r->add(b);
  r->add(one);
  EXPECT_DOUBLE_EQ(written(*r).at("stride_bytes"), 48.0);
}

TEST(CapacityReducer, MeansOverRoundsAndFillOnlyWritesLess) {
  CapacityRaw raw;
  raw.heap_bytes = 4096;
  raw.size = 1024;
  raw.addresses = {0, 1024, 2048, 3072};
  raw.recovery_blocks = 4;
  IterationResult full;
  full.observed.put(raw);
  CapacityRaw half = raw;
  half.addresses = {0, 1024};
  IterationResult second;
  second.observed.put(half);
  auto r = capacity_reducer();
  r->add(full);
  r->add(second);
  const Counters c = written(*r);
  EXPECT_DOUBLE_EQ(c.at("utilization"), 0.75);
  EXPECT_DOUBLE_EQ(c.at("recovery"), 1.5);
  EXPECT_DOUBLE_EQ(c.at("addr_range_ratio_rounds"), 1.0);
  EXPECT_EQ(c.count("ext_frag_8x"), 1u);
  EXPECT_EQ(c.count("fail_rate"), 0u);

  raw.fill_only = true;
  IterationResult fill;
  fill.observed.put(raw);
  auto f = capacity_reducer();
  f->add(fill);
  const Counters k = written(*f);
  EXPECT_EQ(k.size(), 4u) << "capacity_fill: utilization, overhead_bytes, addr_range_ratio(_rounds)";
  EXPECT_EQ(k.count("ext_frag"), 0u);
}

TEST(Combine, EveryPartSeesEveryBatchAndWrites) {
  auto r = combine(allocation_reducer(), stride_reducer());
  Tally t;
  t.successes = 2;
  t.alloc_seconds = 1;
  IterationResult b = batch_of(t);
  b.observed.put(BlockAddresses{{0, 16}});
  r->add(b);
  const Counters c = written(*r);
  EXPECT_DOUBLE_EQ(c.at("allocs_per_s"), 2.0);
  EXPECT_DOUBLE_EQ(c.at("stride_bytes"), 16.0);
}

TEST(Observations, OneValuePerTypeTheLastPut) {
  Observations o;
  EXPECT_EQ(o.find<BlockAddresses>(), nullptr);
  o.put(BlockAddresses{{1}});
  o.put(LatencySamples{{2}, {}});
  o.put(BlockAddresses{{3, 4}});
  ASSERT_NE(o.find<BlockAddresses>(), nullptr);
  EXPECT_EQ(o.find<BlockAddresses>()->addresses, (std::vector<std::uint64_t>{3, 4}));
  EXPECT_EQ(o.find<LatencySamples>()->alloc_ns, std::vector<double>{2});
  EXPECT_EQ(o.find<CapacityRaw>(), nullptr);
}

}  // namespace
}  // namespace heapbench
