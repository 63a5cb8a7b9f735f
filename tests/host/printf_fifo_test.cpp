#include "patterns/printf_fifo.hpp"

#include <gtest/gtest.h>

#include "measure/iteration_result.hpp"

namespace heapbench {
namespace {

TEST(PrintfLines, CountsDistinctWellFormedLinesOfThisRound) {
  // Four calls with two arguments each: ids 0..3; id 2 never arrived.
  const std::string text = "hb 0 1\nhb 3 4\nhb 1 2\n";
  const PrintfLines l = parse_printf_lines(text, 4, 2);
  EXPECT_EQ(l.delivered, 3u);
  EXPECT_EQ(l.garbled, 0u);
}

TEST(PrintfLines, MalformedRepeatedOrForeignLinesAreGarbled) {
  const std::string text =
      "hb 0 1\n"
      "hb 0 1\n"     // a repeat
      "hb 1 3\n"     // second argument does not follow the first
      "hb 9 10\n"    // id beyond the calls made
      "hb 2\n"       // too few arguments
      "hb 2 3 4\n"   // too many
      "hello\n"      // someone else's output
      "hb 3 4";      // cut off: no newline
  const PrintfLines l = parse_printf_lines(text, 4, 2);
  EXPECT_EQ(l.delivered, 1u);
  EXPECT_EQ(l.garbled, 7u);
}

TEST(PrintfLines, EmptyOutputDeliversNothing) {
  const PrintfLines l = parse_printf_lines("", 8, 1);
  EXPECT_EQ(l.delivered, 0u);
  EXPECT_EQ(l.garbled, 0u);
}

TEST(PrintfFigures, HandComputedRound) {
  PrintfRaw r;
  r.calls = 1000;
  r.args = 2;
  r.ret_documented = 990;
  r.lines.delivered = 800;
  r.fifo_bytes = 40000;
  r.kernel_seconds = 0.002;
  r.flush_seconds = 0.004;
  const PrintfFigures f = printf_figures(r);
  EXPECT_DOUBLE_EQ(f.printf_per_s, 500000.0);
  EXPECT_DOUBLE_EQ(f.lines_delivered, 800.0);
  EXPECT_DOUBLE_EQ(f.lines_lost, 200.0);
  EXPECT_DOUBLE_EQ(f.loss_rate, 0.2);
  EXPECT_DOUBLE_EQ(f.bytes_per_line, 50.0) << "the FIFO was full: its bytes over the lines it held";
  EXPECT_DOUBLE_EQ(f.ret_documented, 0.99);
  EXPECT_DOUBLE_EQ(f.flush_lines_per_s, 200000.0);
}

TEST(PrintfFigures, NothingLostSaysNothingAboutLineSize) {
  PrintfRaw r;
  r.calls = 10;
  r.lines.delivered = 10;
  r.fifo_bytes = 1 << 20;
  EXPECT_DOUBLE_EQ(printf_figures(r).bytes_per_line, 0.0);
  EXPECT_DOUBLE_EQ(printf_figures(r).loss_rate, 0.0);
  EXPECT_DOUBLE_EQ(printf_figures(PrintfRaw{}).printf_per_s, 0.0);
}

TEST(PrintfReducer, RatesOverSumsCountsPerRoundAndNoHeapCounters) {
  PrintfRaw a;
  a.calls = 1000;
  a.args = 2;
  a.ret_documented = 1000;
  a.lines.delivered = 800;
  a.lines.garbled = 3;
  a.fifo_bytes = 40000;
  a.kernel_seconds = 0.001;
  a.flush_seconds = 0.002;
  PrintfRaw b = a;
  b.lines.delivered = 1000;  // nothing lost: says nothing about bytes per line
  b.lines.garbled = 1;
  b.ret_documented = 999;
  b.ret_other = 7;
  IterationResult ra, rb;
  ra.observed.put(a);
  rb.observed.put(b);
  auto r = printf_reducer();
  r->add(ra);
  r->add(rb);
  Counters c;
  r->write(c, 1 << 20);
  EXPECT_DOUBLE_EQ(c.at("printf_per_s"), 1e6);
  EXPECT_DOUBLE_EQ(c.at("lines_delivered"), 900.0);
  EXPECT_DOUBLE_EQ(c.at("lines_lost"), 100.0);
  EXPECT_DOUBLE_EQ(c.at("lines_garbled"), 2.0);
  EXPECT_DOUBLE_EQ(c.at("loss_rate"), 0.1);
  EXPECT_DOUBLE_EQ(c.at("bytes_per_line"), 50.0) << "only the round that lost lines";
  EXPECT_DOUBLE_EQ(c.at("ret_documented"), 0.9995);
  EXPECT_DOUBLE_EQ(c.at("ret_other_value"), 7.0);
  EXPECT_DOUBLE_EQ(c.at("flush_lines_per_s"), 450000.0);
  EXPECT_DOUBLE_EQ(c.at("fifo_bytes"), 40000.0);
  EXPECT_EQ(c.count("heap_bytes"), 0u);
  EXPECT_EQ(c.count("allocs_per_s"), 0u);
}

}  // namespace
}  // namespace heapbench
