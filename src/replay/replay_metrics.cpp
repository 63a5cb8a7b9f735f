#include "replay/replay_metrics.hpp"

#include <algorithm>
#include <numeric>

namespace heapbench {
namespace {

struct ReplayRaw {
  double seconds = 0, floor_seconds = 0, empty_seconds = 0;
  std::uint64_t launches = 0, allocations = 0, releases = 0, nulls = 0, new_nulls = 0, peak_bytes = 0, rounds = 0;
  std::uint64_t unmatched_releases = 0;  // the trace's, the same every round
  std::uint64_t floor_rounds = 0;  // rounds that measured the floor (all, or none: a trace too large for its arena)
};

class Replay final : public Reducer {
 public:
  void add(const IterationResult& batch) override {
    const auto* r = batch.observed.find<ReplayRaw>();
    if (r == nullptr) return;
    sum_.seconds += r->seconds;
    sum_.floor_seconds += r->floor_seconds;
    sum_.empty_seconds += r->empty_seconds;
    sum_.launches += r->launches;
    sum_.allocations += r->allocations;
    sum_.releases += r->releases;
    sum_.nulls += r->nulls;
    sum_.new_nulls += r->new_nulls;
    sum_.peak_bytes = r->peak_bytes;
    sum_.unmatched_releases = r->unmatched_releases;
    sum_.rounds += r->rounds;
    sum_.floor_rounds += r->floor_rounds;
  }
  void write_counters(Counters& out) const override {
    if (sum_.rounds == 0) return;
    const auto per = [&](std::uint64_t n) { return sum_.seconds > 0 ? static_cast<double>(n) / sum_.seconds : 0.0; };
    const auto per_launch = [&](double s) { return sum_.launches > 0 ? s / static_cast<double>(sum_.launches) : 0.0; };
    out["launch_s"] = per_launch(sum_.seconds);
    if (sum_.floor_rounds == sum_.rounds) {
      out["floor_s"] = per_launch(sum_.floor_seconds);
      out["net_launch_s"] = per_launch(sum_.seconds - sum_.floor_seconds);
    }
    out["empty_launch_s"] = per_launch(sum_.empty_seconds);
    out["allocs_per_s"] = per(sum_.allocations - sum_.nulls);
    out["frees_per_s"] = per(sum_.releases);
    out["fail_rate"] = sum_.allocations > 0 ? static_cast<double>(sum_.nulls) / static_cast<double>(sum_.allocations) : 0.0;
    out["new_nulls"] = static_cast<double>(sum_.new_nulls) / static_cast<double>(sum_.rounds);
    out["unmatched_releases"] = static_cast<double>(sum_.unmatched_releases);
    out["peak_bytes"] = static_cast<double>(sum_.peak_bytes);
  }
  bool reports_heap_bytes() const override { return true; }

 private:
  ReplayRaw sum_;
};

}  // namespace

IterationResult replay_result(const ReplayCounts& c, const ReplayCounts& floor, const ReplayShape& shape,
                              const std::vector<double>& launch_seconds, const std::vector<double>& floor_seconds,
                              const std::vector<double>& empty_seconds) {
  IterationResult out;
  out.not_started = c.timed_out + floor.timed_out;
  out.misaligned = c.misaligned + floor.misaligned;
  out.corrupted = c.corrupted + floor.corrupted;
  ReplayRaw raw;
  raw.seconds = std::accumulate(launch_seconds.begin(), launch_seconds.end(), 0.0);
  raw.floor_seconds = std::accumulate(floor_seconds.begin(), floor_seconds.end(), 0.0);
  raw.floor_rounds = floor_seconds.empty() ? 0 : 1;
  raw.empty_seconds = std::accumulate(empty_seconds.begin(), empty_seconds.end(), 0.0);
  raw.launches = shape.launches;
  raw.allocations = shape.allocations;
  raw.releases = shape.releases;
  raw.nulls = c.nulls;
  raw.new_nulls = c.new_nulls;
  raw.peak_bytes = shape.peak_bytes;
  raw.unmatched_releases = shape.unmatched_releases;
  raw.rounds = 1;
  out.tally.attempts = shape.allocations;
  out.tally.successes = shape.allocations - std::min<std::uint64_t>(shape.allocations, c.nulls);
  out.tally.bytes = shape.peak_bytes;  // what the round held at once at most (advise's utilisation)
  out.round_seconds = {raw.seconds};
  out.timed_seconds = raw.seconds;
  out.observed.put(raw);
  return out;
}

std::unique_ptr<Reducer> replay_reducer() { return std::make_unique<Replay>(); }

}  // namespace heapbench
