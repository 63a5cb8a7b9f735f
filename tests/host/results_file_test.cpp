#include "heapbench/results_file.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace heapbench {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

class ResultsFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("heapbench_rf_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ResultsFileTest, AnExistingFileSurvivesARunThatFinishedNoCase) {
  const auto path = dir_ / "results.json";
  std::ofstream(path) << "old results";
  ResultsFile f(path.string());
  std::ofstream(f.partial_path()) << "half a run";
  f.discard();
  EXPECT_EQ(slurp(path), "old results");
  EXPECT_FALSE(fs::exists(f.partial_path()));
}

TEST_F(ResultsFileTest, AnUnwritablePathIsRefusedUpFront) {
  try {
    ResultsFile f((dir_ / "no_such_dir" / "results.json").string());
    FAIL() << "accepted a path in a missing directory";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_dir"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace heapbench
