// heapbench check's judges (src/check/check.cpp) and its battery on the CPU grid
// (check/check_battery.hpp over tests/check/), in this process.
#include <gtest/gtest.h>

#include "cpu_grid.hpp"
#include "check/check.hpp"
#include "check/check_battery.hpp"
#include "plan/options.hpp"
#include "parse_alone.hpp"
#include "host_allocators.hpp"

namespace heapbench::check {
namespace {

TEST(CheckOverlaps, DisjointAndTouchingBlocksDoNotOverlap) {
  const OverlapFinding f = find_overlaps({{0x1000, 16, 16, 0}, {0x1010, 16, 16, 1}, {0x2000, 64, 16, 2}});
  EXPECT_EQ(f.pairs, 0u);
  EXPECT_FALSE(f.first);
}

TEST(CheckOverlaps, TheSameAddressTwiceIsADoubleAllocation) {
  const OverlapFinding f = find_overlaps({{0x3000, 64, 16, 9}, {0x1000, 64, 16, 1}, {0x3000, 64, 16, 4}});
  EXPECT_EQ(f.pairs, 1u);
  EXPECT_EQ(f.same_address, 1u);
  ASSERT_TRUE(f.first);
  EXPECT_EQ(f.first->first.owner, 4u);  // ties by address are ordered by owner
  EXPECT_EQ(f.first->second.owner, 9u);
}

TEST(CheckOverlaps, ALargeBlockIsComparedWithEveryBlockInsideIt) {
  // Only neighbours would see one pair; the block at 0x1000 reaches over both.
  const OverlapFinding f = find_overlaps({{0x1000, 0x100, 16, 0}, {0x1010, 16, 16, 1}, {0x1080, 16, 16, 2}});
  EXPECT_EQ(f.pairs, 2u);
  EXPECT_EQ(f.same_address, 0u);
  EXPECT_EQ(f.first->first.addr, 0x1000u);
  EXPECT_EQ(f.first->second.addr, 0x1010u);
}

TEST(CheckOverlaps, ASizeZeroBlockStillOwnsItsAddress) {
  EXPECT_EQ(find_overlaps({{0x1000, 0, 16, 0}, {0x1000, 0, 16, 1}}).pairs, 1u);
}

TEST(CheckAlignment, CountsEveryMisalignedBlockAndNamesTheFirst) {
  BlockSet s;
  s.label = "3";
  s.attempts = 3;
  s.blocks = {{0x1000, 8, 16, 0}, {0x1008, 8, 16, 1}, {0x2040, 8, 128, 2}};
  const Misalignment m = find_misaligned(s.blocks);
  EXPECT_EQ(m.count, 2u);
  EXPECT_EQ(m.first->owner, 1u);
  const RowResult r = judge_alignment(s);
  EXPECT_EQ(r.verdict, Verdict::fail);
  EXPECT_NE(r.evidence.find("0x1008"), std::string::npos) << r.evidence;
  s.blocks = {{0x1000, 8, 16, 0}, {0x2080, 8, 128, 2}};
  EXPECT_EQ(judge_alignment(s).verdict, Verdict::pass);
}

TEST(CheckOverlapRow, FailsOnAStampThatDidNotReadBackEvenWithoutAnAddressOverlap) {
  BlockSet s;
  s.label = "fixed";
  s.attempts = 2;
  s.blocks = {{0x1000, 64, 16, 0}, {0x2000, 64, 16, 1}};
  EXPECT_EQ(judge_overlap({s}).verdict, Verdict::pass);
  s.mismatched_blocks = 1;
  s.mismatched_words = 3;
  s.first_mismatch = 1;
  const RowResult r = judge_overlap({s});
  EXPECT_EQ(r.verdict, Verdict::fail);
  EXPECT_NE(r.evidence.find("lost their owner's stamp"), std::string::npos) << r.evidence;
}

TEST(CheckOverlapRow, NothingServedIsNotAPass) {
  BlockSet s;
  s.label = "fixed";
  s.attempts = 100;
  EXPECT_EQ(judge_overlap({s}).verdict, Verdict::fail);
  s.not_started = 100;
  EXPECT_EQ(judge_overlap({s}).verdict, Verdict::fail);
}

Fill full_heap() {
  Fill f;
  f.heap_bytes = 1 << 20;
  f.size = 1024;
  f.max_blocks = (1 << 20) / 16 + 64;
  f.blocks = 900;
  f.nulls = 64;
  return f;
}

TEST(CheckExhaustion, NullWhenFullWithEveryBlockIntactPasses) {
  const RowResult r = judge_exhaustion(full_heap(), 5);
  EXPECT_EQ(r.verdict, Verdict::pass) << r.evidence;
  EXPECT_TRUE(r.reports_full);
}

TEST(CheckExhaustion, AHangAndNoNullFailAndLeaveTheHeapUnmeasurable) {
  Fill hang = full_heap();
  hang.finished = false;
  Fill no_null = full_heap();
  no_null.beyond = 64;
  no_null.nulls = 0;
  Fill overfull = full_heap();
  overfull.blocks = 2000;  // 2000 KiB held in a 1 MiB heap
  for (const Fill& f : {hang, no_null, overfull}) {
    const RowResult r = judge_exhaustion(f, 5);
    EXPECT_EQ(r.verdict, Verdict::fail) << r.evidence;
    EXPECT_FALSE(r.reports_full) << r.evidence;
  }
}

TEST(CheckExhaustion, ASlowFillFailsEvenWithSomeNulls) {
  Fill f = full_heap();
  f.not_started = 3;
  const RowResult r = judge_exhaustion(f, 5);
  EXPECT_EQ(r.verdict, Verdict::fail);
  EXPECT_NE(r.evidence.find("3 threads found the 5.0 s budget spent"), std::string::npos) << r.evidence;
}

TEST(CheckExhaustion, CorruptedNeighboursFailButTheHeapStillReportedFull) {
  Fill f = full_heap();
  f.mismatched_blocks = 2;
  f.first_mismatch_addr = 0xabc0;
  const RowResult r = judge_exhaustion(f, 5);
  EXPECT_EQ(r.verdict, Verdict::fail);
  EXPECT_TRUE(r.reports_full);
  EXPECT_NE(r.evidence.find("0xabc0"), std::string::npos) << r.evidence;
}

TEST(CheckCapacity, AfterMustReachBeforeWithinTheTolerance) {
  EXPECT_EQ(judge_recovery({{16, 1000, 1000}, {256, 100, 98}}).verdict, Verdict::pass);
  EXPECT_EQ(judge_recovery({{16, 1000, 1000}, {256, 100, 97}}).verdict, Verdict::fail);
  EXPECT_EQ(judge_recovery({{16, 0, 0}}).verdict, Verdict::fail);  // nothing served: nothing shown
  EXPECT_EQ(judge_leak({256, 1000, 1000}, 8).verdict, Verdict::pass);
  const RowResult leak = judge_leak({256, 1000, 875}, 8);
  EXPECT_EQ(leak.verdict, Verdict::fail);
  EXPECT_NE(leak.evidence.find("125 blocks lost"), std::string::npos) << leak.evidence;
  EXPECT_EQ(judge_remote_free({256, 1000, 1000}, 0).verdict, Verdict::pass);
  EXPECT_EQ(judge_remote_free({256, 1000, 500}, 0).verdict, Verdict::fail);
}

Edge good_edge() {
  Edge e;
  e.heap_bytes = 1 << 20;
  e.largest = 1 << 19;
  e.boundaries.attempts = 2;
  e.boundaries.blocks = {{0x1000, 17, 16, 0}, {0x2000, 15, 16, 1}};
  return e;
}

TEST(CheckEdge, EachCallAtTheEdgeCanFailTheRow) {
  EXPECT_EQ(judge_edge(good_edge()).verdict, Verdict::pass);
  Edge zero = good_edge();
  zero.zero_a = zero.zero_b = 0x5000;  // size 0 twice: the same block
  EXPECT_EQ(judge_edge(zero).verdict, Verdict::fail);
  zero.zero_b = 0x6000;
  EXPECT_EQ(judge_edge(zero).verdict, Verdict::pass);
  Edge past = good_edge();
  past.past_heap = 0x7000;
  EXPECT_EQ(judge_edge(past).verdict, Verdict::fail);
  Edge nothing = good_edge();
  nothing.largest = 0;
  EXPECT_EQ(judge_edge(nothing).verdict, Verdict::fail);
  Edge short_served = good_edge();
  short_served.boundaries.attempts = 3;
  EXPECT_EQ(judge_edge(short_served).verdict, Verdict::fail);
}

TEST(CheckSoak, AnyLostStampFails) {
  Soak s;
  s.allocations = s.frees = 1000;
  EXPECT_EQ(judge_soak(s).verdict, Verdict::pass);
  s.mismatched_blocks = 1;
  EXPECT_EQ(judge_soak(s).verdict, Verdict::fail);
}

TEST(CheckTraits, AnAllocatorThatNeverFreesIsNotSupportedWhereFreeingIsTheProperty) {
  const Capabilities bump = capabilities(api::kBump, 16);
  EXPECT_FALSE(bump.frees);
  for (Row r : kRows) {
    const bool needs_free = r == Row::recovery || r == Row::leak || r == Row::remote_free;
    EXPECT_EQ(unsupported(r, bump, "bump").has_value(), needs_free) << row_name(r);
    EXPECT_FALSE(unsupported(r, capabilities(api::kMalloc, 16), "malloc")) << row_name(r);
  }
}

TEST(CheckRows, NamesRoundTripThroughJson) {
  for (Row row : kRows) {
    RowResult r;
    r.row = row;
    r.verdict = Verdict::not_supported;
    r.evidence = "why";
    r.heap_bytes = 3 << 20;
    r.reports_full = false;
    const RowResult back = row_from_json(nlohmann::json::parse(to_json(r).dump()));
    EXPECT_EQ(back.row, row);
    EXPECT_EQ(back.verdict, Verdict::not_supported);
    EXPECT_EQ(back.evidence, "why");
    EXPECT_EQ(back.heap_bytes, 3u << 20);
    EXPECT_FALSE(back.reports_full);
  }
  EXPECT_THROW(row_from_json({{"row", "nosuch"}, {"verdict", "PASS"}, {"evidence", ""}}), nlohmann::json::exception);
}

TEST(CheckHeaps, RowsThatNeedEveryCallServedGetFourTimesTheirDemand) {
  EXPECT_EQ(heap_for(Row::exhaustion, 32 << 20, 1 << 20, false), 32u << 20);
  EXPECT_EQ(heap_for(Row::overlap, 32 << 20, 1 << 20, false), 800u << 20);  // 2^20 x (64 + 136) B x 4
  EXPECT_EQ(heap_for(Row::overlap, 1024u << 20, 1 << 20, false), 1024u << 20);
  EXPECT_GT(heap_for(Row::alignment, 1 << 20, 64, true), heap_for(Row::alignment, 1 << 20, 64, false));
}

TEST(CheckOptions, DefaultsAndRefusals) {
  const std::vector<std::string> known = {"malloc", "bump"};
  const char* plain[] = {"check"};
  const CheckOptions o = parse_check_options(1, plain, known);
  EXPECT_EQ(o.apis, known);
  EXPECT_EQ(o.heaps, std::vector<std::uint64_t>{8u << 20});
  EXPECT_EQ(o.rows.size(), kRows.size());
  EXPECT_EQ(o.threads, 1u << 20);
  const char* child[] = {"check", "--apis=malloc,bump", "--child-out=x"};
  EXPECT_THROW(parse_check_options(3, child, known), UsageError);
  // A row's process: its plan and its row's file, nothing else (issue 54: check handed its children flags).
  // Its line as the check and the sanitizer row compose it (row_process_args), which the parser takes.
  const std::vector<std::string> line = row_process_args("p.plan", "x");
  std::vector<const char*> row;
  for (const std::string& a : line) row.push_back(a.c_str());
  const CheckOptions r = parse_check_options(static_cast<int>(row.size()), row.data(), known);
  EXPECT_EQ(r.child_plan.value_or(""), "p.plan");
  EXPECT_EQ(r.child_out.value_or(""), "x");
  const char* flagged[] = {"check", "--child-plan=p.plan", "--child-out=x", "--rows=soak"};
  try {
    parse_check_options(4, flagged, known);
    ADD_FAILURE() << "a row's process took a flag";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--rows: a row's process takes its row from its plan"), std::string::npos)
        << e.what();
  }
  const char* no_out[] = {"check", "--child-plan=p.plan"};
  EXPECT_THROW(parse_check_options(2, no_out, known), UsageError);
  const char* rows[] = {"check", "--rows=soak,overlap,soak"};
  EXPECT_EQ(parse_check_options(2, rows, known).rows, (std::vector<Row>{Row::soak, Row::overlap}));
}

TEST(CheckOptions, ARowsPlanCarriesItsRowAndReadsBackTheSame) {
  CheckOptions o;
  o.threads = 4096;
  o.soak_s = 0.25;
  o.kernel_budget_s = 0.1;  // not exact in binary: the same double must come back
  o.device = 2;
  const RowSlice s = row_slice(o, "bump", 16u << 20, {Row::soak, Row::edge});
  const RowSlice back = row_slice_from_json(nlohmann::json::parse(to_json(s).dump()));
  EXPECT_EQ(back.api, "bump");
  EXPECT_EQ(back.heap, 16u << 20);
  EXPECT_EQ(back.rows, (std::vector<Row>{Row::soak, Row::edge}));
  EXPECT_EQ(back.threads, 4096u);
  EXPECT_EQ(back.soak_s, 0.25);
  EXPECT_EQ(back.kernel_budget_s, 0.1);
  EXPECT_EQ(back.device, 2);
  CheckOptions child;
  child.child_plan = "p.plan";
  child.child_out = "x.json";
  const CheckOptions made = options_of_slice(child, back);
  EXPECT_EQ(made.apis, std::vector<std::string>{"bump"});
  EXPECT_EQ(made.heaps, std::vector<std::uint64_t>{16u << 20});
  EXPECT_EQ(made.rows, (std::vector<Row>{Row::soak, Row::edge}));
  EXPECT_EQ(made.child_out.value_or(""), "x.json");
  nlohmann::json bad = to_json(s);
  bad["rows"] = {"soak", "nope"};
  EXPECT_THROW(row_slice_from_json(bad), std::invalid_argument);
  bad["rows"] = nlohmann::json::array();
  EXPECT_THROW(row_slice_from_json(bad), std::invalid_argument);
  bad = to_json(s);
  bad.erase("device");
  EXPECT_THROW(row_slice_from_json(bad), std::invalid_argument);
  EXPECT_THROW(row_slice_from_json(nlohmann::json::array()), std::invalid_argument);
}

// check refuses a budget and a heap in the main program's words (benchmark_flags.hpp),
// quoting the value as typed: 1e999, not the inf it converts to.
TEST(CheckOptions, RefusesInTheMainProgramsWords) {
  const std::vector<std::string> known = {"malloc"};
  auto refusal = [&](const char* flag) {
    const char* argv[] = {"check", flag};
    try {
      parse_check_options(2, argv, known);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refusal("--kernel-budget-ms=1e999"), "--kernel-budget-ms=1e999: must be > 0 and finite");
  EXPECT_EQ(refusal("--kernel-budget-ms=0"), "--kernel-budget-ms=0: must be > 0 and finite");
  EXPECT_EQ(refusal("--heaps=1536K"), "--heaps=1536K: 1572864 bytes is not a whole number of MiB");
  EXPECT_EQ(refusal("--heaps=2M"), "--heaps=2M: at least 4M (the edge row holds about 1 MiB of blocks at once)");
  EXPECT_EQ(refusal("--heaps=2"), "--heaps=2: at least 4M (the edge row holds about 1 MiB of blocks at once)")
      << "a bare number is MiB";
  EXPECT_EQ(refusal("--soak-ms=1e20"), "--soak-ms=1e20: above 0, at most 600000") << "as typed, not 1e+20";
  EXPECT_EQ(refusal("--apis="), "--apis=: empty value (an unset shell variable?); give a value or leave the flag out");
  // Issue 36 (7): the main program suggests the closest name; check did not.
  EXPECT_EQ(refusal("--apis=maloc"), "--apis=maloc: 'maloc' is not an allocator this binary can check; did you mean "
                                     "'malloc'? (it can check malloc)");
  EXPECT_NE(refusal("--rows=overlpa").find("did you mean 'overlap'?"), std::string::npos);
}

// The battery itself, on CPU threads, in this process.
RowResult run_on_cpu(Row row, cpu::Bug bug) {
  RowPlan p;
  p.row = row;
  p.threads = 2048;
  p.heap_bytes = heap_for(row, 4 << 20, p.threads, false);
  p.soak_s = 0.2;
  p.budget_s = 5;
  p.free_null = true;
  cpu::Grid g(10, 2);
  cpu::Heap heap(p.heap_bytes, bug);
  return run_row(g, cpu::Handle{&heap}, [&] { heap.reset(); }, p);
}

TEST(CheckBatteryOnCpu, TheReferenceAllocatorPassesTheRowsThatEndByThemselves) {
  for (Row row : {Row::overlap, Row::alignment, Row::exhaustion, Row::recovery, Row::leak, Row::lifetimes,
                  Row::remote_free, Row::edge, Row::soak}) {
    const RowResult r = run_on_cpu(row, cpu::Bug::none);
    EXPECT_EQ(r.verdict, Verdict::pass) << row_name(row) << ": " << r.evidence;
  }
}

TEST(CheckBatteryOnCpu, ADoubleAllocationIsFoundByAddressAndByStamp) {
  const RowResult r = run_on_cpu(Row::overlap, cpu::Bug::double_alloc);
  EXPECT_EQ(r.verdict, Verdict::fail);
  EXPECT_NE(r.evidence.find("at the same address"), std::string::npos) << r.evidence;
  EXPECT_EQ(run_on_cpu(Row::lifetimes, cpu::Bug::double_alloc).verdict, Verdict::fail);
}

TEST(CheckBatteryOnCpu, AHeapThatNeverSaysFullFailsExhaustion) {
  const RowResult r = run_on_cpu(Row::exhaustion, cpu::Bug::never_null);
  EXPECT_EQ(r.verdict, Verdict::fail);
  EXPECT_FALSE(r.reports_full);
}

TEST(CheckBatteryOnCpu, ALeakFailsLeakAndRecovery) {
  EXPECT_EQ(run_on_cpu(Row::leak, cpu::Bug::leak).verdict, Verdict::fail);
  EXPECT_EQ(run_on_cpu(Row::recovery, cpu::Bug::leak).verdict, Verdict::fail);
  EXPECT_EQ(run_on_cpu(Row::exhaustion, cpu::Bug::leak).verdict, Verdict::pass);
}

}  // namespace
}  // namespace heapbench::check
