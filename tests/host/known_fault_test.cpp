// known_fault (cases/catalog.hpp): a case of the output workload's
// warp_aggregated strategy that ends in a CUDA error names the note that
// shows the fault is CUDA's heap's; no other case names one.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cases/catalog.hpp"
#include "cases/case_naming.hpp"
#include "heapbench/case.hpp"

namespace {

TEST(KnownFault, TheWarpAggregatedOutputNamesItsNote) {
  const heapbench::Case c = heapbench::make_case("output", "warp_aggregated", 64, 0, 1000000, 1ull << 30);
  const std::string why = heapbench::known_fault(c);
  ASSERT_NE(why.find("docs/notes/warp-aggregated.md"), std::string::npos) << why;
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(HEAPBENCH_SOURCE_DIR) / "docs/notes/warp-aggregated.md"));
}

TEST(KnownFault, NoOtherCaseNamesOne) {
  EXPECT_EQ(heapbench::known_fault(heapbench::make_case("output", "malloc", 64, 0, 1000000, 1ull << 30)), "");
  EXPECT_EQ(heapbench::known_fault(heapbench::make_case("per_thread", "malloc", 64, 0, 1024, 64ull << 20)), "");
}

}  // namespace
