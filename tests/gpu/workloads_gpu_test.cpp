// The workloads (output, graph, hash) on the GPU: every strategy and
// allocator passes its verifier on an ample heap, leaves the heap as it found
// it, and a heap too small is a NULL counted (output) or an error (graph,
// hash), never a figure.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <tuple>

#include "cases/catalog.hpp"
#include "cases/case_naming.hpp"
#include "device/device.hpp"
#include "workloads/output_body.hpp"
#include "measure/round_phases.hpp"
#include "zoo_apis.hpp"

namespace heapbench {
namespace {

constexpr double kBudget = 10.0;

Case workload_case(const std::string& pattern, const std::string& api, std::uint64_t size, std::uint64_t threads,
                   std::uint64_t heap) {
  return make_case(pattern, api, size, takes_align(api) ? 16u : 0u, threads, heap);
}

std::vector<std::string> apis_of(const std::string& pattern) {
  std::vector<std::string> out;
  for (auto a : built_api_names()) {
    if (supported(pattern, a) && !from_zoo(a)) out.emplace_back(a);
  }
  return out;
}

// Two rounds of `c` with the heap probed before and after.
void expect_clean_rounds(const Case& c, const std::function<void(const IterationResult&)>& check = {}) {
  HeapSession s(0);
  const std::uint64_t heap = s.ensure_heap(c.malloc_heap());
  const std::uint64_t before = probe_heap_capacity(heap);
  {
    auto r = make_cuda_round(c, kBudget);
    for (int round = 0; round < 2; ++round) {
      const IterationResult res = run_round(*r, round);
      EXPECT_EQ(res.problem(kBudget), "") << case_name(c) << " round " << round;
      EXPECT_GT(res.timed_seconds, 0.0) << case_name(c);
      if (check) check(res);
    }
  }
  EXPECT_GE(probe_heap_capacity(heap) + 2 * kCapacityProbeBlock, before) << case_name(c) << ": blocks left behind";
}

class OutputStrategy : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

// 1000 threads (partial warps and blocks), sizes 4-100 B (odd sizes, tails).
TEST_P(OutputStrategy, EveryOutputIsObtainedAndReadsBack) {
  const auto& [api, writes] = GetParam();
  Case c = workload_case("output", api, 100, 1000, 256 * kMiB);
  c.size_min = 4;
  c.set_axis("writes", static_cast<std::uint64_t>(writes));
  std::uint64_t bytes = 0;
  for (std::uint64_t t = 0; t < c.threads; ++t) bytes += workloads::output_bytes(t, c.size_min, c.size);
  expect_clean_rounds(c, [&](const IterationResult& res) {
    EXPECT_EQ(res.tally.attempts, c.threads);
    EXPECT_EQ(res.tally.successes, c.threads);
    EXPECT_EQ(res.tally.bytes, bytes);
  });
}

std::vector<std::tuple<std::string, int>> output_params() {
  std::vector<std::tuple<std::string, int>> out;
  for (const auto& a : apis_of("output")) {
    for (int w : {0, 1}) out.emplace_back(a, w);
  }
  return out;
}
INSTANTIATE_TEST_SUITE_P(Apis, OutputStrategy, ::testing::ValuesIn(output_params()), [](const auto& info) {
  return std::get<0>(info.param) + "_writes" + std::to_string(std::get<1>(info.param));
});

TEST(OutputGpu, AHeapTooSmallForEveryOutputCountsTheNullsAsFailures) {
  HeapSession s(0);
  Case c = workload_case("output", "malloc", 4096, 100000, 8 * kMiB);
  c.size_min = 1024;
  s.ensure_heap(c.malloc_heap());
  auto r = make_cuda_round(c, kBudget);
  const IterationResult res = run_round(*r, 0);
  EXPECT_EQ(res.problem(kBudget), "");
  EXPECT_LT(res.tally.successes, res.tally.attempts);
  EXPECT_GT(res.tally.successes, 0u);
}

class DataStructure : public ::testing::TestWithParam<std::string> {};

TEST_P(DataStructure, HashAtTwoLoadsPassesItsVerifier) {
  for (std::uint64_t load : {50, 200}) {
    Case c = workload_case("hash", GetParam(), 24, 20000, 256 * kMiB);
    c.size_min = 8;
    c.set_axis("load_pct", load);
    expect_clean_rounds(c);
  }
}

TEST_P(DataStructure, GeneratedGraphsPassTheirVerifier) {
  for (const char* graph : {"rmat", "grid"}) {
    Case c = workload_case("graph", GetParam(), 4, 5000, 256 * kMiB);
    c.graph = graph;
    expect_clean_rounds(c);
  }
}

std::vector<std::string> data_structure_apis() {
  std::vector<std::string> out;
  for (const auto& a : apis_of("hash")) {
    if (a == "malloc" || a == "bump" || !find_api_traits(a)->heap_backed()) out.push_back(a);
  }
  return out;
}
INSTANTIATE_TEST_SUITE_P(Apis, DataStructure, ::testing::ValuesIn(data_structure_apis()),
                         [](const auto& info) { return info.param; });

TEST(HashGpu, AHeapTooSmallIsAnErrorNamingTheNulls) {
  HeapSession s(0);
  Case c = workload_case("hash", "malloc", 1024, 100000, 8 * kMiB);
  c.size_min = 1024;
  c.set_axis("load_pct", 100);
  s.ensure_heap(c.malloc_heap());
  auto r = make_cuda_round(c, kBudget);
  const std::string why = run_round(*r, 0).problem(kBudget);
  EXPECT_NE(why.find("returned NULL"), std::string::npos) << why;
}

TEST(GraphGpu, AHeapTooSmallIsAnErrorNamingTheNulls) {
  HeapSession s(0);
  Case c = workload_case("graph", "bump", 4, 1u << 16, 1 * kMiB);
  c.graph = "rmat";
  s.ensure_heap(8 * kMiB);
  auto r = make_cuda_round(c, kBudget);
  const std::string why = run_round(*r, 0).problem(kBudget);
  EXPECT_NE(why.find("returned NULL"), std::string::npos) << why;
}

}  // namespace
}  // namespace heapbench
