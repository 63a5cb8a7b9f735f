#include "plan/benchmark_flags.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <regex>
#include <stdexcept>

#include "heapbench/case.hpp"
#include "plan/help_formatter.hpp"
#include "plan/options.hpp"
#include "plan/suggest.hpp"
#include "cases/parse.hpp"

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

// A whole number, as Google Benchmark reads --v (it prints its own complaint otherwise).
CLI::Validator whole_number() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        int n = 0;
        if (CLI::detail::lexical_cast(value, n)) return {};
        return fmt::format("'{}' is not a whole number", value);
      },
      "");
}

// key=value pairs, comma-separated, as Google Benchmark reads --benchmark_context.
CLI::Validator key_value_pairs() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        for (const std::string& item : split_list(value)) {
          const std::size_t eq = item.find('=');
          if (eq == std::string::npos || eq == 0) {
            return fmt::format("'{}' is not key=value (pairs separated by commas)", item);
          }
        }
        return {};
      },
      "");
}

// Google Benchmark's reading of a boolean flag's value (IsTruthyFlagValue):
// no value is true; 0, f, n, false, no, off (any case) are false.
bool truthy(std::string_view value) {
  std::string v(value);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  return !(v == "0" || v == "f" || v == "n" || v == "false" || v == "no" || v == "off");
}

// The spellings Google Benchmark gives true and false. It reads any other word
// as true (IsTruthyFlagValue), so "=maybe" kept only the aggregates.
constexpr std::string_view kTrueWords[] = {"true", "yes", "on", "t", "y", "1"};
constexpr std::string_view kFalseWords[] = {"false", "no", "off", "f", "n", "0"};

// Refuses `value` of `flag` unless it is one of those spellings (any case), or `also`.
void refuse_non_boolean(std::string_view flag, const std::string& value, std::string_view also = {}) {
  std::string v(value);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  const auto in = [&](const auto& words) { return std::find(std::begin(words), std::end(words), v) != std::end(words); };
  if (in(kTrueWords) || in(kFalseWords) || (!also.empty() && v == also)) return;
  throw UsageError(fmt::format("{}={}: not {}true or false (Google Benchmark reads {} as true and {} as false)", flag,
                               value, also.empty() ? "" : fmt::format("{}, ", also), fmt::join(kTrueWords, ", "),
                               fmt::join(kFalseWords, ", ")));
}

// Google Benchmark's boolean flags that heapbench passes on.
constexpr std::string_view kBooleanFlags[] = {"--benchmark_report_aggregates_only",
                                              "--benchmark_display_aggregates_only", "--benchmark_counters_tabular"};

constexpr std::string_view kRandomInterleaving = "--benchmark_enable_random_interleaving";

}  // namespace

const std::vector<GoogleBenchmarkFlag>& google_benchmark_flags() {
  static const std::vector<GoogleBenchmarkFlag> flags = {
      {"--benchmark_filter", "=<regex>",
       "Run only the cases whose name matches (e.g. '^per_thread/malloc/size:64/'); a filter that matches no case "
       "is refused",
       ""},
      {"--benchmark_repetitions", "=<n>",
       "Measure each case n times (at least 1); each repetition is a whole measurement, and mean, median, stddev "
       "and cv follow",
       ""},
      {"--benchmark_report_aggregates_only", "={true|false}",
       "With repetitions: only the mean, median, stddev and cv, on the console and in the results file", ""},
      {"--benchmark_display_aggregates_only", "={true|false}",
       "With repetitions: only the aggregates on the console; the results file keeps every repetition", ""},
      {"--benchmark_format", "=<console|json|csv>",
       "What stdout gets (default console); csv only where one process runs every case (--no-isolate, or no "
       "--benchmark_out)",
       ""},
      {"--benchmark_color", "={auto|true|false}", "Colour in the console table (default auto: when stdout is a terminal)",
       ""},
      {"--benchmark_counters_tabular", "={true|false}", "Counters in columns of the console table, one per counter",
       ""},
      {"--benchmark_context", "=<key>=<value>,...", "Extra key=value pairs for the results file's context", ""},
      {"--v", "=<verbosity>", "Google Benchmark's own log verbosity", ""},
      {"--benchmark_min_time", "=<time>", "",
       "heapbench decides how long each case runs by its noise; use --max-noise, --min-rounds and --max-time"},
      {"--benchmark_min_warmup_time", "=<time>", "",
       "heapbench warms each case up itself (a small round that loads the kernels and sets the heap up, and a first "
       "full round left uncounted when rounds are short)"},
      {kRandomInterleaving, "={true|false}", "",
       "it runs the cases in a random order, which breaks the heap-major order: each change of heap size costs a "
       "device reset; --benchmark_repetitions repeats in order"},
      {"--benchmark_time_unit", "={ns|us|ms|s}", "",
       "every case reports its GPU time per round in ms, and each counter carries its own unit"},
      {"--benchmark_perf_counters", "=<counter>,...", "",
       "it counts host CPU events (libpfm), and heapbench's work is on the GPU"},
  };
  return flags;
}

std::string_view flag_name(std::string_view arg) { return arg.substr(0, arg.find('=')); }

const GoogleBenchmarkFlag* find_google_benchmark_flag(std::string_view name) {
  for (const auto& f : google_benchmark_flags()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

void refuse_refused_flag(std::string_view arg) {
  const std::string_view name = flag_name(arg);
  const GoogleBenchmarkFlag* f = find_google_benchmark_flag(name);
  if (f == nullptr || f->refused.empty()) return;
  const bool has_value = name.size() < arg.size();
  if (name == kRandomInterleaving && has_value) {
    const std::string value(arg.substr(name.size() + 1));
    refuse_non_boolean(name, value);
    if (!truthy(value)) return;
  }
  throw UsageError(fmt::format("{}: refused: {}", arg, f->refused));
}

namespace {

// CLI11's "Could not convert: --max-noise = abc" as heapbench says a bad value: the flag
// whose value is not a number of its type, "--max-noise=abc: not a number". CLI11's own
// message where no value of a numeric option fails to convert (one out of range).
std::string conversion_message(const CLI::App& app, const CLI::ConversionError& e) {
  for (const CLI::Option* opt : app.get_options()) {
    const std::string type = opt->get_type_name();
    const bool is_unsigned = type.rfind("UINT", 0) == 0;
    const bool is_whole = is_unsigned || type.rfind("INT", 0) == 0;
    if (!is_whole && type.rfind("FLOAT", 0) != 0) continue;
    for (const std::string& value : opt->results()) {
      unsigned long long u = 0;
      long long i = 0;
      double d = 0;
      const bool converts = is_unsigned ? CLI::detail::lexical_cast(value, u)
                            : is_whole  ? CLI::detail::lexical_cast(value, i)
                                        : CLI::detail::lexical_cast(value, d);
      if (!converts) {
        return fmt::format("{}={}: not {}", opt->get_name(), value,
                           is_unsigned ? "a whole number of at least 0" : is_whole ? "a whole number" : "a number");
      }
    }
  }
  return e.what();
}

}  // namespace

void parse_argv(CLI::App& app, int argc, const char* const* argv) {
  std::vector<std::string> args;
  for (int i = argc - 1; i >= 1; --i) args.emplace_back(argv[i]);  // CLI11 takes them reversed
  // A subcommand that takes its line whole (CLI11's prefix command: `heapbench
  // replay`) leaves it to be judged where it passes it on.
  const std::vector<CLI::App*> subs = app.get_subcommands({});
  const bool passed_on = argc > 1 && std::any_of(subs.begin(), subs.end(), [&](const CLI::App* sub) {
                           return !sub->get_disabled() && sub->get_prefix_command() && sub->check_name(argv[1]);
                         });
  if (!passed_on) refuse_empty_values({args.rbegin(), args.rend()});
  try {
    app.parse(args);
  } catch (const CLI::ConversionError& e) {
    throw UsageError(conversion_message(command_of(app), e));
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }
  const CLI::App& command = command_of(app);
  refuse_flags_taken_as_values(command);
  refuse_repeated_options(command);
}

void refuse_extras(const CLI::App& app) {
  for (const std::string& a : app.remaining()) {
    if (a.size() > 1 && a[0] == '-') {
      std::vector<std::string> known;
      for (const CLI::Option* opt : app.get_options()) {
        if (opt->get_group().empty()) continue;  // internal
        for (const auto& n : opt->get_lnames()) known.push_back("--" + n);
      }
      throw UsageError(fmt::format("{}: unknown flag{}", a, did_you_mean(a.substr(0, a.find('=')), known)));
    }
    throw UsageError(fmt::format("'{}': unexpected argument (flags start with --)", a));
  }
}

const CLI::App& command_of(const CLI::App& app) {
  const std::vector<CLI::App*> got = app.get_subcommands();  // those the line named, in order
  return got.empty() ? app : command_of(*got.front());
}

std::string help_of(const CLI::App& app) {
  std::string above;  // the names of the commands above it: "heapbench" for `heapbench advise`
  for (const CLI::App* a = app.get_parent(); a != nullptr; a = a->get_parent()) {
    above = above.empty() ? a->get_name() : a->get_name() + " " + above;
  }
  return app.help(above);
}

void refuse_empty_values(const std::vector<std::string>& args) {
  for (const auto& a : args) {
    if (a == "--") break;  // what follows is not a flag
    if (a.size() > 3 && a.compare(0, 2, "--") == 0 && a.back() == '=' && a.find('=') == a.size() - 1) {
      throw UsageError(fmt::format("{}: empty value (an unset shell variable?); give a value or leave the flag out", a));
    }
  }
}

void add_subcommand_flags(CLI::App& app, bool& help, int& device) {
  allow_repeats_to_be_judged(app);
  app.set_help_flag();
  app.add_flag("-h,--help", help, "Print these flags and exit");
  app.add_option("--device", device, "CUDA device index (default 0)");
}

void allow_repeats_to_be_judged(CLI::App& app) {
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

void refuse_repeated_options(const CLI::App& app) {
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_expected_min() == 0 || opt->results().size() < 2) continue;  // a flag, or given once
    if (opt->get_multi_option_policy() == CLI::MultiOptionPolicy::TakeAll) continue;  // made to repeat (--axis)
    if (is_checked_benchmark_flag(*opt)) continue;  // Google Benchmark's: the last one counts
    std::vector<std::string> given;
    for (const std::string& v : opt->results()) given.push_back(fmt::format("{}={}", opt->get_name(), v));
    throw UsageError(fmt::format("{}: given {} times; give it once (several values go in one, comma-separated)",
                                 fmt::join(given, " and "), given.size()));
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

std::vector<std::uint64_t> whole_mib_list(const std::string& flag, const std::string& text) {
  std::vector<std::uint64_t> sizes;
  try {
    if (text.empty()) throw std::invalid_argument("empty list");
    // Each item a heap size: a bare number is MiB (parse_heap_size), as case names print it.
    for (std::size_t start = 0;;) {
      const std::size_t comma = text.find(',', start);
      const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (item.empty()) throw std::invalid_argument(fmt::format("'{}' has an empty item", text));
      sizes.push_back(parse_heap_size(item));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("{}={}: {}", flag, text, e.what()));
  }
  for (const std::uint64_t bytes : sizes) check_whole_mib(flag, text, bytes);
  return sizes;
}

std::string typed_value(const CLI::App& app, const std::string& flag) {
  const auto& given = app.get_option(flag)->results();
  return given.empty() ? std::string() : given.back();
}

const std::vector<std::string>& benchmark_formats() {
  static const std::vector<std::string> formats = {"console", "json", "csv"};
  return formats;
}

void add_benchmark_flags(CLI::App& app, BenchmarkFlagValues& v) {
  // Google Benchmark takes the last of a repeated flag; so does heapbench
  // (refuse_repeated_options lets these repeat). Their group's CLI11 help is
  // left out (help_formatter.hpp): --help lists them with Google Benchmark's
  // other flags (options.cpp's help_text), not as heapbench's.
  app.formatter(std::make_shared<RunHelpFormatter>());
  const auto add = [&](CLI::Option* opt) {
    opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)->group(kCheckedBenchmarkFlagsGroup);
  };
  add(app.add_option("--benchmark_format", v.flags.format)->check(one_of(benchmark_formats())));
  // Google Benchmark runs no case at all for 0 or fewer repetitions.
  add(app.add_option("--benchmark_repetitions", v.flags.repetitions)->check(at_least_one()));
  add(app.add_option("--benchmark_color", v.color));
  add(app.add_option("--v", v.verbosity)->check(whole_number()));
  add(app.add_option("--benchmark_context", v.context)->check(key_value_pairs()));
  for (std::size_t i = 0; i < std::size(kBooleanFlags); ++i) {
    add(app.add_flag(fmt::format("{}{{true}}", kBooleanFlags[i]), v.booleans[i]));
  }
}

bool is_checked_benchmark_flag(const CLI::Option& opt) { return opt.get_group() == kCheckedBenchmarkFlagsGroup; }

BenchmarkFlags benchmark_flags_of(const CLI::App& app, const BenchmarkFlagValues& v) {
  BenchmarkFlags f = v.flags;
  for (std::size_t i = 0; i < std::size(kBooleanFlags); ++i) {
    if (app.count(std::string(kBooleanFlags[i]))) refuse_non_boolean(kBooleanFlags[i], v.booleans[i]);
  }
  f.counters_tabular = app.count("--benchmark_counters_tabular") > 0 && truthy(v.booleans[2]);
  if (app.count("--benchmark_color")) refuse_non_boolean("--benchmark_color", v.color, "auto");
  if (v.color != "auto") f.color = truthy(v.color);
  return f;
}

std::vector<std::string> given_benchmark_flags(const CLI::App& app) {
  std::vector<std::string> args;
  for (const CLI::Option* opt : app.get_options()) {
    if (!is_checked_benchmark_flag(*opt) || opt->results().empty()) continue;
    args.push_back(fmt::format("{}={}", opt->get_name(), opt->results().back()));
  }
  return args;
}

std::vector<bool> filter_matches(const std::vector<std::string>& names, const std::string& filter) {
  // Mirrors Google Benchmark's FindBenchmarks: "" and "all" mean everything; a
  // leading '-' keeps the names that do not match; the rest is an extended regex.
  std::string spec = filter.empty() || filter == "all" ? "." : filter;
  bool negate = false;
  if (!spec.empty() && spec.front() == '-') {
    negate = true;
    spec.erase(0, 1);
  }
  std::regex re;
  try {
    re = std::regex(spec, std::regex::extended);
  } catch (const std::regex_error& e) {
    throw std::invalid_argument(fmt::format("--benchmark_filter='{}' is not a valid regex: {}", filter, e.what()));
  }
  std::vector<bool> out;
  out.reserve(names.size());
  for (const auto& name : names) out.push_back(std::regex_search(name, re) != negate);
  return out;
}

std::size_t count_matching(const std::vector<std::string>& names, const std::string& filter) {
  const auto m = filter_matches(names, filter);
  return static_cast<std::size_t>(std::count(m.begin(), m.end(), true));
}

}  // namespace heapbench
