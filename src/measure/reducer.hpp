#pragma once
// A pattern's counters. Each Round makes the reducer of its pattern
// (Round::reducer()); the harness hands it every batch of rounds it accepts as
// a measurement (never a warm-up, throttled or unheld batch) and, when the case
// ends, lets it write the pattern's counters. The harness itself writes only
// the measurement counters every case has (rounds, noise, timed_s, ...), so a
// new pattern brings its counters with it and needs no change to the loop.
// Plain C++: no Google Benchmark type, so reducers are tested on the host.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace heapbench {

struct IterationResult;

// A case's counters by name, as the results file carries them.
using Counters = std::map<std::string, double>;

class Reducer {
 public:
  virtual ~Reducer() = default;
  // One accepted batch.
  virtual void add(const IterationResult& batch) = 0;
  // After the last batch: the pattern's counters, and heap_bytes (the limit
  // the device reported for the case) where the pattern reports it.
  void write(Counters& out, std::uint64_t heap_bytes) const {
    write_counters(out);
    if (reports_heap_bytes()) out["heap_bytes"] = static_cast<double>(heap_bytes);
  }
  // The pattern's own counters, from the batches it was given.
  virtual void write_counters(Counters& out) const = 0;
  virtual bool reports_heap_bytes() const { return false; }
};

// Several reducers fed the same batches, writing in turn.
std::unique_ptr<Reducer> combine(std::vector<std::unique_ptr<Reducer>> parts);

template <class... R>
std::unique_ptr<Reducer> combine(std::unique_ptr<R>... parts) {
  std::vector<std::unique_ptr<Reducer>> v;
  (v.push_back(std::move(parts)), ...);
  return combine(std::move(v));
}

}  // namespace heapbench
