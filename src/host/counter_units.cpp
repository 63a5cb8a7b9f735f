#include "heapbench/counter_units.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <utility>

namespace heapbench {
namespace {

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

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

}  // namespace

CounterUnit counter_unit(std::string_view name) {
  // Ratios of two like quantities (docs/metrics.md); addr_range_ratio is not
  // one of them: it is 1 at best and unbounded above.
  constexpr std::array<std::string_view, 10> fractions = {"noise",   "fail_rate",      "utilization", "ext_frag",
                                                          "ext_frag_4x", "ext_frag_8x", "ext_frag_random", "recovery",
                                                          "loss_rate",   "ret_documented"};
  for (auto f : fractions) {
    if (name == f) return CounterUnit::fraction;
  }
  if (ends_with(name, "bytes_per_s")) return CounterUnit::bytes_per_s;
  if (ends_with(name, "_per_s")) return CounterUnit::per_s;
  if (ends_with(name, "_bytes") || name == "bytes_per_line") return CounterUnit::bytes;
  if (ends_with(name, "_ns")) return CounterUnit::nanoseconds;
  if (ends_with(name, "_s")) return CounterUnit::seconds;
  if (ends_with(name, "_mhz")) return CounterUnit::megahertz;
  return CounterUnit::count;
}

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
