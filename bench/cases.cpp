// Google Benchmark side of every pattern (workloads and counters: the header
// comment of each src/device/<pattern>.cu). One iteration = one round of the
// pattern; its manual time is the GPU time of the round's timed launches, from
// CUDA events. Every phase is an NVTX range inside the case's range.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <fmt/format.h>

#include "families.hpp"
#include "round.hpp"
#include "heapbench/measure.hpp"
#include "heapbench/nvtx.hpp"
#include "heapbench/parse.hpp"

namespace heapbench {
namespace {

// Threads of the small warm-up round before a case's full rounds.
constexpr std::uint64_t kWarmupThreads = 1024;

// Latency samples kept per case across rounds (8 bytes each).
constexpr std::size_t kMaxLatencySamples = std::size_t{1} << 24;

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

void append(std::vector<double>& all, const std::vector<double>& more) {
  const std::size_t room = kMaxLatencySamples - std::min(kMaxLatencySamples, all.size());
  all.insert(all.end(), more.begin(), more.begin() + static_cast<std::ptrdiff_t>(std::min(room, more.size())));
}

// Capacity figures, averaged over the rounds of a case.
struct CapacitySums {
  int rounds = 0;
  bool fill_only = false;
  CapacityFigures sum;
  AddressSpan span;
  void add(const CapacityRaw& raw) {
    span.add(raw);
    const CapacityFigures f = capacity_figures(raw);
    ++rounds;
    fill_only = raw.fill_only;
    sum.utilization += f.utilization;
    sum.overhead_bytes += f.overhead_bytes;
    sum.addr_range_ratio += f.addr_range_ratio;
    for (int k = 0; k < 3; ++k) sum.ext_frag[k] += f.ext_frag[k];
    sum.recovery += f.recovery;
    sum.recovery_allocs_per_s += f.recovery_allocs_per_s;
    sum.ext_frag_random += f.ext_frag_random;
  }
  void set_counters(benchmark::State& st) const {
    const double n = rounds;
    st.counters["utilization"] = sum.utilization / n;
    st.counters["overhead_bytes"] = sum.overhead_bytes / n;
    st.counters["addr_range_ratio"] = sum.addr_range_ratio / n;
    st.counters["addr_range_ratio_rounds"] = span.ratio();
    if (fill_only) return;  // capacity_fill measured nothing after the first fill
    st.counters["ext_frag"] = sum.ext_frag[0] / n;
    st.counters["ext_frag_4x"] = sum.ext_frag[1] / n;
    st.counters["ext_frag_8x"] = sum.ext_frag[2] / n;
    st.counters["ext_frag_random"] = sum.ext_frag_random / n;
    st.counters["recovery"] = sum.recovery / n;
    st.counters["recovery_allocs_per_s"] = sum.recovery_allocs_per_s / n;
  }
};

// printf figures over the rounds of a case: rates over the summed counts and
// times, per-round counts as means, bytes_per_line over the rounds that lost lines.
struct PrintfSums {
  int rounds = 0;
  PrintfRaw sum;
  double bytes_per_line = 0;
  int full_rounds = 0;
  std::uint64_t garbled = 0;
  void add(const PrintfRaw& r) {
    ++rounds;
    sum.calls += r.calls;
    sum.args = r.args;
    sum.ret_documented += r.ret_documented;
    sum.ret_negative += r.ret_negative;
    if (r.ret_other != 0) sum.ret_other = r.ret_other;
    sum.lines.delivered += r.lines.delivered;
    garbled += r.lines.garbled;
    sum.fifo_bytes = r.fifo_bytes;
    sum.kernel_seconds += r.kernel_seconds;
    sum.flush_seconds += r.flush_seconds;
    const PrintfFigures f = printf_figures(r);
    if (f.bytes_per_line > 0) {
      bytes_per_line += f.bytes_per_line;
      ++full_rounds;
    }
  }
  void set_counters(benchmark::State& st) const {
    const PrintfFigures f = printf_figures(sum);
    const double n = rounds;
    st.counters["printf_per_s"] = f.printf_per_s;
    st.counters["lines_delivered"] = f.lines_delivered / n;
    st.counters["lines_lost"] = f.lines_lost / n;
    st.counters["lines_garbled"] = static_cast<double>(garbled) / n;
    st.counters["loss_rate"] = f.loss_rate;
    if (full_rounds > 0) st.counters["bytes_per_line"] = bytes_per_line / full_rounds;
    st.counters["ret_documented"] = f.ret_documented;
    if (sum.ret_other != 0) st.counters["ret_other_value"] = static_cast<double>(sum.ret_other);
    st.counters["flush_lines_per_s"] = f.flush_lines_per_s;
    st.counters["fifo_bytes"] = static_cast<double>(sum.fifo_bytes);
  }
};

void set_latency_counters(benchmark::State& st, const char* prefix, std::vector<double>& samples) {
  const Percentiles p = percentiles(samples);
  st.counters[fmt::format("{}lat_p50_ns", prefix)] = p.p50;
  st.counters[fmt::format("{}lat_p90_ns", prefix)] = p.p90;
  st.counters[fmt::format("{}lat_p99_ns", prefix)] = p.p99;
  st.counters[fmt::format("{}lat_max_ns", prefix)] = p.max;
}

// The capacity probe after a case is the one before the next case on the same
// heap: nothing runs on the heap in between. Forgotten on a reset or an error.
struct CapacityMemo {
  std::uint64_t heap = 0;
  std::optional<std::uint64_t> bytes;
};
CapacityMemo g_capacity;

// Every round a case measured, and what the GPU said around them.
struct Measured {
  RoundSeries series;
  Tally total;
  std::vector<double> alloc_lat, free_lat;
  CapacitySums capacity;
  PrintfSums printf_sums;
  int throttled_rounds = 0;  // in batches under kMinClockFraction of the rated SM clock: dropped
  int unheld_rounds = 0;     // in batches whose hold broke (launch gaps timed): dropped
  double clock_x_time = 0, clock_time = 0;  // SM clock weighted by the batches' timed seconds
  double min_clock_mhz = 0;                 // the slowest dropped batch, for the error message
  double stride_sum = 0;                    // size_map: median strides of the batches' last rounds
  int strides = 0;
  Verdict verdict = Verdict::more;
  bool warmed = false;  // the first full round has been seen (counted or discarded)

  void accept(const IterationResult& r, const std::vector<double>& rounds, double clock_mhz) {
    for (double t : rounds) series.add(t);
    total += r.tally;
    append(alloc_lat, r.alloc_latency_ns);
    append(free_lat, r.free_latency_ns);
    if (r.capacity) capacity.add(*r.capacity);
    if (r.printf_raw) printf_sums.add(*r.printf_raw);
    if (r.block_addresses.size() >= 2) {
      std::vector<std::uint64_t> a = r.block_addresses;
      stride_sum += median_stride(a);
      ++strides;
    }
    if (clock_mhz > 0) {
      const double t = r.timed_seconds;
      clock_x_time += clock_mhz * t;
      clock_time += t;
    }
  }
  double sm_clock_mhz() const { return clock_time > 0 ? clock_x_time / clock_time : 0; }
};

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
    round.begin_batch();
    backend.begin_batch(round.enqueues_only());
    for (int i = 0; i < k; ++i) enqueue_round(round, warmup ? -1 : first_index + i);
    BatchTiming timing;
    IterationResult r;
    {
      nvtx::range v{nvtx::phase(nvtx::Phase::verify, first_index)};
      timing = backend.end_batch();
      r = round.collect();
    }
    wall_per_round = std::chrono::duration<double>(clock::now() - tb).count() / k;
    if (auto why = r.problem(cfg.kernel_budget_s); !why.empty()) return why;
    std::vector<double> rounds = r.round_seconds;
    if (rounds.empty()) rounds.push_back(r.timed_seconds);
    if (!m.warmed) {
      m.warmed = true;
      if (fixed_rounds == 0 && first_round_is_warmup(rounds.front(), rule)) continue;
    }
    const bool slow = throttled(timing.sm_clock_mhz, rated);
    if (slow || timing.hold_broke) {
      (slow ? m.throttled_rounds : m.unheld_rounds) += k;
      if (slow && (m.min_clock_mhz == 0 || timing.sm_clock_mhz < m.min_clock_mhz)) m.min_clock_mhz = timing.sm_clock_mhz;
    } else {
      m.accept(r, rounds, timing.sm_clock_mhz);
      measured += static_cast<int>(rounds.size());
    }
    if (fixed_rounds > 0) {
      if (measured >= fixed_rounds) return {};
      if (elapsed() < 10 * rule.max_time_s) continue;
    } else {
      m.verdict = judge(m.series, elapsed(), rule);
      if (m.verdict != Verdict::more) return {};
      if (m.series.rounds() > 0 || elapsed() < rule.max_time_s) continue;
    }
    // Out of time with no round counted: every batch was dropped.
    if (m.throttled_rounds > 0) {
      return fmt::format("the SM clock stayed under {:.0f} % of the rated {:.0f} MHz in every round ({} rounds, slowest "
                         "{:.0f} MHz): the GPU is throttling; no figure is published",
                         100 * kMinClockFraction, rated, m.throttled_rounds, m.min_clock_mhz);
    }
    return fmt::format("every batch's launch hold timed out before its rounds were enqueued ({} rounds): the "
                       "host could not keep up, so launch gaps would be timed",
                       m.unheld_rounds);
  }
}

void set_measurement_counters(benchmark::State& st, const Measured& m, bool fixed) {
  st.counters["rounds"] = m.series.rounds();
  if (m.series.rounds() >= 2) st.counters["noise"] = m.series.noise();
  if (!fixed) st.counters["converged"] = m.verdict == Verdict::converged ? 1 : 0;
  st.counters["timed_s"] = m.series.total();
  if (m.sm_clock_mhz() > 0) st.counters["sm_clock_mhz"] = m.sm_clock_mhz();
  if (m.throttled_rounds > 0) st.counters["throttled_rounds"] = m.throttled_rounds;
  if (m.unheld_rounds > 0) st.counters["unheld_rounds"] = m.unheld_rounds;
}

void run_case(benchmark::State& st, const Case& c, const std::string& name, const RunConfig& cfg) {
  nvtx::range case_range{nvtx::case_range(name.c_str(), c.threads)};
  Backend& backend = *cfg.backend;
  try {
    Backend::Heap heap;
    {
      nvtx::range r{nvtx::phase(nvtx::Phase::heap, static_cast<std::int64_t>(c.heap / kMiB))};
      heap = backend.ensure_heap(c.heap);
      if (heap.reset) {
        nvtx::mark(fmt::format("device reset for a {} MiB heap", c.heap / kMiB).c_str(), nvtx::Phase::heap);
      }
    }
    if (heap.reset || g_capacity.heap != c.heap) g_capacity = CapacityMemo{c.heap, std::nullopt};
    std::unique_ptr<Round> round = backend.make_round(c, cfg.kernel_budget_s);
    const std::uint64_t capacity_before = g_capacity.bytes ? *g_capacity.bytes : probe(backend, heap.reported);
    g_capacity.bytes.reset();  // taken: an error before the probe after the case leaves nothing to trust
    if (round->small_warmup()) {
      // The first launch of each kernel pays for loading it, and the first calls
      // after a reset set the heap up: a round of at most kWarmupThreads threads
      // pays both for little GPU time, whatever the case's size.
      nvtx::range r{nvtx::phase(nvtx::Phase::warmup)};
      Case small = c;
      small.threads = std::min<std::uint64_t>(c.threads, kWarmupThreads);
      std::unique_ptr<Round> warm = backend.make_round(small, cfg.kernel_budget_s);
      const auto why = run_round(*warm, -1).problem(cfg.kernel_budget_s);
      if (!why.empty()) {
        st.SkipWithError(("warm-up: " + why).c_str());
        return;
      }
    }
    Measured m;
    const bool fixed = cfg.fixed_iterations > 0;
    for (auto _ : st) {
      // One iteration per case (heapbench passes --benchmark_min_time so), or
      // --profile's fixed count, one round each.
      const RoundSeries before = m.series;
      if (auto why = measure(backend, *round, cfg, fixed ? 1 : 0, m); !why.empty()) {
        st.SkipWithError(why.c_str());
        break;
      }
      const double seconds = m.series.total() - before.total();
      const int rounds = m.series.rounds() - before.rounds();
      st.SetIterationTime(rounds > 0 ? seconds / rounds : 0.0);
    }
    if (st.error_occurred()) return;
    const std::uint64_t capacity_after = probe(backend, heap.reported);
    if (const auto why = capacity_problem(capacity_before, capacity_after); !why.empty()) {
      st.SkipWithError(why.c_str());
      return;
    }
    g_capacity.bytes = capacity_after;
    set_measurement_counters(st, m, fixed);
    if (m.printf_sums.rounds > 0) {  // not the heap: its own vocabulary
      m.printf_sums.set_counters(st);
      return;
    }
    const Figures f = compute_figures(m.total);
    st.counters["allocs_per_s"] = f.allocs_per_s;
    if (round->reports_frees()) st.counters["frees_per_s"] = f.frees_per_s;
    st.counters["bytes_per_s"] = f.bytes_per_s;
    if (m.capacity.rounds > 0) {
      m.capacity.set_counters(st);
    } else {
      st.counters["fail_rate"] = f.fail_rate;
    }
    st.counters["heap_bytes"] = static_cast<double>(heap.reported);
    if (round->times_use()) st.counters["use_bytes_per_s"] = f.use_bytes_per_s;
    if (m.strides > 0) st.counters["stride_bytes"] = m.stride_sum / m.strides;
    if (round->has_latency()) {
      set_latency_counters(st, "", m.alloc_lat);
      set_latency_counters(st, "free_", m.free_lat);
    }
  } catch (const DeviceError& e) {
    // The context may hold a sticky error: make the next case start from a reset,
    // or, in a child of isolation, from a new process.
    g_capacity = CapacityMemo{};
    backend.invalidate();
    st.SkipWithError(e.what());
    if (cfg.end_on_device_error) end_process_after_this_case();
  } catch (const std::exception& e) {
    g_capacity = CapacityMemo{};
    st.SkipWithError(e.what());
  }
}

}  // namespace

namespace {
std::atomic<bool> g_end_after_case{false};
}  // namespace

bool device_error_ends_process() { return g_end_after_case.load(); }
void end_process_after_this_case() { g_end_after_case.store(true); }

std::string benchmark_name(const Case& c, const RunConfig& cfg) {
  std::string name = case_name(c);
  if (cfg.fixed_iterations > 0) name += fmt::format("/iterations:{}", cfg.fixed_iterations);
  return name + kManualTimeSuffix;
}

void register_cases(const std::vector<Case>& cases, const RunConfig& cfg) {
  for (const Case& c : cases) {
    const std::string name = benchmark_name(c, cfg);
    auto* b = benchmark::RegisterBenchmark(case_name(c).c_str(),
                                           [c, name, cfg](benchmark::State& st) { run_case(st, c, name, cfg); });
    b->UseManualTime()->Unit(benchmark::kMillisecond);
    if (cfg.fixed_iterations > 0) b->Iterations(cfg.fixed_iterations);
  }
}

}  // namespace heapbench
