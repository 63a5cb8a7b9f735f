#pragma once
// When a case has measured enough, and which rounds count: the stopping rule,
// the SM-clock filter and the batch size, as pure functions of round times so
// they are tested on the host (tests/host/measure_test.cpp). The harness
// (src/measure/case_loop.cpp) feeds them what the GPU reports. Definitions: docs/metrics.md
// ("How long a case runs").
#include <cstddef>
#include <cstdint>
#include <vector>

namespace heapbench {

struct StoppingRule {
  // Stop once the relative standard error of the mean round time (noise /
  // sqrt(rounds)) is at most this. 0.5 %: the figure a case reports is the mean,
  // and rounds of 10-40 us vary by 5-16 % from one to the next (H200), which no
  // number of rounds makes smaller; the mean's error does shrink.
  double max_noise = 0.005;
  // Never judge before this many rounds: a noise estimate from fewer is itself noise.
  int min_rounds = 5;
  // Wall-clock seconds of a case's measuring loop (timed and untimed launches,
  // host work) after which it stops whatever its noise: converged or not.
  double max_time_s = 0.5;
};

// Running mean and variance of round times (Welford), in seconds.
class RoundSeries {
 public:
  void add(double seconds);
  int rounds() const { return n_; }
  double mean() const { return mean_; }
  double total() const { return total_; }
  // Relative standard deviation of the rounds (sample stdev / mean); 0 under two rounds.
  double noise() const;
  // Relative standard error of the mean: noise() / sqrt(rounds()).
  double mean_noise() const;

 private:
  int n_ = 0;
  double mean_ = 0, m2_ = 0, total_ = 0;
};

// The rounds of a case as the results file keeps them (each entry's
// `round_ns`, docs/json.md): every counted round's GPU time in whole ns, in
// order, until there are kMaxSamples; then every other one is dropped and only
// every stride()-th round is kept from there on (stride doubles each time),
// so a case of any length keeps between kMaxSamples / 2 and kMaxSamples,
// evenly spread over its rounds: a sample a two-sample test (Mann-Whitney,
// Welch) compares, at a few hundred bytes per entry.
class RoundSamples {
 public:
  static constexpr std::size_t kMaxSamples = 128;
  void add(double seconds);
  const std::vector<std::int64_t>& ns() const { return ns_; }
  std::int64_t stride() const { return stride_; }  // 1: every round is kept

 private:
  std::vector<std::int64_t> ns_;
  std::int64_t stride_ = 1;
  std::int64_t seen_ = 0;  // rounds added
};

enum class Verdict {
  more,       // keep measuring
  converged,  // min_rounds reached and the mean's noise under max_noise
  capped,     // max_time_s spent first: the figure stands, flagged unconverged
};

Verdict judge(const RoundSeries& s, double elapsed_s, const StoppingRule& rule);

// Rounds to enqueue in the next batch (all behind one hold, one host round trip):
// about `target_batch_s` of wall time at the rounds' observed wall time each, no
// more than what the rule still needs, what is left of the time cap, or
// `max_batch`; at least one.
int next_batch(const RoundSeries& s, double wall_per_round_s, double elapsed_s, const StoppingRule& rule,
               int max_batch, double target_batch_s = 0.05);

// The first full round of a case is a warm-up (not counted) when it is short:
// repeating it costs little, and short rounds are where a cold start shows. A
// round longer than this share of the time cap is counted: repeating it would
// double the case's time, and the kernels are already loaded by the small
// warm-up round that precedes it.
inline constexpr double kColdRoundShareOfCap = 0.125;
bool first_round_is_warmup(double first_round_s, const StoppingRule& rule);

// SM clock of a batch from per-SM (clock64, %globaltimer) stamps taken before
// and after it: the mean of each SM's cycles / ns over the SMs stamped both
// times, in MHz. 0 when no SM was (the clock is then unknown, never "slow").
struct ClockStamp {
  std::uint64_t cycles = 0;  // clock64() on that SM
  std::uint64_t ns = 0;      // %globaltimer at the same moment (0: not stamped)
};
double mean_clock_mhz(const std::vector<ClockStamp>& before, const std::vector<ClockStamp>& after);

// nvbench drops samples under 75 % of the rated clock: a throttling GPU must not
// publish slow numbers as the allocator's.
inline constexpr double kMinClockFraction = 0.75;
// True when the batch ran slower than kMinClockFraction of the rated clock.
// Unknown clocks (0) are never throttled.
bool throttled(double measured_mhz, double rated_mhz);

}  // namespace heapbench
