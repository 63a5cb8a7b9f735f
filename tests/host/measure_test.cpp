#include "measure/measure.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace heapbench {
namespace {

RoundSeries series(std::initializer_list<double> rounds) {
  RoundSeries s;
  for (double r : rounds) s.add(r);
  return s;
}

TEST(RoundSeries, MeanAndNoiseOfHandComputedRounds) {
  // 9, 10, 11 ms: mean 10 ms, sample stdev 1 ms, so noise 10 % and the mean's
  // relative standard error 10 % / sqrt(3).
  const RoundSeries s = series({9e-3, 10e-3, 11e-3});
  EXPECT_EQ(s.rounds(), 3);
  EXPECT_NEAR(s.mean(), 10e-3, 1e-12);
  EXPECT_NEAR(s.total(), 30e-3, 1e-12);
  EXPECT_NEAR(s.noise(), 0.1, 1e-9);
  EXPECT_NEAR(s.mean_noise(), 0.1 / std::sqrt(3.0), 1e-9);
}

TEST(RoundSamples, EveryRoundUntilTheCapThenEvenlySpreadOnes) {
  RoundSamples few;
  for (int i = 1; i <= 5; ++i) few.add(i * 1.5e-6);
  EXPECT_EQ(few.ns(), (std::vector<std::int64_t>{1500, 3000, 4500, 6000, 7500}));
  EXPECT_EQ(few.stride(), 1);
  RoundSamples many;
  for (int i = 0; i < 1000; ++i) many.add(i * 1e-6);  // round i took i us
  EXPECT_EQ(many.stride(), 8);
  ASSERT_EQ(many.ns().size(), 125u);  // rounds 0, 8, ..., 992
  for (std::size_t k = 0; k < many.ns().size(); ++k) EXPECT_EQ(many.ns()[k], static_cast<std::int64_t>(k * 8 * 1000));
  RoundSamples endless;
  for (int i = 0; i < 1000000; ++i) endless.add(1e-6);
  EXPECT_GE(endless.ns().size(), RoundSamples::kMaxSamples / 2);
  EXPECT_LT(endless.ns().size(), RoundSamples::kMaxSamples);
}

TEST(RoundSeries, NoNoiseFromOneRound) {
  EXPECT_EQ(series({5e-3}).noise(), 0.0);
  EXPECT_EQ(series({5e-3}).mean_noise(), 0.0);
  EXPECT_EQ(RoundSeries{}.noise(), 0.0);
}

TEST(Judge, ConvergesOnlyAfterMinRoundsWithAQuietMean) {
  StoppingRule rule;
  rule.max_noise = 0.01;
  rule.min_rounds = 5;
  rule.max_time_s = 1.0;
  // Identical rounds: no noise, but not before min_rounds.
  EXPECT_EQ(judge(series({1e-3, 1e-3, 1e-3, 1e-3}), 0.01, rule), Verdict::more);
  EXPECT_EQ(judge(series({1e-3, 1e-3, 1e-3, 1e-3, 1e-3}), 0.01, rule), Verdict::converged);
  // 10 % round-to-round noise: the mean is known to 1 % only after 100 rounds.
  RoundSeries noisy;
  for (int i = 0; i < 99; ++i) noisy.add(i % 2 ? 1.1e-3 : 0.9e-3);
  EXPECT_GT(noisy.mean_noise(), 0.01);
  EXPECT_EQ(judge(noisy, 0.5, rule), Verdict::more);
  for (int i = 0; i < 20; ++i) noisy.add(i % 2 ? 1.1e-3 : 0.9e-3);
  EXPECT_LE(noisy.mean_noise(), 0.01);
  EXPECT_EQ(judge(noisy, 0.5, rule), Verdict::converged);
}

TEST(Judge, TheTimeCapEndsAnUnconvergedCase) {
  StoppingRule rule;
  rule.max_noise = 0.001;
  rule.min_rounds = 5;
  rule.max_time_s = 0.5;
  const RoundSeries s = series({1e-3, 2e-3, 1e-3, 2e-3});
  EXPECT_EQ(judge(s, 0.49, rule), Verdict::more);
  EXPECT_EQ(judge(s, 0.5, rule), Verdict::capped);
  // A single long round past the cap is the case's one measurement.
  EXPECT_EQ(judge(series({0.8}), 0.8, rule), Verdict::capped);
  // Without any counted round there is nothing to publish yet.
  EXPECT_EQ(judge(RoundSeries{}, 5.0, rule), Verdict::more);
}

TEST(NextBatch, AimsAtTheBatchTimeWithinWhatTheRuleStillNeeds) {
  StoppingRule rule;
  rule.max_noise = 0.01;
  rule.min_rounds = 5;
  rule.max_time_s = 1.0;
  // Nothing measured yet, 1 ms a round: up to min_rounds.
  EXPECT_EQ(next_batch(RoundSeries{}, 1e-3, 0.0, rule, 32), 5);
  // Quiet rounds beyond min_rounds: one more round would do, but a batch costs a
  // host round trip, so never less than one.
  const RoundSeries quiet = series({1e-3, 1e-3, 1e-3, 1e-3, 1e-3, 1e-3});
  EXPECT_EQ(next_batch(quiet, 1e-3, 0.01, rule, 32), 32);
  // 10 % noise after 10 rounds: about 100 needed, 90 to go; 50 ms of 0.1 ms rounds is 500: capped by max_batch.
  RoundSeries noisy;
  for (int i = 0; i < 10; ++i) noisy.add(i % 2 ? 1.1e-4 : 0.9e-4);
  EXPECT_EQ(next_batch(noisy, 1e-4, 0.01, rule, 32), 32);
  // Long rounds: one at a time.
  EXPECT_EQ(next_batch(noisy, 0.2, 0.1, rule, 32), 1);
  // Near the cap, only what fits.
  EXPECT_EQ(next_batch(noisy, 1e-3, 0.99, rule, 32), 10);
  // Runners with per-round buffers: one.
  EXPECT_EQ(next_batch(noisy, 1e-4, 0.0, rule, 1), 1);
}

TEST(Warmup, OnlyShortFirstRoundsAreDiscarded) {
  StoppingRule rule;
  rule.max_time_s = 0.8;
  EXPECT_TRUE(first_round_is_warmup(1e-3, rule));
  EXPECT_TRUE(first_round_is_warmup(0.099, rule));
  EXPECT_FALSE(first_round_is_warmup(0.1, rule));
  EXPECT_FALSE(first_round_is_warmup(4.6, rule));
}

TEST(Clock, MeanOfEachSmsOwnCyclesOverTime) {
  // SM 0: 1,980 cycles in 1,000 ns (1980 MHz); SM 1: 1,500 in 1,000 (1500 MHz);
  // SM 2 stamped only before; SM 3 never.
  const std::vector<ClockStamp> before = {{1000, 5000}, {7000, 5100}, {10, 5000}, {0, 0}};
  const std::vector<ClockStamp> after = {{2980, 6000}, {8500, 6100}, {0, 0}, {0, 0}};
  EXPECT_NEAR(mean_clock_mhz(before, after), (1980.0 + 1500.0) / 2, 1e-9);
  EXPECT_EQ(mean_clock_mhz({{0, 0}}, {{0, 0}}), 0.0);
  // A counter that went backwards (a different SM's stamp) is not a clock.
  EXPECT_EQ(mean_clock_mhz({{5000, 100}}, {{4000, 200}}), 0.0);
}

TEST(Clock, ThrottledBelowThreeQuartersOfRated) {
  EXPECT_FALSE(throttled(1980, 1980));
  EXPECT_FALSE(throttled(1485, 1980));  // exactly 75 %
  EXPECT_TRUE(throttled(1484, 1980));
  EXPECT_TRUE(throttled(900, 1980));
  EXPECT_FALSE(throttled(0, 1980));  // not measured: unknown, not slow
  EXPECT_FALSE(throttled(900, 0));   // no rating to compare with
}

}  // namespace
}  // namespace heapbench
