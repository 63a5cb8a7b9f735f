// Heap-size advice without a GPU: the size distribution a user types, the case
// that runs a workload, the bisection over a synthetic heap, the command line.
#include "advise/advise.hpp"
#include "cases/case_naming.hpp"

#include <gtest/gtest.h>

#include <set>

#include "cases/mixed_sizes.hpp"
#include "plan/options.hpp"
#include "parse_alone.hpp"

namespace heapbench {
namespace {

TEST(SizeDistribution, ParsesFixedRangeAndWeightedList) {
  auto d = parse_size_distribution("1000");
  EXPECT_EQ(d.kind, SizeDistribution::Kind::fixed);
  EXPECT_EQ(d.lo, 1000u);
  EXPECT_EQ(d.hi, 1000u);
  EXPECT_EQ(parse_size_distribution("16K").lo, 16384u);

  d = parse_size_distribution("16-256");
  EXPECT_EQ(d.kind, SizeDistribution::Kind::uniform);
  EXPECT_EQ(d.lo, 16u);
  EXPECT_EQ(d.hi, 256u);
  EXPECT_DOUBLE_EQ(d.mean_bytes(), 136.0);
  EXPECT_EQ(d.text(), "16-256");

  d = parse_size_distribution("64:3,1K:1");
  EXPECT_EQ(d.kind, SizeDistribution::Kind::weighted);
  ASSERT_EQ(d.weighted.size(), 2u);
  EXPECT_EQ(d.weighted[1].first, 1024u);
  EXPECT_DOUBLE_EQ(d.mean_bytes(), (3 * 64.0 + 1024.0) / 4);
  EXPECT_EQ(d.text(), "64:3,1024:1");
}

TEST(SizeDistribution, RefusesWhatDoesNotParse) {
  for (const char* bad : {"", "abc", "0", "-5", "256-16", "16-16", "16-", "-256", "64:0", "64:x", "64:1:2", "64:1,",
                          "64:-1", "1.5K", "64:nan"}) {
    EXPECT_THROW(parse_size_distribution(bad), std::invalid_argument) << bad;
  }
}

Workload workload(std::uint64_t threads, const std::string& size, const std::string& pattern = "per_thread") {
  Workload w;
  w.threads = threads;
  w.size = parse_size_distribution(size);
  w.pattern = pattern;
  return w;
}

TEST(WorkloadCase, MapsEachWorkloadOnTheCaseThatRunsIt) {
  Case c = workload_case(workload(100000, "1000"), 256 * kMiB);
  EXPECT_EQ(case_name(c), "per_thread/malloc/size:1000/threads:100000/heap:256");
  c = workload_case(workload(65536, "16-256"), 64 * kMiB);
  EXPECT_EQ(case_name(c), "per_thread_mixed/malloc/size:256/threads:65536/heap:64");
  c = workload_case(workload(1024 * 256, "64", "per_block"), 32 * kMiB);
  EXPECT_EQ(case_name(c), "per_block/malloc/size:64/threads:262144/heap:32");
  Workload aligned = workload(1024, "100");
  aligned.api = "aligned";
  aligned.align = 256;
  EXPECT_EQ(case_name(workload_case(aligned, 8 * kMiB)), "per_thread/aligned/size:100/align:256/threads:1024/heap:8");
}

TEST(WorkloadCase, RefusesWhatNoPatternRuns) {
  EXPECT_THROW(workload_case(workload(0, "64"), 0), std::invalid_argument);
  EXPECT_THROW(workload_case(workload(1024, "32-256"), 0), std::invalid_argument);   // per_thread_mixed starts at 16
  EXPECT_THROW(workload_case(workload(1024, "16-256", "per_warp"), 0), std::invalid_argument);
  EXPECT_THROW(workload_case(workload(1024, "64:1,256:1"), 0), std::invalid_argument);
  EXPECT_THROW(workload_case(workload(1024, "64", "churn"), 0), std::invalid_argument);
  Workload bump = workload(1024, "64");
  bump.api = "bump";
  EXPECT_THROW(workload_case(bump, 0), std::invalid_argument);
}

TEST(WorkloadDemand, CountsWhatTheCaseAsksFor) {
  EXPECT_EQ(workload_demand(workload(100000, "1000")), 100000u * 1000);
  EXPECT_EQ(workload_demand(workload(1024 * 256, "64", "per_block")), 16u * kMiB);  // 1024 blocks x 16 KiB
  EXPECT_EQ(workload_demand(workload(33, "8", "per_warp")), 2u * 32 * 8);            // a partial warp asks for all 32
  const std::uint64_t mixed = workload_demand(workload(65536, "16-256"));
  std::uint64_t expected = 0;
  for (std::uint64_t tid = 0; tid < 65536; ++tid) expected += mixed_size(tid, 256);
  EXPECT_EQ(mixed, expected);
  EXPECT_NEAR(static_cast<double>(mixed) / 65536, 136.0, 2.0);
}

// A synthetic heap: every allocation succeeds from `threshold_mib` up.
struct ThresholdHeap {
  std::uint64_t threshold_mib;
  std::vector<std::uint64_t> runs;
  HeapProbe operator()(std::uint64_t mib) {
    runs.push_back(mib);
    HeapProbe p;
    p.attempts = 1000;
    p.successes = mib >= threshold_mib ? 1000 : 1000 - std::min<std::uint64_t>(999, threshold_mib - mib);
    p.rounds = 1;
    return p;
  }
};

TEST(FindMinHeap, BisectsToTheThresholdWithinTheTolerance) {
  for (std::uint64_t threshold : {1u, 7u, 9u, 100u, 207u, 1000u, 4097u}) {
    for (double tol : {0.0, 0.02, 0.1}) {
      const std::uint64_t demand = threshold * kMiB * 46 / 100;  // 46 % utilisation, as for 1 KiB blocks on an H200
      ThresholdHeap heap{threshold, {}};
      const HeapSearch s = find_min_heap(demand, 100000, tol, std::ref(heap));
      ASSERT_TRUE(s.min_mib) << threshold;
      EXPECT_GE(*s.min_mib, threshold) << threshold << " tol " << tol;
      const auto slack = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(tol * static_cast<double>(*s.min_mib)));
      EXPECT_LE(*s.min_mib, threshold + slack) << threshold << " tol " << tol;
      if (s.max_failing_mib) EXPECT_LT(*s.max_failing_mib, threshold);
      // No heap size runs twice (each costs a device reset), and the search is logarithmic.
      EXPECT_EQ(std::set<std::uint64_t>(heap.runs.begin(), heap.runs.end()).size(), heap.runs.size());
      EXPECT_LE(heap.runs.size(), 30u);
      EXPECT_EQ(s.probes.size(), heap.runs.size());
    }
  }
}

TEST(FindMinHeap, NeverRunsBelowTheDemand) {
  ThresholdHeap heap{300, {}};
  const HeapSearch s = find_min_heap(200 * kMiB + 1, 100000, 0.0, std::ref(heap));
  for (auto mib : heap.runs) EXPECT_GT(mib, 200u);
  ASSERT_TRUE(s.min_mib);
  EXPECT_EQ(*s.min_mib, 300u);
  EXPECT_EQ(*s.max_failing_mib, 299u);
}

TEST(FindMinHeap, SaysSoWhenNothingUpToTheLimitHolds) {
  ThresholdHeap heap{5000, {}};
  const HeapSearch s = find_min_heap(100 * kMiB, 1024, 0.02, std::ref(heap));
  EXPECT_FALSE(s.min_mib);
  EXPECT_EQ(heap.runs.back(), 1024u);
  ThresholdHeap never{1, {}};
  EXPECT_FALSE(find_min_heap(2048 * kMiB, 1024, 0.02, std::ref(never)).min_mib);
  EXPECT_TRUE(never.runs.empty());  // the demand alone is over the limit
}

TEST(FindMinHeap, ABudgetSpentIsAFailure) {
  HeapProbe p;
  p.attempts = p.successes = 10;
  EXPECT_TRUE(p.all_succeeded());
  p.not_started = 1;
  EXPECT_FALSE(p.all_succeeded());
  HeapProbe none;
  EXPECT_FALSE(none.all_succeeded());
}

TEST(Advice, MarginRoundsUpAndTheCodeLineSetsIt) {
  EXPECT_EQ(advised_mib(200, 0.10), 220u);
  EXPECT_EQ(advised_mib(101, 0.10), 112u);
  EXPECT_EQ(advised_mib(101, 0.0), 101u);
  EXPECT_EQ(set_limit_code(220).rfind("cudaDeviceSetLimit(cudaLimitMallocHeapSize, size_t{220} << 20);", 0), 0u);
}

AdviseOptions parse(std::vector<const char*> args) {
  args.insert(args.begin(), "advise");
  return parse_advise_options(static_cast<int>(args.size()), args.data());
}

std::string usage_error(std::vector<const char*> args) {
  try {
    parse(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(AdviseOptions, ParsesAWorkload) {
  const AdviseOptions o = parse({"--threads=1024", "--size=64", "--pattern=per_block", "--margin=5", "--out=a.json"});
  EXPECT_EQ(o.workload.threads, 1024u);
  EXPECT_EQ(o.workload.pattern, "per_block");
  EXPECT_DOUBLE_EQ(o.margin, 0.05);
  EXPECT_EQ(*o.out, "a.json");
  EXPECT_EQ(parse({"--threads=100K", "--size=16-256"}).workload.threads, 102400u);
}

TEST(AdviseOptions, RefusesBadInputWithAClearMessage) {
  EXPECT_NE(usage_error({"--threads=1024"}).find("--size is required"), std::string::npos);
  EXPECT_NE(usage_error({"--size=64"}).find("--threads is required"), std::string::npos);
  EXPECT_NE(usage_error({"--threads=0", "--size=64"}).find("--threads=0"), std::string::npos);
  EXPECT_NE(usage_error({"--threads=8", "--size=16-abc"}).find("--size=16-abc"), std::string::npos);
  EXPECT_NE(usage_error({"--threads=8", "--size=64:1,256:1"}).find("list with weights"), std::string::npos);
  EXPECT_NE(usage_error({"--threads=8", "--size=64", "--pattern=churn"}).find("--pattern=churn"), std::string::npos);
  EXPECT_NE(usage_error({"--threads=8", "--size=64", "--margin=-1"}).find("--margin"), std::string::npos);
  EXPECT_NE(usage_error({"--threads=8", "--size=64", "--tolerance=0"}).find("--tolerance"), std::string::npos);
  EXPECT_NE(usage_error({"--threads=8", "--size=64", "--max-heap=100K"}).find("--max-heap"), std::string::npos);
  EXPECT_NE(usage_error({"--threads=8", "--size=64", "--bogus"}), "");
  // Issue 35 (E13): the demand wrapped to "0.0 MiB asked".
  EXPECT_NE(usage_error({"--threads=2", "--size=8589934592G"}).find("--size=8589934592G x --threads=2: the workload asks "
                                                                    "for more than 2^64 bytes"),
            std::string::npos);
  EXPECT_NE(usage_error({"--threads=8", "--size=64", "--align=-16"}).find("--align=-16:"), std::string::npos);
  EXPECT_NE(usage_error({"--threads=8", "--size=64", "--margin=1e20"}).find("--margin=1e20:"), std::string::npos);
  EXPECT_NE(usage_error({"--threads=8", "--size=64", "--size=128"}).find("--size=64 and --size=128: given 2 times"),
            std::string::npos);
}

}  // namespace
}  // namespace heapbench
