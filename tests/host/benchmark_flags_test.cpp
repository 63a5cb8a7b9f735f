#include "plan/benchmark_flags.hpp"

#include <gtest/gtest.h>

#include "plan/options.hpp"
#include "parse_alone.hpp"

namespace heapbench {
namespace {

// The checked flags as the run's app of heapbench's tree reads them (parse_options).
BenchmarkFlags flags_of(std::vector<std::string> args) {
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return parse_options(static_cast<int>(argv.size()), argv.data()).benchmark_flags;
}

std::string refusal(const std::vector<std::string>& args) {
  try {
    flags_of(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(BenchmarkFlags, ValuesGoogleBenchmarkAnswersWithItsUsageAreRefusedByName) {
  // Google Benchmark 1.7 prints its usage and exits 0 for these.
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"--benchmark_format=xml", "'xml'"},
      {"--benchmark_repetitions=0", "'0'"},
      {"--benchmark_repetitions=-2", "'-2'"},
      {"--benchmark_repetitions=two", "'two'"},
      // Google Benchmark complains in its own words and style.
      {"--v=abc", "'abc'"},
      {"--benchmark_context=abc", "'abc'"},
      {"--benchmark_context=a=b,c", "'c'"},
  };
  for (const auto& [arg, value] : bad) {
    const std::string why = refusal({"heapbench", arg});
    const std::string flag = arg.substr(0, arg.find('='));
    EXPECT_NE(why.find(flag), std::string::npos) << arg << " -> " << why;
    EXPECT_NE(why.find(value), std::string::npos) << arg << " -> " << why;
  }
}

TEST(BenchmarkFlags, GoodValuesPassAndTheLastOneCounts) {
  EXPECT_EQ(flags_of({"heapbench", "--benchmark_format=json"}).format, "json");
  EXPECT_EQ(flags_of({"heapbench"}).format, "console");
  const BenchmarkFlags f = flags_of({"heapbench", "--benchmark_repetitions=3", "--benchmark_filter=x",
                                                  "--benchmark_color=false", "--benchmark_repetitions=5"});
  EXPECT_EQ(f.repetitions, 5);
  EXPECT_EQ(f.color, false);
  EXPECT_FALSE(flags_of({"heapbench", "--benchmark_color=auto"}).color.has_value());
  EXPECT_EQ(flags_of({"heapbench", "--benchmark_color=yes"}).color, true);
  EXPECT_FALSE(f.counters_tabular);
  EXPECT_TRUE(flags_of({"heapbench", "--benchmark_counters_tabular"}).counters_tabular);
  EXPECT_TRUE(flags_of({"heapbench", "--benchmark_counters_tabular=true"}).counters_tabular);
  EXPECT_FALSE(flags_of({"heapbench", "--benchmark_counters_tabular=false"}).counters_tabular);
}

std::string refused(const std::string& arg) {
  try {
    refuse_refused_flag(arg);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(BenchmarkFlags, RefusedFlagsSayWhyAndTheOthersPass) {
  for (const auto& f : google_benchmark_flags()) {
    const std::string arg = std::string(f.name) + "=1";
    if (f.refused.empty()) {
      EXPECT_EQ(refused(arg), "") << arg;
      EXPECT_FALSE(f.help.empty()) << f.name << ": --help says what a passed-on flag does";
    } else {
      const std::string why = refused(arg);
      EXPECT_NE(why.find(arg), std::string::npos) << why;
      EXPECT_NE(why.find(std::string(f.refused)), std::string::npos) << why;
    }
  }
  EXPECT_NE(refused("--benchmark_min_time=0.5s").find("--max-noise"), std::string::npos);
  EXPECT_NE(refused("--benchmark_enable_random_interleaving").find("heap-major"), std::string::npos);
  EXPECT_NE(refused("--benchmark_enable_random_interleaving=true").find("device reset"), std::string::npos);
  EXPECT_EQ(refused("--benchmark_enable_random_interleaving=false"), "") << "false keeps the order";
  EXPECT_EQ(refused("--benchmark_filter=x"), "");
  EXPECT_EQ(refused("--no_such_flag"), "") << "unknown flags are options.cpp's";
}

TEST(BenchmarkFlags, ABooleanFlagTakesOnlyGoogleBenchmarksSpellings) {
  // Issue 35 (E14): Google Benchmark reads any word but its false ones as true:
  // --benchmark_report_aggregates_only=maybe silently kept only the aggregates.
  for (const char* flag : {"--benchmark_report_aggregates_only", "--benchmark_display_aggregates_only",
                           "--benchmark_counters_tabular", "--benchmark_color"}) {
    const std::string why = refusal({"heapbench", std::string(flag) + "=maybe"});
    EXPECT_NE(why.find(std::string(flag) + "=maybe: not "), std::string::npos) << why;
    EXPECT_NE(why.find("true, yes, on"), std::string::npos) << why;
    for (const char* good : {"true", "False", "YES", "no", "on", "off", "1", "0", "t", "f", "y", "n"}) {
      EXPECT_EQ(refusal({"heapbench", std::string(flag) + "=" + good}), "") << flag << "=" << good;
    }
  }
  EXPECT_EQ(refusal({"heapbench", "--benchmark_color=auto"}), "");
  EXPECT_EQ(refusal({"heapbench", "--benchmark_report_aggregates_only"}), "") << "no value is true";
  EXPECT_NE(refused("--benchmark_enable_random_interleaving=maybe").find("not true or false"), std::string::npos);
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
