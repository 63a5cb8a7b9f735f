#pragma once
// How the console shows a counter: in the unit a person reads (0.31 %, 8 MiB,
// 380 us, 3.44 M/s), from the counter's name. The results file keeps the raw
// value under the same name; only the console table uses these.
#include <string>
#include <string_view>

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

// The unit of a counter by its name (docs/metrics.md's vocabulary): the
// fractions by name, the rest by suffix; a name it does not know is a count.
CounterUnit counter_unit(std::string_view name);

// `value` of a counter in its unit, three significant digits: "0.313 %",
// "8 MiB", "380 us", "3.44 M/s"; "-" for a value that is not finite (the
// coefficient of variation of a counter whose mean is 0).
std::string format_counter(std::string_view name, double value);
std::string format_in(CounterUnit unit, double value);

}  // namespace heapbench
