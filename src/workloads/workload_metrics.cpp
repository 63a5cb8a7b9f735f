#include "workload_metrics.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "heapbench/iteration_result.hpp"

namespace heapbench {
namespace {

double per(double count, double seconds) { return seconds > 0 ? count / seconds : 0.0; }

class Output final : public Reducer {
 public:
  void add(const IterationResult& batch) override {
    total_ += batch.tally;
    rounds_ += std::max<std::size_t>(batch.round_seconds.size(), 1);
  }
  void write_counters(Counters& out) const override {
    const double seconds = total_.alloc_seconds + total_.free_seconds;
    out["outputs_per_s"] = per(static_cast<double>(total_.successes), seconds);
    out["output_bytes_per_s"] = per(static_cast<double>(total_.bytes), seconds);
    out["fail_rate"] = total_.attempts > 0 ? static_cast<double>(total_.attempts - total_.successes) /
                                                 static_cast<double>(total_.attempts)
                                           : 0.0;
    if (rounds_ > 0) {
      out["produce_s"] = total_.alloc_seconds / static_cast<double>(rounds_);
      out["release_s"] = total_.free_seconds / static_cast<double>(rounds_);
    }
  }
  bool reports_heap_bytes() const override { return true; }

 private:
  Tally total_;
  std::size_t rounds_ = 0;
};

// The counters of a phased workload, named per phase.
struct PhaseNames {
  std::array<const char*, PhasedRaw::kPhases> seconds;  // seconds per round
  std::array<const char*, PhasedRaw::kPhases> rates;    // operations per second of the phase (nullptr: none)
  bool allocs_per_s;                                    // allocation calls per second of the first two phases
};

class Phased final : public Reducer {
 public:
  explicit Phased(PhaseNames names) : names_(names) {}
  void add(const IterationResult& batch) override {
    const auto* raw = batch.observed.find<PhasedRaw>();
    if (raw == nullptr) return;
    for (int k = 0; k < PhasedRaw::kPhases; ++k) {
      sum_.seconds[k] += raw->seconds[k];
      sum_.operations[k] += raw->operations[k];
    }
    sum_.allocations += raw->allocations;
    sum_.frees += raw->frees;
    sum_.rounds += raw->rounds;
  }
  void write_counters(Counters& out) const override {
    if (sum_.rounds == 0) return;
    for (int k = 0; k < PhasedRaw::kPhases; ++k) {
      out[names_.seconds[k]] = sum_.seconds[k] / static_cast<double>(sum_.rounds);
      if (names_.rates[k] != nullptr) out[names_.rates[k]] = per(static_cast<double>(sum_.operations[k]), sum_.seconds[k]);
    }
    if (names_.allocs_per_s) {
      out["allocs_per_s"] = per(static_cast<double>(sum_.allocations), sum_.seconds[0] + sum_.seconds[1]);
    }
  }
  bool reports_heap_bytes() const override { return true; }

 private:
  PhaseNames names_;
  PhasedRaw sum_;
};

}  // namespace

std::unique_ptr<Reducer> output_reducer() { return std::make_unique<Output>(); }

std::unique_ptr<Reducer> graph_reducer() {
  return std::make_unique<Phased>(PhaseNames{{"init_s", "update_s", "release_s"},
                                             {"edges_per_s", "edge_updates_per_s", nullptr},
                                             true});
}

std::unique_ptr<Reducer> hash_reducer() {
  return std::make_unique<Phased>(PhaseNames{{"insert_s", "delete_s", "release_s"},
                                             {"inserts_per_s", "deletes_per_s", nullptr},
                                             false});
}

}  // namespace heapbench
