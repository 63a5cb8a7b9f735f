#include "report/progress.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

namespace heapbench {
namespace {

using nlohmann::json;

TEST(TimedSeconds, RealTimeTimesIterationsInItsUnit) {
  EXPECT_DOUBLE_EQ(timed_seconds({true, std::nullopt, 2.5, 40, "ms"}), 0.1);
  EXPECT_DOUBLE_EQ(timed_seconds({true, std::nullopt, 500, 4, "us"}), 2e-3);
  EXPECT_DOUBLE_EQ(timed_seconds({true, std::nullopt, 1e6, 3, "ns"}), 3e-3);
  EXPECT_DOUBLE_EQ(timed_seconds({true, std::nullopt, 1.5, 2, "s"}), 3.0);
}

TEST(TimedSeconds, ATimedCounterWinsAndErrorsCountNothing) {
  // With one registered iteration whose real time is the mean round, the
  // harness's own `timed_s` counter is the truth.
  EXPECT_DOUBLE_EQ(timed_seconds({true, 0.75, 0.1, 1, "ms"}), 0.75);
  EXPECT_DOUBLE_EQ(timed_seconds({false, 0.75, 2.0, 10, "ms"}), 0.0);
}

TEST(TimedSeconds, ReadFromResultsFileEntries) {
  const json ok = {{"name", "a"}, {"run_type", "iteration"}, {"iterations", 20}, {"real_time", 0.5}, {"time_unit", "ms"}};
  EXPECT_DOUBLE_EQ(timed_seconds(case_timing(ok)), 0.01);
  json with_counter = ok;
  with_counter["timed_s"] = 1.25;
  EXPECT_DOUBLE_EQ(timed_seconds(case_timing(with_counter)), 1.25);
  json error = ok;
  error["error_occurred"] = true;
  EXPECT_DOUBLE_EQ(timed_seconds(case_timing(error)), 0.0);
  json mean = ok;
  mean["run_type"] = "aggregate";
  EXPECT_DOUBLE_EQ(timed_seconds(case_timing(mean)), 0.0) << "a mean repeats its repetitions' time";
}

TEST(Progress, EstimatesTheRestAtTheMeanPaceSoFar) {
  Progress p(10);
  EXPECT_FALSE(p.seconds_left(1.0).has_value()) << "nothing to go by before the first case";
  // Cases of 2, 4 and 3 s: 9 s for 3 cases, 7 to go.
  p.update(1, 0.5, 2.0);
  p.update(2, 1.0, 6.0);
  p.update(3, 1.5, 9.0);
  EXPECT_DOUBLE_EQ(*p.seconds_left(9.0), 21.0);
  // Time spent in the running case counts too: at 12 s, 4 s per case so far.
  EXPECT_DOUBLE_EQ(*p.seconds_left(12.0), 28.0);
  p.update(10, 4.0, 30.0);
  EXPECT_DOUBLE_EQ(*p.seconds_left(30.0), 0.0);
}

TEST(Progress, QuietForShortSweepsThenAtMostOneLinePerInterval) {
  Progress p(100, /*quiet_s=*/3.0, /*every_s=*/5.0);
  EXPECT_EQ(p.update(1, 0.1, 1.0), "") << "a sweep of a few seconds says nothing";
  EXPECT_EQ(p.update(2, 0.2, 2.9), "");
  const std::string first = p.update(3, 0.3, 3.0);
  EXPECT_EQ(first, "heapbench: 3 of 100 cases, 3.0 s elapsed, about 1:37 left");
  EXPECT_EQ(p.update(4, 0.4, 7.9), "") << "at most one line per 5 s";
  EXPECT_NE(p.update(5, 0.5, 8.0), "");
  EXPECT_EQ(p.update(100, 9.0, 200.0), "") << "the summary, not a progress line, ends the sweep";
}

TEST(Progress, SummarySaysHowMuchOfTheWallTimeWasMeasurement) {
  Progress p(391);
  p.update(391, 121.0, 238.0);
  EXPECT_EQ(p.summary(238.0),
            "heapbench: 391 of 391 cases in 3:58; measured 121.0 s, 51 % of the wall time (timed launches 121.0 s)");
}

TEST(Progress, SummaryGivesTheFilesMeasuredShare) {
  // Issue 52 (3): the line said 76 % (timed launches only) where the file's
  // heapbench_measured_fraction, which adds capacity's fills and printf's
  // drain, said 0.8353 for the same run.
  Done d;
  d.cases = 440;
  d.timed_s = 84.1;
  d.budget.sum["measuring_s"] = 8.03;
  Progress p(440);
  p.update(d, 110.3);
  EXPECT_EQ(p.summary(110.3),
            "heapbench: 440 of 440 cases in 1:50; measured 92.1 s, 84 % of the wall time (timed launches 84.1 s, "
            "capacity's fills and printf's drain 8.0 s)");
  EXPECT_NEAR(measured_fraction(84.1, 8.03, 110.3), (84.1 + 8.03) / 110.3, 1e-12);
  EXPECT_EQ(measured_fraction(1.0, 1.0, 0.0), 0.0);
}

TEST(Progress, DurationsReadAsAClock) {
  EXPECT_EQ(format_duration(4.25), "4.2 s");
  EXPECT_EQ(format_duration(42), "42 s");
  EXPECT_EQ(format_duration(75), "1:15");
  EXPECT_EQ(format_duration(3725), "1:02:05");
}

TEST(CountDone, EachRepetitionCountsOnceAndAggregatesAddNothingBesideThem) {
  const json rep = {{"name", "a/manual_time"}, {"run_name", "a/manual_time"}, {"run_type", "iteration"},
                    {"repetitions", 3}, {"iterations", 1}, {"real_time", 2.0}, {"time_unit", "ms"}, {"timed_s", 0.5}};
  json mean = rep;
  mean["run_type"] = "aggregate";
  mean["aggregate_name"] = "mean";
  mean["iterations"] = 3;
  json cv = mean;
  cv["aggregate_name"] = "cv";
  std::vector<ReportedRun> runs;
  for (const auto& e : {rep, rep, rep, mean, cv}) runs.push_back(reported_run(e));
  const Done d = count_done(runs);
  EXPECT_EQ(d.cases, 3u);
  EXPECT_DOUBLE_EQ(d.timed_s, 1.5);
}

TEST(CountDone, AggregatesOnlyCountTheirMeansRepetitions) {
  // --benchmark_report_aggregates_only=true: no repetition is reported, and
  // progress said "0 of 6 cases" for two cases of three repetitions each.
  std::vector<ReportedRun> runs;
  for (const char* name : {"a/manual_time", "b/manual_time"}) {
    for (const char* agg : {"mean", "median", "stddev", "cv"}) {
      const json e = {{"name", std::string(name) + "_" + agg}, {"run_name", name}, {"run_type", "aggregate"},
                      {"aggregate_name", agg}, {"repetitions", 3}, {"iterations", 3}, {"real_time", 2.0},
                      {"time_unit", "ms"}, {"timed_s", 0.25}};
      runs.push_back(reported_run(e));
    }
  }
  const Done d = count_done(runs);
  EXPECT_EQ(d.cases, 6u);
  EXPECT_DOUBLE_EQ(d.timed_s, 2 * 3 * 0.25);
  runs.erase(std::remove_if(runs.begin(), runs.end(), [](const ReportedRun& r) { return r.aggregate_name != "mean"; }),
             runs.end());
  for (auto& r : runs) r.timing.timed_s.reset();  // no timed_s counter: real time x iterations (the repetitions)
  EXPECT_DOUBLE_EQ(count_done(runs).timed_s, 2 * 2.0 * 3 * 1e-3);
}

TEST(Convergence, TheSummaryCountsAndNamesTheCasesThatDidNotConverge) {
  // Issue 36 (2): 109 of the default sweep's 440 cases ended with converged=0 and no line said so.
  EXPECT_EQ(convergence_summary({{"a", true}, {"b", true}}), "");
  EXPECT_EQ(convergence_summary({}), "");
  const std::string line =
      convergence_summary({{"a", false}, {"b", true}, {"c", false}, {"d", false}, {"e", false}, {"f", false}});
  EXPECT_EQ(line.find("heapbench: 5 of 6 cases did not converge"), 0u) << line;
  EXPECT_NE(line.find("): a, c, d and 2 more"), std::string::npos) << line;
  EXPECT_NE(convergence_summary({{"a", false}}).find("): a"), std::string::npos);
}

TEST(Convergence, FromResultsEntriesOnlyTheMeasuredOnesCount) {
  const json entries = json::array({
      {{"name", "a/manual_time"}, {"run_type", "iteration"}, {"converged", 0}},
      {{"name", "b/manual_time"}, {"run_type", "iteration"}, {"converged", 1}},
      {{"name", "c/manual_time"}, {"run_type", "iteration"}, {"error_occurred", true}, {"error_message", "x"}},
      {{"name", "a/manual_time_mean"}, {"run_type", "aggregate"}, {"converged", 0}},
      {{"name", "d/manual_time"}, {"run_type", "iteration"}},  // --profile: no stopping rule
      {{"name", "e/manual_time"}, {"run_type", "iteration"}, {"converged", 0}, {"error_occurred", "no"}},
  });
  const auto runs = convergence_of(entries);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0], (std::pair<std::string, bool>{"a", false}));
  EXPECT_EQ(runs[1], (std::pair<std::string, bool>{"b", true}));
}

}  // namespace

namespace {

ReportedRun measured(const std::string& name, double timed, double loop, double wall) {
  ReportedRun r;
  r.run_name = name + "/manual_time";
  r.timing.timed_s = timed;
  r.timing.phases = {{"timed_s", timed}, {"loop_s", loop}, {"first_use_s", 0.5}, {"setup_s", 0.25},
                     {"heap_s", 0.25}, {"probe_s", 1.0}, {"meter_s", 0.0}, {"case_wall_s", wall}};
  return r;
}

// budget_context as a map, and what its phases add up to.
struct Context {
  std::map<std::string, std::string> keys;
  double sum = 0;
};
Context context_of(const Budget& b, double wall_s) {
  Context c;
  for (const auto& [k, v] : budget_context(b, wall_s)) {
    c.keys[k] = v;
    c.sum += std::stod(v);
  }
  return c;
}

TEST(Budget, ThePhasesOfTheMeasuredCasesAddUpToTheWallTime) {
  ReportedRun error;
  error.run_name = "c/manual_time";
  error.timing.counts = false;
  error.timing.phases = {{"case_wall_s", 100.0}};  // an error result's time is outside the measured cases
  const Done d = count_done({measured("a", 6.0, 8.0, 10.0), measured("b", 1.0, 1.5, 4.0), error});
  EXPECT_DOUBLE_EQ(d.budget.get("timed_s"), 7.0);
  EXPECT_DOUBLE_EQ(d.budget.get("case_wall_s"), 14.0);
  ASSERT_EQ(d.budget.largest.size(), 2u);
  EXPECT_EQ(d.budget.largest[0].first, "a");  // 4 s outside its timed launches; b 3 s
  auto [m, sum] = context_of(d.budget, 20.0);
  EXPECT_EQ(m["heapbench_budget_timed_s"], "7.000");
  EXPECT_EQ(m["heapbench_budget_between_s"], "2.500");
  EXPECT_EQ(m["heapbench_budget_warmup_s"], "1.000");
  EXPECT_EQ(m["heapbench_budget_probe_s"], "2.000");
  EXPECT_EQ(m["heapbench_budget_case_rest_s"], "0.500");  // 14 - 9.5 loop - 1 warm-up - 0.5 set-up - 0.5 heap - 2 probes
  EXPECT_EQ(m["heapbench_budget_outside_s"], "6.000");
  EXPECT_DOUBLE_EQ(sum, 20.0);
  const std::string line = budget_line(d.budget, 20.0);
  EXPECT_NE(line.find("where the 20.0 s went: timed launches 7.0 s (35 %)"), std::string::npos) << line;
  EXPECT_NE(line.find("most outside timed launches: a 4.0 s, b 3.0 s"), std::string::npos) << line;
  EXPECT_EQ(budget_line(Budget{}, 20.0), "");
  EXPECT_EQ(line.find("fragmentation"), std::string::npos) << "no capacity case, no measuring phase: " << line;
}

TEST(Budget, CapacitysMeasuringFillsAreTheirOwnPhaseNotBetween) {
  ReportedRun cap = measured("capacity", 1.0, 6.0, 8.0);
  cap.timing.phases["measuring_s"] = 4.0;  // of the loop's 6 s: 1 timed, 4 measuring, 1 between
  const Done d = count_done({cap});
  auto [m, sum] = context_of(d.budget, 10.0);
  EXPECT_EQ(m["heapbench_budget_measuring_s"], "4.000");
  EXPECT_EQ(m["heapbench_budget_between_s"], "1.000");
  EXPECT_DOUBLE_EQ(sum, 10.0);
  const std::string line = budget_line(d.budget, 10.0);
  EXPECT_NE(line.find("capacity's fragmentation and recovery fills, printf's drain 4.0 s (40 %)"), std::string::npos) << line;
}

}  // namespace
}  // namespace heapbench
