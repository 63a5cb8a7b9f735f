#include "report/counter_units.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <utility>

#include "cases/enum_keys.hpp"

namespace heapbench {
namespace {

// Three significant digits, without trailing zeros: 8, 17.3, 0.313, 1.02e+03 never (callers scale first).
std::string sig3(double v) {
  if (v == 0) return "0";
  const int digits = static_cast<int>(std::floor(std::log10(std::fabs(v)))) + 1;
  const int decimals = std::max(0, 3 - digits);
  std::string s = fmt::format("{:.{}f}", v, decimals);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

// value scaled by `base` into the largest unit it reaches.
template <std::size_t N>
std::string scaled(double v, double base, const std::array<const char*, N>& units) {
  std::size_t i = 0;
  while (i + 1 < N && std::fabs(v) >= base) {
    v /= base;
    ++i;
  }
  return fmt::format("{} {}", sig3(v), units[i]);
}

std::string duration(double seconds) {
  const double a = std::fabs(seconds);
  if (a == 0 || a >= 1) return fmt::format("{} s", sig3(seconds));
  if (a >= 1e-3) return fmt::format("{} ms", sig3(seconds * 1e3));
  if (a >= 1e-6) return fmt::format("{} us", sig3(seconds * 1e6));
  return fmt::format("{} ns", sig3(seconds * 1e9));
}

using U = CounterUnit;
using B = Better;
using R = CounterRange;

// The declarations: one line per counter. A counter written without one shows
// as a plain number and is missing from the results file's "counters" block
// (tests/host/counter_units_test.cpp and tests/docs check both ways).
const std::vector<CounterDecl> kCounters = {
    // Throughput (every heap pattern)
    {"allocs_per_s", U::per_s, "calls/s", B::higher, "successful allocations per GPU second", R::nonnegative, false, true},
    {"frees_per_s", U::per_s, "calls/s", B::higher, "frees per GPU second"},
    {"bytes_per_s", U::bytes_per_s, "B/s", B::higher, "bytes allocated per GPU second"},
    {"fail_rate", U::fraction, "", B::lower, "share of allocation calls that returned NULL", R::fraction},
    {"heap_bytes", U::bytes, "B", B::neither, "heap limit the device applied"},
    {"peak_bytes", U::bytes, "B", B::neither, "bytes of blocks held live at a round's peak (max over batches)"},
    {"use_bytes_per_s", U::bytes_per_s, "B/s", B::higher, "bytes written and read back per GPU second"},
    // How long a case runs
    {"rounds", U::count, "rounds", B::neither, "rounds counted", R::at_least_one, true},
    {"noise", U::fraction, "", B::lower, "relative standard deviation of round times"},
    {"converged", U::count, "", B::neither, "stopping rule met (1) or time cap (0)", R::flag},
    {"timed_s", U::seconds, "s", B::neither, "GPU seconds in timed launches"},
    {"sm_clock_mhz", U::megahertz, "MHz", B::neither, "mean SM clock"},
    {"throttled_rounds", U::count, "rounds", B::lower, "rounds dropped: clock under 75 %"},
    {"unheld_rounds", U::count, "rounds", B::lower, "rounds dropped: hold timed out"},
    // Size classes
    {"stride_bytes", U::bytes, "B", B::lower, "bytes per block (median address stride)"},
    // Latency
    {"lat_p50_ns", U::nanoseconds, "ns", B::lower, "allocation latency, median"},
    {"lat_p90_ns", U::nanoseconds, "ns", B::lower, "allocation latency, p90"},
    {"lat_p99_ns", U::nanoseconds, "ns", B::lower, "allocation latency, p99"},
    {"lat_max_ns", U::nanoseconds, "ns", B::lower, "allocation latency, max"},
    {"free_lat_p50_ns", U::nanoseconds, "ns", B::lower, "free latency, median"},
    {"free_lat_p90_ns", U::nanoseconds, "ns", B::lower, "free latency, p90"},
    {"free_lat_p99_ns", U::nanoseconds, "ns", B::lower, "free latency, p99"},
    {"free_lat_max_ns", U::nanoseconds, "ns", B::lower, "free latency, max"},
    // Capacity
    {"utilization", U::fraction, "", B::higher, "share of the heap holding requested bytes"},
    {"overhead_bytes", U::bytes, "B", B::lower, "bytes per block beyond the request", R::any},
    {"addr_range_ratio", U::count, "", B::lower, "address range / bytes asked"},
    {"addr_range_ratio_rounds", U::count, "", B::lower, "address range over rounds / bytes asked"},
    {"ext_frag", U::fraction, "", B::lower, "external fragmentation, 2x blocks", R::at_most_one},
    {"ext_frag_4x", U::fraction, "", B::lower, "external fragmentation, 4x blocks", R::at_most_one},
    {"ext_frag_8x", U::fraction, "", B::lower, "external fragmentation, 8x blocks", R::at_most_one},
    {"recovery", U::fraction, "", B::higher, "blocks had again after freeing all / first fill"},
    {"recovery_allocs_per_s", U::per_s, "calls/s", B::higher, "refill allocations per GPU second"},
    {"ext_frag_random", U::fraction, "", B::lower, "external fragmentation after a random free", R::at_most_one},
    // printf
    {"printf_per_s", U::per_s, "calls/s", B::higher, "printf calls per GPU second", R::nonnegative, false, true},
    {"lines_delivered", U::count, "lines", B::higher, "lines delivered per round"},
    {"lines_lost", U::count, "lines", B::lower, "lines lost per round"},
    {"lines_garbled", U::count, "lines", B::lower, "lines garbled per round"},
    {"loss_rate", U::fraction, "", B::lower, "share of printf lines lost", R::fraction},
    {"bytes_per_line", U::bytes, "B", B::lower, "FIFO bytes per delivered line"},
    {"ret_documented", U::fraction, "", B::higher, "share of printf calls returning the documented value", R::fraction},
    {"ret_other_value", U::count, "calls", B::lower, "printf calls returning another value"},
    {"flush_lines_per_s", U::per_s, "lines/s", B::higher, "lines drained per host second"},
    {"fifo_bytes", U::bytes, "B", B::neither, "printf FIFO limit applied"},
    // What calling the allocator costs: the allocate phase's kernels, the allocator's set-up
    {"regs_per_thread", U::count, "registers", B::lower, "registers per thread of the allocating kernel (most)", R::nonnegative, true},
    {"local_bytes_per_thread", U::bytes, "B", B::lower, "local memory per thread of the allocating kernel (most)", R::nonnegative, true},
    {"stack_bytes_per_thread", U::bytes, "B", B::neither, "per-thread stack CUDA reserved (cudaLimitStackSize)", R::nonnegative, true},
    {"occupancy", U::fraction, "", B::higher, "resident threads per SM / the SM's most, allocating kernel", R::nonnegative, true},
    {"setup_s", U::seconds, "s", B::lower, "seconds to set the case's allocator and buffers up", R::nonnegative, true},
    {"first_use_s", U::seconds, "s", B::lower, "wall seconds of the case's first (warm-up) round", R::nonnegative, true},
    {"reset_s", U::seconds, "s", B::lower, "seconds of one reset of the allocator's state", R::nonnegative, true},
    // Where a case's wall time went (the run's budget line)
    {"heap_s", U::seconds, "s", B::lower, "wall seconds setting the heap limit (a device reset where it changed)", R::nonnegative, true},
    {"probe_s", U::seconds, "s", B::lower, "wall seconds of the capacity probes around the case", R::nonnegative, true},
    {"measuring_s", U::seconds, "s", B::lower,
     "wall seconds of capacity's fragmentation and recovery fills and printf's drain (in the measuring loop)", R::nonnegative, true},
    {"loop_s", U::seconds, "s", B::lower, "wall seconds of the measuring loop (timed launches and between them)", R::nonnegative, true},
    {"meter_s", U::seconds, "s", B::lower, "wall seconds reading the energy meter", R::nonnegative, true},
    {"case_wall_s", U::seconds, "s", B::lower, "wall seconds of the whole case", R::nonnegative, true},
    // Workloads (docs/workloads.md)
    {"outputs_per_s", U::per_s, "outputs/s", B::higher, "outputs obtained per second of round time", R::nonnegative, false, true},
    {"output_bytes_per_s", U::bytes_per_s, "B/s", B::higher, "output bytes obtained per second of round time"},
    {"produce_s", U::seconds, "s", B::lower, "seconds per round of the producing phase"},
    {"release_s", U::seconds, "s", B::lower, "seconds per round of the releasing phase"},
    {"init_s", U::seconds, "s", B::lower, "seconds per round of the graph's initialisation"},
    {"update_s", U::seconds, "s", B::lower, "seconds per round of the graph's edge updates"},
    {"edges_per_s", U::per_s, "edges/s", B::higher, "edges placed per second of initialisation"},
    {"edge_updates_per_s", U::per_s, "updates/s", B::higher, "edge insertions and deletions per second"},
    {"insert_s", U::seconds, "s", B::lower, "seconds per round of the hash table's inserts"},
    {"delete_s", U::seconds, "s", B::lower, "seconds per round of the hash table's deletes"},
    {"inserts_per_s", U::per_s, "inserts/s", B::higher, "hash inserts per second of their launch", R::nonnegative, false, true},
    {"deletes_per_s", U::per_s, "deletes/s", B::higher, "hash deletes per second of their launch"},
    // Replay of a recorded trace (docs/trace.md)
    {"launch_s", U::seconds, "s", B::lower, "seconds per replayed launch"},
    {"floor_s", U::seconds, "s", B::neither, "seconds per launch of the same walk with no allocator (the replay's own)"},
    {"net_launch_s", U::seconds, "s", B::lower, "seconds per replayed launch less floor_s: the allocator's", R::any},
    {"empty_launch_s", U::seconds, "s", B::neither, "seconds per launch of an empty kernel of each launch's grid and block"},
    {"new_nulls", U::count, "calls", B::lower, "NULLs per round where the recording had a block"},
    {"unmatched_releases", U::count, "calls", B::neither, "the trace's releases of an address no recorded block held (not replayed)"},
    // Energy over each case's measured section, where NVML reads it
    {"energy_s", U::seconds, "s", B::neither, "seconds from the energy counter's first read to the section's end"},
    {"energy_resolved", U::count, "", B::neither, "section spans 100 energy-counter updates (1) or not (0)", R::flag},
    {"energy_j", U::count, "J", B::neither, "GPU energy over the measured section"},
    {"avg_power_w", U::count, "W", B::neither, "mean GPU power over the measured section"},
    {"energy_per_m_allocs_j", U::count, "J", B::lower, "GPU energy per million allocation calls"},
    {"power_w", U::count, "W", B::neither, "NVML power reading after the section"},
    {"clock_event_reasons", U::count, "", B::neither, "NVML clock-event reasons (bitmask)"},
};

}  // namespace

const std::vector<CounterDecl>& counter_declarations() { return kCounters; }

const CounterDecl* find_counter(std::string_view name) {
  for (const CounterDecl& d : kCounters) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

nlohmann::ordered_json counters_json() {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const CounterDecl& d : kCounters) {
    nlohmann::ordered_json better = nullptr;
    if (d.better != B::neither) better = d.better == B::higher;
    auto& decl = out[std::string(d.name)] = {{"unit", d.symbol},
                                             {"scale", unit_key(d.unit)},
                                             {"higher_is_better", better},
                                             {"description", d.description}};
    if (d.headline) decl["headline"] = true;
  }
  return out;
}

CounterUnit counter_unit(std::string_view name) {
  const CounterDecl* d = find_counter(name);
  return d ? d->unit : CounterUnit::count;
}

constexpr EnumKey<CounterUnit> kUnitKeys[] = {
    {U::count, "count"},
    {U::fraction, "fraction"},
    {U::bytes, "bytes"},
    {U::bytes_per_s, "bytes_per_s"},
    {U::per_s, "per_s"},
    {U::seconds, "seconds"},
    {U::nanoseconds, "nanoseconds"},
    {U::megahertz, "megahertz"},
};
std::string_view unit_key(CounterUnit unit) { return key_of<kUnitKeys>(unit); }
std::vector<std::string_view> counter_scale_keys() { return keys_of<kUnitKeys>(); }

std::string format_in(CounterUnit unit, double v) {
  if (!std::isfinite(v)) return "-";
  switch (unit) {
    case CounterUnit::fraction:
      return fmt::format("{} %", sig3(100 * v));
    case CounterUnit::bytes:
      return scaled(v, 1024, std::array{"B", "KiB", "MiB", "GiB", "TiB"});
    case CounterUnit::bytes_per_s:
      return scaled(v, 1024, std::array{"B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s"});
    case CounterUnit::per_s:
      return scaled(v, 1000, std::array{"/s", "k/s", "M/s", "G/s", "T/s"});
    case CounterUnit::seconds:
      return duration(v);
    case CounterUnit::nanoseconds:
      return duration(v * 1e-9);
    case CounterUnit::megahertz:
      return fmt::format("{:.0f} MHz", v);
    case CounterUnit::count:
      break;
  }
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{:.0f}", v);
  return sig3(v);
}

std::string format_counter(std::string_view name, double value) { return format_in(counter_unit(name), value); }

}  // namespace heapbench
