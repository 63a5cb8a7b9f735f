// Google Benchmark side of every pattern (workloads and counters: the header
// comment of each src/patterns/<pattern>.cu). One iteration = the case's batches
// of rounds until the stopping rule says enough; its manual time is a round's mean
// GPU time of its timed launches, stamped in the kernels. Every phase is an NVTX range inside the case's range. The
// harness only loops and writes the measurement counters every case has; the
// pattern's counters are written by the reducer its Round makes (reducer.hpp).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <fmt/format.h>

#include "measure/case_loop.hpp"
#include "cases/case_naming.hpp"
#include "cases/axis_values.hpp"
#include "cases/catalog.hpp"
#include "measure/round_phases.hpp"
#include "measure/measure.hpp"
#include "measure/nvtx.hpp"
#include "cases/parse.hpp"

namespace heapbench {
namespace {

// Threads of the small warm-up round before a case's full rounds.
constexpr std::uint64_t kWarmupThreads = 1024;

// A case that leaves the heap smaller than it found it would poison every later
// case on the same heap. The probe fills with 64 KiB blocks; allow two blocks of
// slack for where the allocator places them.
std::string capacity_problem(std::uint64_t before, std::uint64_t after) {
  if (after + 2 * kCapacityProbeBlock >= before) return {};
  return fmt::format("the heap held {} fewer bytes of 64 KiB blocks after the case ({} -> {}): blocks were not freed",
                     before - after, format_quantity(before), format_quantity(after));
}

std::uint64_t probe(Backend& backend, std::uint64_t heap_bytes) {
  nvtx::range r{nvtx::phase(nvtx::Phase::probe)};
  return backend.probe_capacity(heap_bytes);
}

// The probe is of CUDA's device heap, so it runs around the cases of an API
// that calls it (the heap's own, and the output strategies, of which
// warp_aggregated calls malloc). An API with its own arena (bump, slab, the
// zoo's), the stack (alloca) and printf's FIFO leave the device heap as they
// found it: their cases are not probed, and the heap's last probe stands for
// the next case. (25 ms a case on a 1 GiB heap on the H200: 2.3 s of the
// default sweep went to probing cases that never called CUDA's malloc.)
bool probes_device_heap(const Case& c) {
  return c.api->source == Source::device_heap || c.api->source == Source::strategy;
}

// The capacity probe after a case is the one before the next case on the same
// heap: nothing runs on the heap in between. Forgotten on a reset or an error.
struct CapacityMemo {
  std::uint64_t heap = 0;
  std::optional<std::uint64_t> bytes;
};
CapacityMemo g_capacity;

// Every round a case measured, and what the GPU said around them. The
// pattern's own results go to its reducer, batch by accepted batch.
struct Measured {
  explicit Measured(std::unique_ptr<Reducer> r) : reducer(std::move(r)) {}
  RoundSeries series;
  RoundSamples samples;  // the same rounds, kept for the results file
  std::unique_ptr<Reducer> reducer;
  int throttled_rounds = 0;  // in batches under kMinClockFraction of the rated SM clock: dropped
  int unheld_rounds = 0;     // in batches whose hold broke (launch gaps timed): dropped
  double clock_x_time = 0, clock_time = 0;  // SM clock weighted by the batches' timed seconds
  double min_clock_mhz = 0;                 // the slowest dropped batch, for the error message
  Verdict verdict = Verdict::more;
  bool warmed = false;  // the first full round has been seen (counted or discarded)
  KernelCost cost;      // the allocate phase's kernels, from the case's first round
  std::uint64_t calls = 0;  // allocation calls of every batch run, counted or dropped: what the energy paid for
  double measuring_s = 0;   // the pattern's measuring work beside its timed launches, every batch run

  void accept(const IterationResult& r, const std::vector<double>& rounds, double clock_mhz) {
    for (double t : rounds) {
      series.add(t);
      samples.add(t);
    }
    reducer->add(r);
    if (clock_mhz > 0) {
      const double t = r.timed_seconds;
      clock_x_time += clock_mhz * t;
      clock_time += t;
    }
  }
  double sm_clock_mhz() const { return clock_time > 0 ? clock_x_time / clock_time : 0; }
};

// What one batch's collect() and the backend's end_batch() said.
struct Batch {
  BatchTiming timing;
  IterationResult result;
};

// Enqueues k rounds, numbered from first_index (-1 each for the warm-up
// round), and waits for them. The first round of the case's first batch has
// its kernels' cost noted.
Batch run_batch(Backend& backend, Round& round, int k, bool warmup, std::int64_t first_index, Measured& m) {
  round.begin_batch();
  backend.begin_batch(round.enqueues_only());
  for (int i = 0; i < k; ++i) {
    const bool watch = i == 0 && m.cost.kernels == 0 && !m.warmed;
    enqueue_round(round, warmup ? -1 : first_index + i, watch ? &backend : nullptr, watch ? &m.cost : nullptr);
  }
  Batch b;
  nvtx::range v{nvtx::phase(nvtx::Phase::verify, first_index)};
  b.timing = backend.end_batch();
  b.result = round.collect();
  return b;
}

// Counts the batch's rounds, or drops them all when the SM clock throttled or
// the launch hold broke. Returns the rounds counted.
int count_or_drop(Measured& m, const Batch& b, const std::vector<double>& rounds, int k, double rated) {
  const bool slow = throttled(b.timing.sm_clock_mhz, rated);
  if (!slow && !b.timing.hold_broke) {
    m.accept(b.result, rounds, b.timing.sm_clock_mhz);
    return static_cast<int>(rounds.size());
  }
  (slow ? m.throttled_rounds : m.unheld_rounds) += k;
  if (slow && (m.min_clock_mhz == 0 || b.timing.sm_clock_mhz < m.min_clock_mhz)) m.min_clock_mhz = b.timing.sm_clock_mhz;
  return 0;
}

// Why a case that ran out of time with no round counted has no figure.
std::string every_batch_dropped(const Measured& m, double rated) {
  if (m.throttled_rounds > 0) {
    return fmt::format("the SM clock stayed under {:.0f} % of the rated {:.0f} MHz in every round ({} rounds, slowest "
                       "{:.0f} MHz): the GPU is throttling; no figure is published",
                       100 * kMinClockFraction, rated, m.throttled_rounds, m.min_clock_mhz);
  }
  return fmt::format("every batch's launch hold timed out before its rounds were enqueued ({} rounds): the "
                     "host could not keep up, so launch gaps would be timed",
                     m.unheld_rounds);
}

// What measure does after a batch is counted or dropped.
enum class Next { done, another, out_of_time };

// Done at fixed_rounds, or when the rule's verdict is in; another batch while
// there is time (ten times the rule's with fixed_rounds) or a round counted.
template <class Elapsed>
Next after_batch(Measured& m, const StoppingRule& rule, int fixed_rounds, int measured, const Elapsed& elapsed) {
  if (fixed_rounds > 0) {
    if (measured >= fixed_rounds) return Next::done;
    return elapsed() < 10 * rule.max_time_s ? Next::another : Next::out_of_time;
  }
  m.verdict = judge(m.series, elapsed(), rule);
  if (m.verdict != Verdict::more) return Next::done;
  return m.series.rounds() > 0 || elapsed() < rule.max_time_s ? Next::another : Next::out_of_time;
}

// Runs batches of rounds until the stopping rule says enough (or, with
// `fixed_rounds`, exactly that many). Returns "" or why the case is an error.
std::string measure(Backend& backend, Round& round, const RunConfig& cfg, int fixed_rounds, Measured& m) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(clock::now() - t0).count(); };
  const StoppingRule& rule = cfg.rule;
  const double rated = backend.rated_sm_mhz();
  double wall_per_round = 0;
  int measured = 0;
  while (true) {
    const bool warmup = !m.warmed && fixed_rounds == 0;
    int k = warmup ? 1 : next_batch(m.series, wall_per_round, elapsed(), rule, round.max_batch());
    if (fixed_rounds > 0) k = std::min(std::max(round.max_batch(), 1), fixed_rounds - measured);
    const std::int64_t first_index = warmup ? -1 : m.series.rounds();
    const auto tb = clock::now();
    const Batch b = run_batch(backend, round, k, warmup, first_index, m);
    const IterationResult& r = b.result;
    m.calls += r.tally.attempts;
    m.measuring_s += r.measuring_seconds;
    wall_per_round = std::chrono::duration<double>(clock::now() - tb).count() / k;
    if (auto why = r.problem(cfg.kernel_budget_s); !why.empty()) return why;
    std::vector<double> rounds = r.round_seconds;
    if (rounds.empty()) rounds.push_back(r.timed_seconds);
    if (!m.warmed) {
      m.warmed = true;
      if (fixed_rounds == 0 && first_round_is_warmup(rounds.front(), rule)) continue;
    }
    measured += count_or_drop(m, b, rounds, k, rated);
    const Next next = after_batch(m, rule, fixed_rounds, measured, elapsed);
    if (next == Next::done) return {};
    // Out of time with no round counted: every batch was dropped.
    if (next == Next::out_of_time) return every_batch_dropped(m, rated);
  }
}

// What calling the allocator costs (docs/metrics.md): the allocate phase's
// kernels, and the allocator's set-up, first round and reset.
struct SetUp {
  double setup_s = -1, first_use_s = -1, reset_s = -1;
};
void set_cost_counters(benchmark::State& st, const KernelCost& k, const SetUp& s) {
  if (k.kernels > 0) {
    st.counters["regs_per_thread"] = k.regs;
    st.counters["local_bytes_per_thread"] = static_cast<double>(k.local_bytes);
    st.counters["stack_bytes_per_thread"] = static_cast<double>(k.stack_bytes);
    st.counters["occupancy"] = k.occupancy;
  }
  if (s.setup_s >= 0) st.counters["setup_s"] = s.setup_s;
  if (s.first_use_s >= 0) st.counters["first_use_s"] = s.first_use_s;
  if (s.reset_s >= 0) st.counters["reset_s"] = s.reset_s;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void set_measurement_counters(benchmark::State& st, const Measured& m, bool fixed) {
  st.counters["rounds"] = m.series.rounds();
  if (m.series.rounds() >= 2) st.counters["noise"] = m.series.noise();
  if (!fixed) st.counters["converged"] = m.verdict == Verdict::converged ? 1 : 0;
  st.counters["timed_s"] = m.series.total();
  if (m.measuring_s > 0) st.counters["measuring_s"] = m.measuring_s;
  if (m.sm_clock_mhz() > 0) st.counters["sm_clock_mhz"] = m.sm_clock_mhz();
  if (m.throttled_rounds > 0) st.counters["throttled_rounds"] = m.throttled_rounds;
  if (m.unheld_rounds > 0) st.counters["unheld_rounds"] = m.unheld_rounds;
}

// The case's own configuration: its pattern's share of the kernel budget.
RunConfig for_case(const Case& c, const RunConfig& cfg) {
  RunConfig out = cfg;
  out.kernel_budget_s *= c.pattern->budget_factor;
  return out;
}

// The first launch of each kernel pays for loading it, and the first calls
// after a reset set the heap up: a round of at most kWarmupThreads threads
// pays both for little GPU time, whatever the case's size. Its problem, or "".
std::string warm_up(Backend& backend, const Case& c, const RunConfig& cfg) {
  nvtx::range r{nvtx::phase(nvtx::Phase::warmup)};
  Case small = c;
  small.threads = std::min<std::uint64_t>(c.threads, kWarmupThreads);
  std::unique_ptr<Round> warm = backend.make_round(small, cfg.kernel_budget_s);
  return run_round(*warm, -1).problem(cfg.kernel_budget_s);
}

// What run_case keeps of every run for the results file and the summary.
struct Kept {
  std::map<std::string, std::vector<RoundSamples>> samples;  // family -> one per repetition, in order
  std::vector<std::pair<std::string, bool>> convergence;
};
Kept& kept() {
  static Kept k;
  return k;
}

// Files the run's samples under its family when the run ends, however it ends,
// so that the n-th of a family's is its n-th repetition's.
struct KeepSamples {
  std::string family;
  RoundSamples samples;
  ~KeepSamples() { kept().samples[family].push_back(std::move(samples)); }
};

// Where a case's wall time goes (progress.hpp's kBudgetCounters): the phases
// the run's budget line sums, each timed on the host.
struct CaseClock {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  double heap_s = 0, probe_s = 0, loop_s = 0, meter_s = 0;
  template <class F>
  auto add(double& into, F f) {
    const auto t0 = std::chrono::steady_clock::now();
    auto out = f();
    into += seconds_since(t0);
    return out;
  }
  void write(benchmark::State& st) const {
    st.counters["heap_s"] = heap_s;
    st.counters["probe_s"] = probe_s;
    st.counters["loop_s"] = loop_s;
    st.counters["meter_s"] = meter_s;
    st.counters["case_wall_s"] = seconds_since(start);
  }
};

// The case's limit (Case::limit_bytes), a device reset where it changes.
Backend::Heap set_limit(Backend& backend, const Case& c) {
  // By limit_bytes, not malloc_heap(): a printf case's FIFO too can change
  // only after a device reset, which a new heap size brings.
  nvtx::range r{nvtx::phase(nvtx::Phase::heap, static_cast<std::int64_t>(c.limit_bytes / kMiB))};
  const Backend::Heap heap = backend.ensure_limit(c.limit_bytes);
  if (heap.reset) nvtx::mark(fmt::format("device reset for a {} MiB heap", c.limit_bytes / kMiB).c_str(), nvtx::Phase::heap);
  return heap;
}

// The measuring loop: Google Benchmark's one iteration (or --profile's), its manual time a round's mean.
void measuring_loop(benchmark::State& st, Backend& backend, Round& round, const RunConfig& cfg, Measured& m) {
  const bool fixed = cfg.fixed_iterations > 0;
  for (auto _ : st) {
    const RoundSeries before = m.series;
    if (auto why = measure(backend, round, cfg, fixed ? 1 : 0, m); !why.empty()) {
      st.SkipWithError(why.c_str());
      break;
    }
    const double seconds = m.series.total() - before.total();
    const int rounds = m.series.rounds() - before.rounds();
    st.SetIterationTime(rounds > 0 ? seconds / rounds : 0.0);
  }
}

// The heap's capacity before the case: the memo's, or a fresh probe. Taken
// from the memo: an error before the probe after the case leaves nothing to trust.
std::uint64_t capacity_before(Backend& backend, const Backend::Heap& heap, CaseClock& clock) {
  const std::uint64_t bytes =
      g_capacity.bytes ? *g_capacity.bytes : clock.add(clock.probe_s, [&] { return probe(backend, heap.reported); });
  g_capacity.bytes.reset();
  return bytes;
}

// Probes the heap after the case: a lost capacity's problem, or "" with the
// probe kept for the next case.
std::string capacity_after(Backend& backend, const Backend::Heap& heap, CaseClock& clock, std::uint64_t before) {
  const std::uint64_t after = clock.add(clock.probe_s, [&] { return probe(backend, heap.reported); });
  if (auto why = capacity_problem(before, after); !why.empty()) return why;
  g_capacity.bytes = after;
  return {};
}

// warm_up where the round wants it, timed as the allocator's first use. Its problem, or "".
std::string timed_warm_up(Backend& backend, const Case& c, const RunConfig& cfg, const Round& round, SetUp& setup) {
  if (!round.small_warmup()) return {};
  const auto t0 = std::chrono::steady_clock::now();
  if (std::string why = warm_up(backend, c, cfg); !why.empty()) return why;
  setup.first_use_s = seconds_since(t0);
  return {};
}

// The counters of a case measured to the end: the harness's, the allocator's
// cost, the pattern's (its reducer) and the energy meter's.
void write_case_counters(benchmark::State& st, const Case& c, const RunConfig& cfg, const Measured& m,
                         const SetUp& setup, const Backend::Heap& heap, const Counters& energy_counters) {
  const bool fixed = cfg.fixed_iterations > 0;
  set_measurement_counters(st, m, fixed);
  set_cost_counters(st, m.cost, setup);
  if (!fixed) kept().convergence.emplace_back(case_name(c), m.verdict == Verdict::converged);
  Counters own;
  m.reducer->write(own, heap.reported);
  own.insert(energy_counters.begin(), energy_counters.end());
  for (const auto& [counter, value] : own) st.counters[counter] = value;
}

void run_case(benchmark::State& st, const Case& c, const std::string& name, const RunConfig& run_cfg) {
  KeepSamples keep{case_name(c), {}};
  const RunConfig cfg = for_case(c, run_cfg);
  if (cfg.stop && cfg.stop->due()) throw StoppedAfterDeviceError{};
  nvtx::range case_range{nvtx::case_range(name.c_str(), c.threads)};
  Backend& backend = *cfg.backend;
  // An allocator whose contract rules the case out (a heap too small for it, a
  // block too large): its reason, before any device work.
  if (const std::string why = contract_skip_reason(c); !why.empty()) {
    st.SkipWithError(why.c_str());
    return;
  }
  CaseClock clock;
  try {
    const Backend::Heap heap = clock.add(clock.heap_s, [&] { return set_limit(backend, c); });
    if (heap.reset || g_capacity.heap != c.limit_bytes) g_capacity = CapacityMemo{c.limit_bytes, std::nullopt};
    SetUp setup;
    auto t0 = std::chrono::steady_clock::now();
    std::unique_ptr<Round> round = backend.make_round(c, cfg.kernel_budget_s);
    backend.synchronize();
    setup.setup_s = seconds_since(t0);
    const bool probed = probes_device_heap(c);
    const std::uint64_t before = probed ? capacity_before(backend, heap, clock) : 0;
    if (const std::string why = timed_warm_up(backend, c, cfg, *round, setup); !why.empty()) {
      st.SkipWithError(("warm-up: " + why).c_str());
      return;
    }
    setup.reset_s = round->reset_seconds();
    Measured m(round->reducer());
    // The energy counter is read before the loop's first batch and after its last (docs/metrics.md, "Energy").
    t0 = std::chrono::steady_clock::now();
    energy::Section energy_section(cfg.energy.get());
    clock.meter_s += seconds_since(t0);
    clock.add(clock.loop_s, [&] { return (measuring_loop(st, backend, *round, cfg, m), 0); });
    const Counters energy_counters = clock.add(clock.meter_s, [&] { return energy_section.finish(m.calls); });
    if (st.error_occurred()) return;
    if (const std::string why = probed ? capacity_after(backend, heap, clock, before) : ""; !why.empty()) {
      st.SkipWithError(why.c_str());
      return;
    }
    keep.samples = m.samples;
    write_case_counters(st, c, cfg, m, setup, heap, energy_counters);
    clock.write(st);
  } catch (const DeviceError& e) {
    // The context may hold a sticky error: make the next case start from a reset,
    // or, in a child of isolation, from a new process.
    g_capacity = CapacityMemo{};
    backend.invalidate();
    const std::string fault = known_fault(c);
    st.SkipWithError(fault.empty() ? e.what() : (std::string(e.what()) + " (" + fault + ")").c_str());
    if (cfg.stop) cfg.stop->failed(name);
  } catch (const std::exception& e) {
    g_capacity = CapacityMemo{};
    st.SkipWithError(e.what());
  }
}

}  // namespace

void DeviceErrorStop::failed(const std::string& name) {
  if (failed_.empty()) failed_ = name;
}

void DeviceErrorStop::reported(const std::string& name) {
  if (!failed_.empty() && name == failed_) reported_ = true;
}

std::string benchmark_name(const Case& c, const RunConfig& cfg) {
  std::string name = case_name(c);
  if (cfg.fixed_iterations > 0) name += fmt::format("/iterations:{}", cfg.fixed_iterations);
  return name + kManualTimeSuffix;
}

namespace {
// What registration recorded: each case under Google Benchmark's family name
// (the name registered, case_name()).
struct Registry {
  std::map<std::string, Case> by_family;
};
Registry& registry() {
  static Registry r;
  return r;
}
}  // namespace

const Case* registered_case(const std::string& family) {
  const auto it = registry().by_family.find(family);
  return it == registry().by_family.end() ? nullptr : &it->second;
}

const RoundSamples* round_samples(const std::string& family, std::int64_t repetition) {
  const auto it = kept().samples.find(family);
  if (it == kept().samples.end() || repetition < 0 || static_cast<std::size_t>(repetition) >= it->second.size()) {
    return nullptr;
  }
  const RoundSamples& s = it->second[static_cast<std::size_t>(repetition)];
  return s.ns().empty() ? nullptr : &s;
}

std::vector<std::pair<std::string, bool>> convergence_of_runs() { return kept().convergence; }

void register_cases(const std::vector<Case>& cases, const RunConfig& cfg) {
  for (const Case& c : cases) {
    const std::string name = benchmark_name(c, cfg);
    const std::string family = case_name(c);
    registry().by_family.emplace(family, c);
    auto* b = benchmark::RegisterBenchmark(family.c_str(),
                                           [c, name, cfg](benchmark::State& st) { run_case(st, c, name, cfg); });
    b->UseManualTime()->Unit(benchmark::kMillisecond);
    if (cfg.fixed_iterations > 0) b->Iterations(cfg.fixed_iterations);
  }
}

}  // namespace heapbench
