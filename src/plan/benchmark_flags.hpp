#pragma once
// Google Benchmark's flags as heapbench sees them: the ones it passes on, the
// ones it refuses and why (one table, which --help, the checks and docs/cli.md
// follow), and checks on the command line that CLI11's and Google Benchmark's
// own parsing let through. The checks throw UsageError (options.hpp) naming
// the flag and value.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
class Option;
}

namespace heapbench {

// One Google Benchmark flag that reaches heapbench's command line.
struct GoogleBenchmarkFlag {
  std::string_view name;    // "--benchmark_filter"
  std::string_view value;   // "=<regex>", for --help
  std::string_view help;    // what it does under heapbench
  std::string_view refused; // why heapbench refuses it, or "" when it is passed on
};

// Every Google Benchmark flag heapbench knows of, passed on or refused, in
// --help's order. heapbench's own --benchmark_list_tests, --benchmark_out and
// --benchmark_out_format are its CLI11 options, not in here.
const std::vector<GoogleBenchmarkFlag>& google_benchmark_flags();

// The flag of the table named `name` (up to any '='), or nullptr.
const GoogleBenchmarkFlag* find_google_benchmark_flag(std::string_view name);

// "--flag=VALUE" -> "--flag"; "--flag" -> "--flag".
std::string_view flag_name(std::string_view arg);

// Refuses an argument naming a refused flag of the table (the message says
// why). --benchmark_enable_random_interleaving is refused unless it is false
// (and a value that is not true or false as Google Benchmark spells them).
void refuse_refused_flag(std::string_view arg);

// After CLI11 parsed `app`: refuses an option whose value begins with "--".
// Given without a value in the space form ("--benchmark_out --sizes=64"),
// CLI11 takes the next flag as its value: a file named "--sizes=64" was
// written and the default sizes ran.
void refuse_flags_taken_as_values(const CLI::App& app);

// Repeated options are kept for refuse_repeated_options to judge (CLI11 would
// refuse "--sizes=16 --sizes=32" as "At Most 1 required but received 2", the
// values unnamed): call on an app before adding its options.
void allow_repeats_to_be_judged(CLI::App& app);
// After parsing: refuses an option given more than once, naming every value
// typed ("--sizes=16 and --sizes=32: given 2 times; ..."), except an option
// made to repeat (MultiOptionPolicy::TakeAll: --axis KEY=VALUES, once per axis).
void refuse_repeated_options(const CLI::App& app);

// CLI11 over argv (argv[0] the program or subcommand) with the refusals it
// cannot make itself, every one a UsageError: an empty "--flag=", CLI11's own
// parse errors, a flag taken as a value, a repeated option. `app` may be a tree
// (heapbench's, bench/app.cpp): the checks and the names of a value that does
// not convert are those of the command that took the line (command_of).
// The one preamble of heapbench's, `heapbench advise`'s and `heapbench check`'s
// parsers.
void parse_argv(CLI::App& app, int argc, const char* const* argv);

// The rule for what CLI11 leaves over in a subcommand that takes none of
// Google Benchmark's flags (advise, check; the run passes them on,
// options.cpp): an unknown flag is refused with the closest of `app`'s own
// (its internal ones, group "", left out), a word as an unexpected argument.
void refuse_extras(const CLI::App& app);

// The command of `app`'s tree that took the command line once it parsed: its
// subcommand that got it (and so on down), else `app` itself.
const CLI::App& command_of(const CLI::App& app);

// What --help prints for `app`, a command of a tree or an app of its own:
// CLI11's help of it under its whole name ("Usage: heapbench advise ...").
std::string help_of(const CLI::App& app);

// A subcommand's -h/--help (its own flags only, not CLI11's help) and its
// --device: the flags `heapbench advise` and `heapbench check` share.
void add_subcommand_flags(CLI::App& app, bool& help, int& device);

// The value checks heapbench, `heapbench advise` and `heapbench check` share:
// a kernel budget in milliseconds must be above 0 and finite (1e999 converts
// to inf: a deadline never reached); returns it in seconds. `typed` is the
// value as given.
double kernel_budget_seconds(double ms, const std::string& typed);
// A heap size must be a whole number of MiB (cudaLimitMallocHeapSize is set in
// MiB; 1536K would silently be 1 MiB). `flag`=`text` is what was typed.
void check_whole_mib(const std::string& flag, const std::string& text, std::uint64_t bytes);
// --heaps of heapbench and of `heapbench check`: `text`, a comma-separated list
// of sizes (K/M/G suffixes), each a whole number of MiB; a refusal names
// `flag`=`text`.
std::vector<std::uint64_t> whole_mib_list(const std::string& flag, const std::string& text);

// A flag's value as the user typed it (the last one given; "" when not
// given), for messages: "1e999" rather than the "inf" it converts to.
std::string typed_value(const CLI::App& app, const std::string& flag);

// "--flag=" with nothing after "=" (what an unset shell variable gives) is an
// error: CLI11 would otherwise take the next argument as the value
// ("--benchmark_out= --sizes=64" wrote a file named "--sizes=64").
void refuse_empty_values(const std::vector<std::string>& args);

// The Google Benchmark flags heapbench needs to know about after checking them.
struct BenchmarkFlags {
  std::string format = "console";  // --benchmark_format: what goes to stdout
  int repetitions = 1;             // --benchmark_repetitions
  std::optional<bool> color;       // --benchmark_color: nullopt for auto (colour on a terminal)
  bool counters_tabular = false;   // --benchmark_counters_tabular
};

// The values --benchmark_format takes (Google Benchmark answers any other with
// its usage text): what the run's app checks and a child's plan may hold.
const std::vector<std::string>& benchmark_formats();

// What CLI11 fills for the Google Benchmark flags heapbench checks; lives as
// long as the app they are options of.
struct BenchmarkFlagValues {
  BenchmarkFlags flags;
  std::string color = "auto", verbosity, context;
  std::string booleans[3];  // --benchmark_report_aggregates_only, --benchmark_display_aggregates_only,
                            // --benchmark_counters_tabular
};

// The Google Benchmark flags whose values heapbench checks, as options of the
// run's app (the root of heapbench's tree): those Google Benchmark itself
// answers with its usage text and exit status 0 (--benchmark_format; an empty
// --benchmark_color is refuse_empty_values's), refuses in its own words (--v,
// --benchmark_context) or accepts although no case could then run
// (--benchmark_repetitions below 1), and the boolean ones
// (--benchmark_report_aggregates_only, --benchmark_display_aggregates_only,
// --benchmark_counters_tabular; --benchmark_color also auto), whose values it
// takes as true whatever the word. The others stay in the app's remaining()
// and are checked there (options.cpp). Each may repeat; the last one counts.
void add_benchmark_flags(CLI::App& app, BenchmarkFlagValues& v);
// Whether `opt` is one of add_benchmark_flags' options.
bool is_checked_benchmark_flag(const CLI::Option& opt);
// After the app parsed: what those flags say. Throws UsageError for a boolean
// flag's value that is neither true nor false as Google Benchmark spells them.
BenchmarkFlags benchmark_flags_of(const CLI::App& app, const BenchmarkFlagValues& v);
// Those flags as Google Benchmark is to be given them: "--flag=VALUE", the
// last value given, of each one given.
std::vector<std::string> given_benchmark_flags(const CLI::App& app);

// Which of `names` Google Benchmark would select with --benchmark_filter=`filter`
// (same rules as count_matching). Throws std::invalid_argument for a bad regex.
std::vector<bool> filter_matches(const std::vector<std::string>& names, const std::string& filter);

// How many of `names` Google Benchmark would select with --benchmark_filter=`filter`
// (same rules: empty or "all" selects all, a leading '-' negates, POSIX extended regex).
// Throws std::invalid_argument if the regex does not compile.
std::size_t count_matching(const std::vector<std::string>& names, const std::string& filter);

}  // namespace heapbench
