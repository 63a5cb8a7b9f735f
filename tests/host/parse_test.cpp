#include "cases/parse.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "cases/mixed_sizes.hpp"

namespace heapbench {
namespace {

TEST(ParseQuantity, PlainNumbersAndBinarySuffixes) {
  EXPECT_EQ(parse_quantity("16"), 16u);
  EXPECT_EQ(parse_quantity("1K"), 1024u);
  EXPECT_EQ(parse_quantity("4k"), 4096u);
  EXPECT_EQ(parse_quantity("64M"), 64ull << 20);
  EXPECT_EQ(parse_quantity("1G"), 1ull << 30);
  EXPECT_EQ(parse_quantity("100000"), 100000u);
}

TEST(ParseQuantity, MalformedValuesAreRefusedWithTheValueInTheMessage) {
  for (const char* bad : {"", "12Q", "-1", "0", "0K", "1.5K", "K", " 16", "16 ", "1KB", "99999999999999999999",
                          "17179869184G"}) {
    try {
      parse_quantity(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos) << e.what();
    }
  }
}

TEST(ParseHeapSize, ABareNumberIsMiB) {
  EXPECT_EQ(parse_heap_size("8"), 8 * (1ull << 20));
  EXPECT_EQ(parse_heap_size("8M"), 8 * (1ull << 20));
  EXPECT_EQ(parse_heap_size("1G"), 1ull << 30);
  EXPECT_EQ(parse_heap_size("1536K"), 1536 * 1024ull);
  EXPECT_THROW(parse_heap_size("17592186044416"), std::invalid_argument) << "2^44 MiB is 2^64 bytes";
  EXPECT_THROW(parse_heap_size("0"), std::invalid_argument);
}

TEST(CheckedProduct, NoneWhereItDoesNotFit) {
  EXPECT_EQ(checked_product(1ull << 32, 1ull << 31), 1ull << 63);
  EXPECT_FALSE(checked_product(9223372036854775808ull, 2).has_value()) << "issue 35 (E13): it wrapped to 0";
}

TEST(ParseQuantityList, CommaSeparated) {
  EXPECT_EQ(parse_quantity_list("16,1K,4K"), (std::vector<std::uint64_t>{16, 1024, 4096}));
  EXPECT_EQ(parse_quantity_list("8M"), (std::vector<std::uint64_t>{8ull << 20}));
  EXPECT_THROW(parse_quantity_list(""), std::invalid_argument);
  EXPECT_THROW(parse_quantity_list("16,,32"), std::invalid_argument);
  EXPECT_THROW(parse_quantity_list("16,"), std::invalid_argument);
  EXPECT_THROW(parse_quantity_list("16,x"), std::invalid_argument);
}

TEST(MixedSizes, UniformOverTheRangeAndTheSameEveryRun) {
  std::uint64_t lo = ~0ull, hi = 0;
  double sum = 0;
  constexpr int kN = 100000;
  for (std::uint64_t tid = 0; tid < kN; ++tid) {
    const std::uint64_t s = mixed_size(tid, 256);
    lo = std::min(lo, s);
    hi = std::max(hi, s);
    sum += static_cast<double>(s);
  }
  EXPECT_EQ(lo, 16u);
  EXPECT_EQ(hi, 256u);
  EXPECT_NEAR(sum / kN, (16 + 256) / 2.0, 1.5);
  // The same every run and every build: the draws are pinned (issue 54: this compared a call with
  // itself), so that a change of seed or mixer, which makes every committed *_mixed figure
  // incomparable with a new one, fails here.
  EXPECT_EQ(mixed_size(0, 256), 25u);
  EXPECT_EQ(mixed_size(1, 256), 16u);
  EXPECT_EQ(mixed_size(2, 256), 221u);
  EXPECT_EQ(mixed_size(12345, 256), 41u);
  EXPECT_EQ(mixed_size(99999, 4096), 924u);
  EXPECT_EQ(mixed_size(7, 8), 8u) << "below 16 the range is the one size";
}

TEST(FormatQuantity, LargestExactSuffix) {
  EXPECT_EQ(format_quantity(1000), "1000");
  EXPECT_EQ(format_quantity(1024), "1K");
  EXPECT_EQ(format_quantity(3u << 20), "3M");
  EXPECT_EQ(format_quantity(2ull << 30), "2G");
  EXPECT_EQ(format_quantity(1536), "1536");
}

TEST(SplitList, KeepsEveryItemTheEmptyOnesToo) {
  EXPECT_EQ(split_list("16,1K,4K"), (std::vector<std::string>{"16", "1K", "4K"}));
  EXPECT_EQ(split_list(""), (std::vector<std::string>{""}));
  EXPECT_EQ(split_list("a,,b,"), (std::vector<std::string>{"a", "", "b", ""}));
  EXPECT_EQ(split_list("64:3", ':'), (std::vector<std::string>{"64", "3"}));
}

}  // namespace
}  // namespace heapbench
