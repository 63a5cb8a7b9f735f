// The test files' own names (test_paths.hpp) are removed when their test ends.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "test_paths.hpp"

namespace heapbench {
namespace {

namespace fs = std::filesystem;

// What gtest does at the end of the test now running.
void end_of_test() { testing::OwnTempPathRemover{}.OnTestEnd(*::testing::UnitTest::GetInstance()->current_test_info()); }

TEST(OwnTempPath, IsRemovedWhenItsTestEnds) {
  ASSERT_TRUE(testing::kOwnTempPathRemoverInstalled);
  const std::string a = testing::own_temp_path("a.txt"), b = testing::own_temp_path("never-written.txt");
  EXPECT_NE(a, b);
  std::ofstream(a) << "x";
  ASSERT_TRUE(fs::exists(a));
  end_of_test();
  EXPECT_FALSE(fs::exists(a));
  EXPECT_TRUE(testing::own_temp_paths().empty());
}

TEST(OwnTempPath, ALinkIsRemovedNotWhatItNames) {
  // The target is not a name handed out: it must outlive the link's removal.
  const std::string target = ::testing::TempDir() + "OwnTempPath.target." + std::to_string(::getpid());
  std::ofstream(target) << "kept";
  const std::string link = testing::own_temp_path("link");
  fs::create_symlink(target, link);
  end_of_test();
  EXPECT_FALSE(fs::exists(fs::symlink_status(link)));
  EXPECT_TRUE(fs::exists(target));
  fs::remove(target);
}

}  // namespace
}  // namespace heapbench
