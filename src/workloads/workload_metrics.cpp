#include "workloads/workload_metrics.hpp"

#include <algorithm>
#include <array>
#include <string>

#include <fmt/format.h>

#include "workloads/hash_body.hpp"
#include "measure/iteration_result.hpp"

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

IterationResult output_result(const OutputCounts& c, std::uint64_t threads, double produce_s, double release_s) {
  IterationResult out;
  out.not_started = c.not_started;
  out.misaligned = c.misaligned;
  out.corrupted = c.corrupted;
  if (c.nulls != c.reported_nulls) {
    out.fault = fmt::format("{} outputs were missing, of which the strategy reported {} as not obtained (NULL)", c.nulls,
                            c.reported_nulls);
  }
  out.tally.attempts = threads;
  out.tally.successes = c.present;
  out.tally.bytes = c.bytes;
  out.tally.alloc_seconds = produce_s;
  out.tally.free_seconds = release_s;
  out.round_seconds = {produce_s + release_s};
  out.timed_seconds = produce_s + release_s;
  return out;
}

namespace {
// The three phases' seconds and work as the phased reducer reads them.
void put_phases(IterationResult& out, const double (&seconds)[3], const std::uint64_t (&operations)[3],
                std::uint64_t allocations) {
  PhasedRaw raw;
  for (int k = 0; k < PhasedRaw::kPhases; ++k) {
    raw.seconds[k] = seconds[k];
    raw.operations[k] = operations[k];
  }
  raw.allocations = allocations;
  raw.frees = allocations;
  raw.rounds = 1;
  out.round_seconds = {seconds[0] + seconds[1] + seconds[2]};
  out.timed_seconds = out.round_seconds.front();
  out.observed.put(raw);
}
}  // namespace

std::string hash_fault_kinds(unsigned long long kinds) {
  std::string out;
  const std::pair<unsigned, const char*> names[] = {{workloads::kHashMissing, "missing"},
                                                    {workloads::kHashDuplicate, "present twice"},
                                                    {workloads::kHashNotDeleted, "present after its delete"},
                                                    {workloads::kHashCorrupt, "value corrupted or chain broken"}};
  for (const auto& [bit, name] : names) {
    if ((kinds & bit) != 0) out += (out.empty() ? "" : ", ") + std::string(name);
  }
  return out;
}

IterationResult hash_result(const HashCounts& c, std::uint64_t keys, const double (&seconds)[3]) {
  IterationResult out;
  const std::uint64_t deletes = (keys + 1) / 2;
  out.not_started = c.timed_out;
  std::string fault;
  const auto add = [&](const std::string& s) { fault += fault.empty() ? s : "; " + s; };
  if (c.nulls > 0) add(fmt::format("{} of {} node allocations returned NULL: the table does not fit this heap", c.nulls, keys));
  if (c.faults[0] + c.faults[1] > 0) {
    add(fmt::format("{} keys looked up wrong after the inserts and {} after the deletes ({})", c.faults[0], c.faults[1],
                    hash_fault_kinds(c.kinds)));
  }
  if (c.missing > 0) add(fmt::format("{} deletes found no node for their key", c.missing));
  if (c.nulls == 0 && c.timed_out == 0 && (c.nodes[0] != keys || c.nodes[1] != keys - deletes)) {
    add(fmt::format("the chains held {} nodes after {} inserts and {} after {} deletes", c.nodes[0], keys, c.nodes[1],
                    deletes));
  }
  out.fault = fault;
  // With no fault every key was inserted, every other one deleted, the rest released.
  put_phases(out, seconds, {keys, deletes, keys - deletes}, keys);
  out.tally.attempts = keys;
  out.tally.successes = keys - std::min<std::uint64_t>(keys, c.nulls);
  return out;
}

IterationResult graph_result(const GraphCounts& c, const GraphShape& g, const double (&seconds)[3]) {
  IterationResult out;
  out.not_started = c.timed_out;
  if (c.nulls > 0) {
    out.fault = fmt::format("{} allocation calls returned NULL: the graph does not fit this heap", c.nulls);
  } else if (c.wrong_lists > 0 && c.timed_out == 0) {
    out.fault = fmt::format("{} of {} vertices' lists differ from the reference after the updates", c.wrong_lists,
                            g.vertices);
  }
  put_phases(out, seconds, {g.edges, g.updates, g.vertices}, g.blocks);
  out.tally.attempts = g.blocks;
  out.tally.successes = g.blocks - std::min<std::uint64_t>(g.blocks, c.nulls);
  return out;
}

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
