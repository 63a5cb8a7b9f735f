#include "heapbench/benchmark_flags.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "heapbench/case.hpp"
#include "heapbench/options.hpp"

namespace heapbench {
namespace {

// A validator whose message names the value (CLI11 prefixes the flag).
CLI::Validator one_of(std::vector<std::string> allowed) {
  return CLI::Validator(
      [allowed](std::string& value) -> std::string {
        if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return {};
        return fmt::format("'{}' is not one of {}", value, fmt::join(allowed, ", "));
      },
      "");
}

// A whole number of at least 1, converted as CLI11 converts the option itself.
CLI::Validator at_least_one() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        int n = 0;
        if (CLI::detail::lexical_cast(value, n) && n >= 1) return {};
        return fmt::format("'{}' is not a whole number of at least 1", value);
      },
      "");
}

}  // namespace

void refuse_empty_values(const std::vector<std::string>& args) {
  for (const auto& a : args) {
    if (a == "--") break;  // what follows is not a flag
    if (a.size() > 3 && a.compare(0, 2, "--") == 0 && a.back() == '=' && a.find('=') == a.size() - 1) {
      throw UsageError(fmt::format("{}: empty value (an unset shell variable?); give a value or leave the flag out", a));
    }
  }
}

void refuse_flags_taken_as_values(const CLI::App& app) {
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& value : opt->results()) {
      if (value.size() > 2 && value.compare(0, 2, "--") == 0) {
        throw UsageError(fmt::format("{}: no value given (it took the next flag, '{}', as its value); give "
                                     "{}=VALUE",
                                     opt->get_name(), value, opt->get_name()));
      }
    }
  }
}

double kernel_budget_seconds(double ms, const std::string& typed) {
  if (!(ms > 0.0) || !std::isfinite(ms)) {
    throw UsageError(fmt::format("--kernel-budget-ms={}: must be > 0 and finite", typed));
  }
  return ms / 1000.0;
}

void check_whole_mib(const std::string& flag, const std::string& text, std::uint64_t bytes) {
  if (bytes % kMiB != 0) {
    throw UsageError(fmt::format("{}={}: {} bytes is not a whole number of MiB", flag, text, bytes));
  }
}

BenchmarkFlags check_benchmark_flags(const std::vector<std::string>& args) {
  CLI::App app{"Google Benchmark's flags that heapbench checks"};
  BenchmarkFlags f;
  std::string time_unit;
  // Google Benchmark takes the last of a repeated flag; so does this check.
  auto last = CLI::MultiOptionPolicy::TakeLast;
  app.add_option("--benchmark_format", f.format)->check(one_of({"console", "json", "csv"}))->multi_option_policy(last);
  app.add_option("--benchmark_time_unit", time_unit)->check(one_of({"ns", "us", "ms", "s"}))->multi_option_policy(last);
  // Google Benchmark runs no case at all for 0 or fewer repetitions.
  app.add_option("--benchmark_repetitions", f.repetitions)->check(at_least_one())->multi_option_policy(last);
  app.allow_extras();
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them reversed
  if (!reversed.empty()) reversed.pop_back();                      // argv[0]
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }
  return f;
}

}  // namespace heapbench
