#pragma once
// What one batch of rounds of a case observed (Round::collect): the checks
// every pattern makes, the tally of allocation calls, and the pattern's own
// observations, which only the reducers its Round makes read (reducer.hpp).
#include <any>
#include <cstdint>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "measure/metrics.hpp"

namespace heapbench {

// A pattern's observations of a batch, at most one value of each type
// (LatencySamples, BlockAddresses, CapacityRaw, PrintfRaw, or a new pattern's
// own): the harness carries them from collect() to the pattern's reducer
// without knowing what they are.
class Observations {
 public:
  template <class T>
  void put(T value) {
    for (auto& item : items_) {
      if (item.type() == typeid(T)) {
        item = std::move(value);
        return;
      }
    }
    items_.emplace_back(std::move(value));
  }
  // nullptr where the batch observed no T.
  template <class T>
  const T* find() const {
    for (const auto& item : items_) {
      if (const T* p = std::any_cast<T>(&item)) return p;
    }
    return nullptr;
  }

 private:
  std::vector<std::any> items_;
};

// Counts are summed over the batch.
struct IterationResult {
  Tally tally;
  double timed_seconds = 0.0;     // GPU time of the timed launches, summed over the batch
  // GPU time of the timed launches of each round of the batch, in order (empty:
  // one round of timed_seconds).
  std::vector<double> round_seconds;
  // Wall seconds of the pattern's measuring work beside its timed launches, whose
  // results are its other figures: capacity's fragmentation and recovery fills,
  // printf's drain of its FIFO (flush_lines_per_s).
  double measuring_seconds = 0.0;
  std::uint64_t not_started = 0;  // calls (or churn threads) that found the kernel budget spent
  std::uint64_t misaligned = 0;   // pointers not aligned as the API promises
  std::uint64_t corrupted = 0;    // blocks that did not read back what was written
  std::string fault;              // any other failed check, in words
  Observations observed;          // the pattern's own, for its reducer

  // Empty when the round is a valid measurement; otherwise why it is not.
  std::string problem(double kernel_budget_s) const;
};

}  // namespace heapbench
