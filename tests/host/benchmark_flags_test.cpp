#include "heapbench/benchmark_flags.hpp"

#include <gtest/gtest.h>

#include "heapbench/options.hpp"

namespace heapbench {
namespace {

std::string refusal(const std::vector<std::string>& args) {
  try {
    check_benchmark_flags(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(BenchmarkFlags, ValuesGoogleBenchmarkAnswersWithItsUsageAreRefusedByName) {
  // Google Benchmark 1.7 prints its usage and exits 0 for these.
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"--benchmark_format=xml", "'xml'"},
      {"--benchmark_time_unit=fortnight", "'fortnight'"},
      {"--benchmark_repetitions=0", "'0'"},
      {"--benchmark_repetitions=-2", "'-2'"},
      {"--benchmark_repetitions=two", "'two'"},
  };
  for (const auto& [arg, value] : bad) {
    const std::string why = refusal({"heapbench", arg});
    const std::string flag = arg.substr(0, arg.find('='));
    EXPECT_NE(why.find(flag), std::string::npos) << arg << " -> " << why;
    EXPECT_NE(why.find(value), std::string::npos) << arg << " -> " << why;
  }
}

TEST(BenchmarkFlags, GoodValuesPassAndTheLastOneCounts) {
  EXPECT_EQ(check_benchmark_flags({"heapbench", "--benchmark_format=json"}).format, "json");
  EXPECT_EQ(check_benchmark_flags({"heapbench"}).format, "console");
  const BenchmarkFlags f = check_benchmark_flags({"heapbench", "--benchmark_repetitions=3", "--benchmark_filter=x",
                                                  "--benchmark_time_unit=us", "--benchmark_repetitions=5"});
  EXPECT_EQ(f.repetitions, 5);
}

TEST(BenchmarkFlags, AnEmptyValueIsRefusedNamingTheFlag) {
  for (const char* arg : {"--benchmark_out=", "--sizes=", "--benchmark_color=", "--patterns="}) {
    try {
      refuse_empty_values({"--threads=32", arg, "--sizes=64"});
      ADD_FAILURE() << "accepted " << arg;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(arg), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(refuse_empty_values({"--sizes=64", "--benchmark_context=a=b", "--", "--x="}));
}

}  // namespace
}  // namespace heapbench
