#include "measure/measure.hpp"

#include <algorithm>
#include <cmath>

namespace heapbench {

void RoundSeries::add(double seconds) {
  ++n_;
  total_ += seconds;
  const double delta = seconds - mean_;
  mean_ += delta / n_;
  m2_ += delta * (seconds - mean_);
}

double RoundSeries::noise() const {
  if (n_ < 2 || mean_ <= 0) return 0.0;
  return std::sqrt(m2_ / (n_ - 1)) / mean_;
}

double RoundSeries::mean_noise() const { return n_ < 2 ? 0.0 : noise() / std::sqrt(static_cast<double>(n_)); }

void RoundSamples::add(double seconds) {
  if (seen_++ % stride_ != 0) return;
  ns_.push_back(static_cast<std::int64_t>(std::llround(seconds * 1e9)));
  if (ns_.size() < kMaxSamples) return;
  // Keep rounds 0, 2*stride, 4*stride, ...: the same spacing from the first round on.
  std::size_t kept = 0;
  for (std::size_t i = 0; i < ns_.size(); i += 2) ns_[kept++] = ns_[i];
  ns_.resize(kept);
  stride_ *= 2;
}

Verdict judge(const RoundSeries& s, double elapsed_s, const StoppingRule& rule) {
  if (s.rounds() >= std::max(rule.min_rounds, 2) && s.mean_noise() <= rule.max_noise) return Verdict::converged;
  if (elapsed_s >= rule.max_time_s && s.rounds() >= 1) return Verdict::capped;
  return Verdict::more;
}

int next_batch(const RoundSeries& s, double wall_per_round_s, double elapsed_s, const StoppingRule& rule,
               int max_batch, double target_batch_s) {
  if (max_batch <= 1 || wall_per_round_s <= 0) return 1;
  double k = target_batch_s / wall_per_round_s;
  // What the rule still needs: the rounds to min_rounds, or, from the noise so
  // far, the rounds at which noise / sqrt(n) reaches max_noise.
  double needed = std::max(0, std::max(rule.min_rounds, 2) - s.rounds());
  if (s.rounds() >= 2 && rule.max_noise > 0) {
    const double r = s.noise() / rule.max_noise;
    needed = std::max(needed, std::ceil(r * r) - s.rounds());
  }
  if (needed >= 1) k = std::min(k, needed);
  k = std::min(k, (rule.max_time_s - elapsed_s) / wall_per_round_s);
  return static_cast<int>(std::clamp(std::floor(k), 1.0, static_cast<double>(max_batch)));
}

bool first_round_is_warmup(double first_round_s, const StoppingRule& rule) {
  return first_round_s < kColdRoundShareOfCap * rule.max_time_s;
}

double mean_clock_mhz(const std::vector<ClockStamp>& before, const std::vector<ClockStamp>& after) {
  double sum = 0;
  int sms = 0;
  for (std::size_t i = 0; i < std::min(before.size(), after.size()); ++i) {
    const ClockStamp& a = before[i];
    const ClockStamp& b = after[i];
    if (a.ns == 0 || b.ns <= a.ns || b.cycles <= a.cycles) continue;
    sum += static_cast<double>(b.cycles - a.cycles) / static_cast<double>(b.ns - a.ns) * 1e3;
    ++sms;
  }
  return sms == 0 ? 0.0 : sum / sms;
}

bool throttled(double measured_mhz, double rated_mhz) {
  return measured_mhz > 0 && rated_mhz > 0 && measured_mhz < kMinClockFraction * rated_mhz;
}

}  // namespace heapbench
