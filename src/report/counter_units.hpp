#pragma once
// Every counter heapbench writes, declared once (kCounters in
// src/report/counter_units.cpp): its name, unit, direction and meaning. The
// console shows a counter in the unit a person reads (0.31 %, 8 MiB, 380 us,
// 3.44 M/s) from its declaration; every results file carries the declarations
// (its "counters" block, counter_declarations()), so plot/ reads them there;
// `heapbench counters` lists them. A new counter is one line of kCounters,
// the code that computes it and a test.
#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace heapbench {

enum class CounterUnit {
  count,        // rounds, converged, lines_*: the number itself
  fraction,     // fail_rate, noise, utilization, ext_frag*, recovery, loss_rate, ret_documented: shown in %
  bytes,        // *_bytes, bytes_per_line: B, KiB, MiB, GiB
  bytes_per_s,  // *bytes_per_s: KiB/s ... GiB/s
  per_s,        // *_per_s: k/s, M/s, G/s (decimal)
  seconds,      // *_s: s, ms, us, ns
  nanoseconds,  // *_ns: the same units, from ns
  megahertz,    // *_mhz
};

// Whether a larger value of a counter is better, worse, or neither (a limit, a count of rounds).
enum class Better { higher, lower, neither };

// The values a counter takes in a run's entry (the results schema checks them).
enum class CounterRange {
  nonnegative,   // >= 0
  any,           // any number
  fraction,      // 0 to 1
  at_most_one,   // <= 1, and may be below 0
  flag,          // 0 or 1
  at_least_one,  // >= 1 (rounds: a run counts at least one)
};

struct CounterDecl {
  std::string_view name;         // as the results file, the console and plot/ write it
  CounterUnit unit;              // how the console scales it
  std::string_view symbol;       // the unit as an axis writes it: "calls/s", "B", "ns"; "" for a ratio or a count
  Better better;
  std::string_view description;  // one line: what it measures (docs/metrics.md has the formula and why)
  CounterRange range = CounterRange::nonnegative;
  // An error result carries no figure; it may carry what the case cost before
  // it failed (its kernel's resources, its set-up, where its wall time went).
  bool kept_on_error = false;
  // The rate a pattern's figures and comparisons are drawn in (allocs_per_s;
  // printf_per_s; a workload's): at most one per pattern. The results file's
  // counters come in name order, so plot/ cannot take the first.
  bool headline = false;
};

// Every counter heapbench writes, in the order docs/metrics.md lists them.
const std::vector<CounterDecl>& counter_declarations();
// The declaration named `name`, or nullptr.
const CounterDecl* find_counter(std::string_view name);

// Every CounterUnit's key ("scale" in the "counters" block), in declaration order.
std::vector<std::string_view> counter_scale_keys();

// The results file's "counters" block: {name: {unit, scale, higher_is_better, description}}
// (higher_is_better null where neither), in declaration order.
nlohmann::ordered_json counters_json();

// The unit of a counter by its declaration; a name not declared is a count.
CounterUnit counter_unit(std::string_view name);
// "fraction", "bytes", ...: CounterUnit as the results file writes it ("scale").
std::string_view unit_key(CounterUnit unit);

// `value` of a counter in its unit, three significant digits: "0.313 %",
// "8 MiB", "380 us", "3.44 M/s"; "-" for a value that is not finite (the
// coefficient of variation of a counter whose mean is 0).
std::string format_counter(std::string_view name, double value);
std::string format_in(CounterUnit unit, double value);

}  // namespace heapbench
