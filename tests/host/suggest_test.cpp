#include "plan/suggest.hpp"

#include <gtest/gtest.h>

namespace heapbench {
namespace {

TEST(EditDistance, CountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(edit_distance("advise", "advise"), 0u);
  EXPECT_EQ(edit_distance("adivse", "advise"), 1u) << "two neighbours swapped";
  EXPECT_EQ(edit_distance("--sizs", "--sizes"), 1u);
  EXPECT_EQ(edit_distance("malocc", "malloc"), 2u);
  EXPECT_EQ(edit_distance("", "new"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(Closest, FindsSlipsAndNothingFarOff) {
  const std::vector<std::string> known = {"--sizes", "--threads", "--heaps", "--aligns"};
  EXPECT_EQ(closest("--sizs", known), "--sizes");
  EXPECT_EQ(closest("--thread", known), "--threads");
  EXPECT_EQ(closest("--heap", known), "--heaps");
  EXPECT_EQ(closest("--frobnicate", known), "");
  EXPECT_EQ(closest("--sizes", known), "") << "the name itself is no suggestion";
  EXPECT_EQ(closest("PER_THREAD", {"per_thread", "per_warp"}), "per_thread") << "case alone";
  EXPECT_EQ(closest("new", {"malloc", "bump"}), "") << "a third of a short name is one letter";
}

TEST(DidYouMean, IsAClauseToAppendOrNothing) {
  EXPECT_EQ(did_you_mean("adivse", {"advise"}), "; did you mean 'advise'?");
  EXPECT_EQ(did_you_mean("run", {"advise"}), "");
}

}  // namespace
}  // namespace heapbench
