#include "report/counter_units.hpp"

#include <set>
#include <stdexcept>
#include <string_view>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace heapbench {
namespace {

TEST(CounterUnits, WhatTheIssueSawIsShownInUnitsAPersonReads) {
  // Google Benchmark's console showed noise=3.1309m, heap_bytes=8.38861M, timed_s=380.288u.
  EXPECT_EQ(format_counter("noise", 3.1309e-3), "0.313 %");
  EXPECT_EQ(format_counter("heap_bytes", 8388608), "8 MiB");
  EXPECT_EQ(format_counter("timed_s", 380.288e-6), "380 us");
}

TEST(CounterUnits, EachUnitScalesToItsLargestWholeUnit) {
  EXPECT_EQ(format_counter("fail_rate", 0), "0 %");
  EXPECT_EQ(format_counter("utilization", 0.1729), "17.3 %");
  EXPECT_EQ(format_counter("ext_frag", -0.05), "-5 %");
  EXPECT_EQ(format_counter("heap_bytes", 1024.0 * 1024 * 1024), "1 GiB");
  EXPECT_EQ(format_counter("stride_bytes", 96), "96 B");
  EXPECT_EQ(format_counter("overhead_bytes", 1536), "1.5 KiB");
  EXPECT_EQ(format_counter("bytes_per_line", 40), "40 B");
  EXPECT_EQ(format_counter("bytes_per_s", 12.5 * 1024 * 1024 * 1024), "12.5 GiB/s");
  EXPECT_EQ(format_counter("use_bytes_per_s", 512), "512 B/s");
  EXPECT_EQ(format_counter("allocs_per_s", 3439845), "3.44 M/s");
  EXPECT_EQ(format_counter("frees_per_s", 32000), "32 k/s");
  EXPECT_EQ(format_counter("timed_s", 4.66), "4.66 s");
  EXPECT_EQ(format_counter("timed_s", 0.004), "4 ms");
  EXPECT_EQ(format_counter("lat_p50_ns", 512), "512 ns");
  EXPECT_EQ(format_counter("free_lat_max_ns", 1234567), "1.23 ms");
  EXPECT_EQ(format_counter("sm_clock_mhz", 1979.6), "1980 MHz");
  EXPECT_EQ(format_counter("rounds", 5), "5");
  EXPECT_EQ(format_counter("addr_range_ratio", 1.2345), "1.23") << "a ratio unbounded above, not a fraction";
}

TEST(CounterUnits, ValuesThatAreNotFiniteShowAsADash) {
  // The cv of a counter whose mean is 0 printed "-nan%".
  EXPECT_EQ(format_in(CounterUnit::fraction, std::nan("")), "-");
  EXPECT_EQ(format_counter("heap_bytes", std::numeric_limits<double>::infinity()), "-");
}

TEST(CounterUnits, EveryCounterTheHarnessWritesHasItsUnit) {
  for (const char* f : {"noise", "fail_rate", "utilization", "ext_frag_4x", "ext_frag_8x", "ext_frag_random",
                        "recovery", "loss_rate", "ret_documented"}) {
    EXPECT_EQ(counter_unit(f), CounterUnit::fraction) << f;
  }
  for (const char* b : {"heap_bytes", "fifo_bytes", "overhead_bytes", "stride_bytes", "peak_bytes", "bytes_per_line"}) {
    EXPECT_EQ(counter_unit(b), CounterUnit::bytes) << b;
  }
  for (const char* r : {"allocs_per_s", "frees_per_s", "printf_per_s", "flush_lines_per_s", "recovery_allocs_per_s"}) {
    EXPECT_EQ(counter_unit(r), CounterUnit::per_s) << r;
  }
  for (const char* c : {"rounds", "converged", "throttled_rounds", "unheld_rounds", "lines_delivered", "lines_lost",
                        "lines_garbled", "ret_other_value", "addr_range_ratio_rounds"}) {
    EXPECT_EQ(counter_unit(c), CounterUnit::count) << c;
  }
}

TEST(CounterDeclarations, EachCounterOnceWithAUnitAndAMeaning) {
  std::set<std::string_view> names;
  for (const CounterDecl& d : counter_declarations()) {
    EXPECT_TRUE(names.insert(d.name).second) << d.name << " declared twice";
    EXPECT_FALSE(d.description.empty()) << d.name;
    EXPECT_EQ(find_counter(d.name), &d);
  }
  EXPECT_EQ(find_counter("no_such_counter"), nullptr);
  EXPECT_EQ(counter_unit("no_such_counter"), CounterUnit::count);
}

TEST(CounterUnits, EachUnitHasItsOwnKey) {
  for (const CounterDecl& d : counter_declarations()) {
    EXPECT_FALSE(unit_key(d.unit).empty()) << d.name;  // throws for a unit without a key
  }
  EXPECT_EQ(unit_key(CounterUnit::count), "count");
  EXPECT_EQ(unit_key(CounterUnit::bytes_per_s), "bytes_per_s");
  EXPECT_EQ(unit_key(CounterUnit::megahertz), "megahertz");
  EXPECT_THROW(unit_key(static_cast<CounterUnit>(99)), std::logic_error);
}

TEST(CounterDeclarations, TheResultsFileBlockCarriesEveryDeclaration) {
  const auto block = counters_json();
  ASSERT_EQ(block.size(), counter_declarations().size());
  EXPECT_EQ(block.at("allocs_per_s").at("unit"), "calls/s");
  EXPECT_EQ(block.at("allocs_per_s").at("scale"), "per_s");
  EXPECT_EQ(block.at("allocs_per_s").at("higher_is_better"), true);
  EXPECT_EQ(block.at("fail_rate").at("higher_is_better"), false);
  EXPECT_TRUE(block.at("heap_bytes").at("higher_is_better").is_null());
  EXPECT_EQ(block.at("peak_bytes").at("scale"), "bytes");
  EXPECT_EQ(format_counter("peak_bytes", 64.0 * 1024 * 1024), "64 MiB");
}

}  // namespace
}  // namespace heapbench

