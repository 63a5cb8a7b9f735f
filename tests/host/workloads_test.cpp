// The workloads without a GPU (docs/workloads.md): the graph input (Matrix
// Market files, generated graphs, the seeded updates and their reference), the
// bodies and verifiers run on the CPU (tests/workloads/cpu_rounds.hpp), each
// verifier against strategies broken on purpose, and the counters.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>

#include "cpu_rounds.hpp"
#include "cases/case_naming.hpp"
#include "test_paths.hpp"
#include "workloads/graph_input.hpp"
#include "cases/catalog.hpp"
#include "measure/iteration_result.hpp"
#include "workloads/output_body.hpp"
#include "workloads/workload_metrics.hpp"

namespace heapbench {
namespace {

using workloads::GraphFileError;
using workloads::cpu::Break;

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = testing::own_temp_path(name);
  std::ofstream(path) << text;
  return path;
}

// The message read_matrix_market throws for `text`, or "" where it reads.
std::string mtx_error(const std::string& text) {
  try {
    workloads::read_matrix_market(write_file("t.mtx", text));
  } catch (const GraphFileError& e) {
    return e.what();
  }
  return "";
}

TEST(MatrixMarket, AGeneralFileIsItsEntriesAsEdges) {
  const auto g = workloads::read_matrix_market(
      write_file("g.mtx", "%%MatrixMarket matrix coordinate real general\n% c\n\n3 4 4\n1 2 1.5\n3 1 -2\n1 2 7\n2 2 0\n"));
  EXPECT_EQ(g.vertices, 4u);  // the larger of rows and columns
  EXPECT_EQ(g.offsets, (std::vector<std::uint64_t>{0, 1, 1, 2, 2}));
  EXPECT_EQ(g.targets, (std::vector<std::uint32_t>{1, 0}));  // the repeat and the self-loop dropped
}

TEST(MatrixMarket, ASymmetricFileGoesBothWays) {
  const auto g = workloads::read_matrix_market(
      write_file("s.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 2\n"));
  EXPECT_EQ(g.offsets, (std::vector<std::uint64_t>{0, 1, 3, 4}));
  EXPECT_EQ(g.targets, (std::vector<std::uint32_t>{1, 0, 2, 1}));
}

TEST(MatrixMarket, EveryMalformedFileIsOneLineNamingItsLine) {
  const std::string banner = "%%MatrixMarket matrix coordinate pattern general\n";
  const std::pair<std::string, std::string> cases[] = {
      {"", "empty file"},
      {"hello\n", ":1: not a Matrix Market file"},
      {"%%MatrixMarket matrix array real general\n2 2\n", ":1: format 'array' is not supported"},
      {"%%MatrixMarket matrix coordinate quaternion general\n", ":1: field 'quaternion'"},
      {"%%MatrixMarket matrix coordinate real diagonal\n", ":1: symmetry 'diagonal'"},
      {"%%MatrixMarket matrix coordinate real\n", ":1: the banner needs five words"},
      {banner, "ends before its size line"},
      {banner + "2 2\n", ":2: the size line must be three whole numbers"},
      {banner + "2 2 -1\n", ":2: the size line must be three whole numbers"},
      {banner + "% c\n2 2 2\n1 2\n", ":4: ends after 1 of the 2 entries"},
      {banner + "2 2 1\n1 2\n2 1\n", ":4: more entries than the 1"},
      {banner + "2 2 1\n1 x\n", ":3: '1 x' is not a row and a column"},
      // A byte a reader takes for a line break (Python's splitlines: \x1e, U+2028) is escaped, the word quoted.
      {banner + "2 2 1\n\x1e 0\n", ":3: \"\\x1e 0\" is not a row and a column"},
      {"%%MatrixMarket matrix coordinate p\xe2\x80\xa8 general\n", ":1: field \"p\\xe2\\x80\\xa8\" is not supported"},
      {banner + "2 2 1\n1 2 3\n", ":3: an entry needs 2 numbers"},
      {banner + "2 2 1\n0 1\n", ":3: entry (0, 1) is outside the 2 x 2 matrix"},
      {banner + "2 2 1\n3 1\n", ":3: entry (3, 1) is outside"},
      {banner + "99999999999 1 1\n", ":2: 99999999999 vertices, more than"},
      {banner + "1 1 99999999999999999999\n", ":2: the size line must be three whole numbers"},
  };
  for (const auto& [text, expected] : cases) {
    const std::string why = mtx_error(text);
    EXPECT_NE(why.find(expected), std::string::npos) << "for:\n" << text << "\ngot: " << why;
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  }
  EXPECT_EQ(mtx_error(banner + "2 2 1\n1 2\n"), "");
}

TEST(MatrixMarket, AFileThatCannotBeOpenedSaysSo) {
  try {
    workloads::read_matrix_market("/nonexistent/g.mtx");
    FAIL() << "no error";
  } catch (const GraphFileError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be opened"), std::string::npos);
  }
}

TEST(MatrixMarket, AFileIsHeldToWhatItHoldsNotWhatItDeclares) {
  // Issue 53, G12: a 60-byte file declaring 2^31 - 1 entries reserved 16 GiB before reading one.
  // Under an address-space limit 1 GiB above what the test has mapped that was std::bad_alloc; it is
  // now the file's own line.
  rlimit before{};
  ASSERT_EQ(::getrlimit(RLIMIT_AS, &before), 0);
  std::uint64_t pages = 0;
  std::ifstream("/proc/self/statm") >> pages;
  rlimit tight = before;
  tight.rlim_cur = std::min<rlim_t>(before.rlim_max, pages * ::sysconf(_SC_PAGESIZE) + (1ull << 30));
  ASSERT_EQ(::setrlimit(RLIMIT_AS, &tight), 0);
  std::string why;
  try {
    why = mtx_error("%%MatrixMarket matrix coordinate pattern general\n3 3 2147483647\n1 2\n");
  } catch (const std::bad_alloc&) {
    why = "std::bad_alloc";
  }
  ::setrlimit(RLIMIT_AS, &before);
  EXPECT_NE(why.find("ends after 1 of the 2147483647 entries"), std::string::npos) << why;
}

TEST(MatrixMarket, SpecialFilesAreRefusedBeforeTheyAreOpened) {
  // Issue 53, G12: --graph=/dev/zero read 2.1 GB before "empty file"; a FIFO hung.
  for (const auto& [path, kind] : {std::pair<std::string, std::string>{"/dev/zero", "a character device"},
                                   {"/tmp", "a folder"}}) {
    try {
      workloads::read_matrix_market(path);
      ADD_FAILURE() << path;
    } catch (const GraphFileError& e) {
      EXPECT_NE(std::string(e.what()).find("is " + kind + ", not a regular file"), std::string::npos) << e.what();
    }
  }
}

TEST(MatrixMarket, AFileReplacedSinceItWasPinnedIsRefused) {
  // Issue 53, G6: each child read --graph again by path; a replaced file was measured under the old name.
  const std::string text = "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n2 3\n";
  const std::string path = write_file("pinned.mtx", text);
  const std::string hash = workloads::read_matrix_market(path).content_hash;
  EXPECT_EQ(workloads::make_graph("pinned", path, 3, hash).edges(), 2u);
  EXPECT_EQ(workloads::make_graph("rmat", path, 64, hash).vertices, 64u) << "a generated graph reads no file";
  write_file("pinned.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n3 1\n");
  try {
    workloads::make_graph("pinned", path, 3, hash);
    FAIL() << "no error";
  } catch (const GraphFileError& e) {
    EXPECT_NE(std::string(e.what()).find("changed since this run first read it"), std::string::npos) << e.what();
  }
}

TEST(MatrixMarket, APinnedFileThatNoLongerReadsIsChangedNotMalformed) {
  const std::string path = write_file("half.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n2 3\n");
  const std::string hash = workloads::read_matrix_market(path).content_hash;
  write_file("half.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n");  // half written
  try {
    workloads::read_matrix_market(path, hash);
    FAIL() << "no error";
  } catch (const GraphFileError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("changed since this run first read it (content hash " + hash + "; now: "), std::string::npos)
        << what;
    EXPECT_NE(what.find("ends after 1 of the 2 entries"), std::string::npos) << what;
  }
}

TEST(MatrixMarket, AGraphIsNamedByItsFilesStemSafely) {
  EXPECT_EQ(workloads::graph_name_of_file("/data/road-usa.mtx"), "road-usa");
  EXPECT_EQ(workloads::graph_name_of_file("a b/c d.e.mtx"), "c_d_e");
  EXPECT_EQ(workloads::graph_name_of_file("../x/../../etc$.mtx"), "etc_");
  EXPECT_THROW(workloads::graph_name_of_file("/tmp/rmat.mtx"), GraphFileError);
  EXPECT_EQ(workloads::graph_name_of_file("/tmp/.mtx"), "_mtx");  // a hidden file: its whole name
  EXPECT_THROW(workloads::graph_name_of_file("/tmp/"), GraphFileError);
}

// Sorted rows without self-loops or repeats, targets inside the graph.
void expect_simple(const workloads::Csr& g) {
  ASSERT_EQ(g.offsets.size(), g.vertices + 1);
  for (std::uint64_t u = 0; u < g.vertices; ++u) {
    for (std::uint64_t i = g.offsets[u]; i < g.offsets[u + 1]; ++i) {
      EXPECT_LT(g.targets[i], g.vertices);
      EXPECT_NE(g.targets[i], u);
      if (i > g.offsets[u]) EXPECT_LT(g.targets[i - 1], g.targets[i]);
    }
  }
}

TEST(GeneratedGraphs, RmatIsSeededSimpleAndSkewed) {
  const auto a = workloads::rmat_graph(4096, 1), b = workloads::rmat_graph(4096, 1);
  EXPECT_EQ(a.targets, b.targets);
  expect_simple(a);
  EXPECT_GT(a.edges(), 4096u * 4);  // most of the 8 per vertex drawn survive
  std::uint64_t most = 0;
  for (std::uint64_t u = 0; u < a.vertices; ++u) most = std::max(most, a.offsets[u + 1] - a.offsets[u]);
  EXPECT_GT(most, 100u);  // hubs: R-MAT's power law
}

TEST(GeneratedGraphs, AGridJoinsNeighboursBothWays) {
  const auto g = workloads::grid_graph(10);  // 4 wide: rows 0-3, 4-7, 8-9
  expect_simple(g);
  EXPECT_EQ(g.offsets[1] - g.offsets[0], 2u);  // 1 and 4
  EXPECT_EQ(g.offsets[6] - g.offsets[5], 4u);  // 4, 6, 1, 9
  EXPECT_EQ(g.edges(), 2u * (7 + 6));          // horizontal 3+3+1, vertical 4+2
}

TEST(Updates, TheReferenceIsTheGraphWithEveryBatchApplied) {
  const auto g = workloads::rmat_graph(1000, 2);
  workloads::Csr final;
  const auto batches = workloads::make_updates(g, 3, final);
  ASSERT_EQ(batches.size(), static_cast<std::size_t>(workloads::kUpdateBatches));
  std::vector<std::vector<std::uint32_t>> lists(g.vertices);
  for (std::uint64_t u = 0; u < g.vertices; ++u) lists[u].assign(&g.targets[g.offsets[u]], &g.targets[g.offsets[u + 1]]);
  for (const auto& b : batches) {
    EXPECT_GT(b.insert_targets.size(), 400u);
    EXPECT_GT(b.delete_targets.size(), 400u);
    for (std::uint64_t u = 0; u < g.vertices; ++u) {
      for (auto i = b.insert_offsets[u]; i < b.insert_offsets[u + 1]; ++i) {
        EXPECT_EQ(std::count(lists[u].begin(), lists[u].end(), b.insert_targets[i]), 0) << "an insertion it has";
        lists[u].push_back(b.insert_targets[i]);
      }
    }
    for (std::uint64_t u = 0; u < g.vertices; ++u) {
      for (auto i = b.delete_offsets[u]; i < b.delete_offsets[u + 1]; ++i) {
        const auto at = std::find(lists[u].begin(), lists[u].end(), b.delete_targets[i]);
        ASSERT_NE(at, lists[u].end()) << "a deletion of an edge it does not have";
        lists[u].erase(at);
      }
    }
  }
  for (std::uint64_t u = 0; u < g.vertices; ++u) {
    EXPECT_EQ(lists[u], std::vector<std::uint32_t>(&final.targets[final.offsets[u]], &final.targets[final.offsets[u + 1]]));
  }
}

TEST(OutputBody, SizesAreSeededAndInTheirRange) {
  std::set<std::uint64_t> seen;
  for (std::uint64_t t = 0; t < 10000; ++t) {
    const auto b = workloads::output_bytes(t, 4, 64);
    EXPECT_GE(b, 4u);
    EXPECT_LE(b, 64u);
    EXPECT_EQ(b, workloads::output_bytes(t, 4, 64));
    seen.insert(b);
  }
  EXPECT_EQ(seen.size(), 61u);
  EXPECT_EQ(workloads::padded(17), 32u);
  EXPECT_EQ(workloads::padded(16), 16u);
}

TEST(OutputBody, TheVerifierReadsEveryByteBack) {
  alignas(16) unsigned char block[80] = {};
  workloads::write_output(block, 77, 5);
  EXPECT_EQ(workloads::output_mismatches(block, 77, 5), 0u);
  EXPECT_GT(workloads::output_mismatches(block, 77, 6), 0u);  // another owner's words
  block[76] ^= 1;                                              // the tail
  EXPECT_EQ(workloads::output_mismatches(block, 77, 5), 1u);
  EXPECT_TRUE(workloads::check_output(block + 4, 5, 4, 64).misaligned);
  EXPECT_TRUE(workloads::check_output(reinterpret_cast<void*>(1), 5, 4, 64).not_started);
  EXPECT_FALSE(workloads::check_output(nullptr, 5, 4, 64).present);
}

Case workload(const std::string& pattern, const std::string& api, std::uint64_t size, std::uint64_t threads) {
  Case c = make_case(pattern, api, size, takes_align(api) ? 16 : 0, threads, 256 * kMiB);
  c.size_min = pattern == "graph" ? 0 : 4;
  return c;
}

// One round of `c` on the CPU with `b`: its problem ("" when it passed).
std::string cpu_round(const Case& c, Break b) {
  auto r = workloads::cpu::make_round(c, b);
  r->begin_batch();
  r->begin();
  r->allocate();
  r->use();
  r->release();
  return r->collect().problem(5.0);
}

TEST(WorkloadsOnTheCpu, EveryOutputStrategyPassesItsVerifier) {
  for (const char* api : {"malloc", "bump", "slab", "warp_aggregated", "two_pass", "two_pass_async"}) {
    for (std::uint64_t writes : {0, 1}) {
      Case c = workload("output", api, 100, 1000);
      c.set_axis("writes", writes);
      EXPECT_EQ(cpu_round(c, Break::none), "") << case_name(c);
    }
  }
}

TEST(WorkloadsOnTheCpu, TheOutputVerifierCatchesADroppedOutputAndAnOverlap) {
  for (const char* api : {"malloc", "warp_aggregated", "two_pass"}) {
    for (std::uint64_t writes : {0, 1}) {
      Case c = workload("output", api, 100, 1000);
      c.set_axis("writes", writes);
      EXPECT_NE(cpu_round(c, Break::drop).find("outputs were missing"), std::string::npos) << case_name(c);
      EXPECT_NE(cpu_round(c, Break::overlap).find("did not read back"), std::string::npos) << case_name(c);
    }
  }
}

TEST(WorkloadsOnTheCpu, TheHashVerifierCatchesALostNodeAndASharedOne) {
  for (std::uint64_t load : {50, 200}) {
    Case c = workload("hash", "malloc", 24, 2000);
    c.set_axis("load_pct", load);
    EXPECT_EQ(cpu_round(c, Break::none), "") << case_name(c);
    EXPECT_NE(cpu_round(c, Break::drop).find("missing"), std::string::npos) << case_name(c);
    EXPECT_NE(cpu_round(c, Break::overlap).find("looked up wrong"), std::string::npos) << case_name(c);
  }
}

TEST(WorkloadsOnTheCpu, TheGraphVerifierCatchesALostInsertionAndASharedBlock) {
  for (const char* graph : {"rmat", "grid"}) {
    Case c = workload("graph", "malloc", 4, 2000);
    c.graph = graph;
    EXPECT_EQ(cpu_round(c, Break::none), "") << case_name(c);
    EXPECT_NE(cpu_round(c, Break::drop).find("lists differ"), std::string::npos) << case_name(c);
    EXPECT_NE(cpu_round(c, Break::overlap).find("lists differ"), std::string::npos) << case_name(c);
  }
}

TEST(WorkloadsOnTheCpu, AHeapTooSmallIsNullsForOutputAndAnErrorForTheStructures) {
  Case out = workload("output", "malloc", 4096, 2000);
  out.size_min = 2048;
  out.limit_bytes = 1 * kMiB;
  auto r = workloads::cpu::make_round(out, Break::none);
  r->begin();
  r->allocate();
  r->use();
  r->release();
  const IterationResult res = r->collect();
  EXPECT_EQ(res.problem(5.0), "");
  EXPECT_GT(res.tally.successes, 0u);
  EXPECT_LT(res.tally.successes, res.tally.attempts);
  Case h = workload("hash", "malloc", 1024, 5000);
  h.set_axis("load_pct", 100);
  h.limit_bytes = 1 * kMiB;
  EXPECT_NE(cpu_round(h, Break::none).find("returned NULL"), std::string::npos);
  Case g = workload("graph", "malloc", 4, 20000);
  g.graph = "rmat";
  g.limit_bytes = 64 * 1024;
  EXPECT_NE(cpu_round(g, Break::none).find("returned NULL"), std::string::npos);
}

TEST(WorkloadCounters, OutputRatesAreOverTheRoundsTimeAndNullsAreFailures) {
  OutputCounts c{};
  c.present = 900;
  c.bytes = 9000;
  c.nulls = c.reported_nulls = 100;
  const IterationResult r = output_result(c, 1000, 0.003, 0.001);
  EXPECT_EQ(r.problem(5.0), "");
  auto red = output_reducer();
  red->add(r);
  red->add(r);
  Counters out;
  red->write(out, 1u << 30);
  EXPECT_DOUBLE_EQ(out["outputs_per_s"], 1800 / 0.008);
  EXPECT_DOUBLE_EQ(out["output_bytes_per_s"], 18000 / 0.008);
  EXPECT_DOUBLE_EQ(out["fail_rate"], 0.1);
  EXPECT_DOUBLE_EQ(out["produce_s"], 0.003);
  EXPECT_DOUBLE_EQ(out["release_s"], 0.001);
  EXPECT_DOUBLE_EQ(out["heap_bytes"], 1u << 30);
  c.reported_nulls = 99;
  EXPECT_NE(output_result(c, 1000, 0.003, 0.001).problem(5.0).find("100 outputs were missing"), std::string::npos);
}

TEST(WorkloadCounters, PhasedRatesArePerSecondOfTheirPhase) {
  const double seconds[3] = {0.002, 0.004, 0.001};
  const IterationResult r = graph_result(GraphCounts{}, {1000, 8000, 2000, 1500}, seconds);
  EXPECT_EQ(r.problem(5.0), "");
  auto red = graph_reducer();
  red->add(r);
  Counters out;
  red->write(out, 0);
  EXPECT_DOUBLE_EQ(out["init_s"], 0.002);
  EXPECT_DOUBLE_EQ(out["update_s"], 0.004);
  EXPECT_DOUBLE_EQ(out["release_s"], 0.001);
  EXPECT_DOUBLE_EQ(out["edges_per_s"], 8000 / 0.002);
  EXPECT_DOUBLE_EQ(out["edge_updates_per_s"], 2000 / 0.004);
  EXPECT_DOUBLE_EQ(out["allocs_per_s"], 1500 / 0.006);
  HashCounts h{};
  h.nodes[0] = 10;
  h.nodes[1] = 5;
  auto hr = hash_reducer();
  hr->add(hash_result(h, 10, seconds));
  Counters hout;
  hr->write(hout, 0);
  EXPECT_DOUBLE_EQ(hout["inserts_per_s"], 10 / 0.002);
  EXPECT_DOUBLE_EQ(hout["deletes_per_s"], 5 / 0.004);
  EXPECT_EQ(hout.count("allocs_per_s"), 0u);
  h.nodes[1] = 6;
  EXPECT_NE(hash_result(h, 10, seconds).problem(5.0).find("the chains held 10 nodes"), std::string::npos);
  h.faults[1] = 1;
  h.kinds = workloads::kHashNotDeleted | workloads::kHashCorrupt;
  EXPECT_NE(hash_result(h, 10, seconds).problem(5.0).find("present after its delete, value corrupted"),
            std::string::npos);
}

TEST(WorkloadCounters, BlocksAreTheCapacityRuleReplayed) {
  workloads::Csr g;  // one vertex of degree 3, another of 0
  g.vertices = 2;
  g.offsets = {0, 3, 3};
  g.targets = {1, 1, 1};
  workloads::UpdateBatch grow;  // vertex 0 gains 2 (3 + 2 > 4: a block of 8)
  grow.insert_offsets = {0, 2, 2};
  grow.insert_targets = {1, 1};
  grow.delete_offsets = {0, 0, 0};
  workloads::UpdateBatch shrink;  // then loses 3 (2 <= 8 / 4: a block of 4)
  shrink.insert_offsets = {0, 0, 0};
  shrink.delete_offsets = {0, 3, 3};
  shrink.delete_targets = {1, 1, 1};
  EXPECT_EQ(workloads::blocks_allocated(g, {grow, shrink}), 4u);
}

}  // namespace
}  // namespace heapbench
