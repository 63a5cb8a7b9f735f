#include "plan/options.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string_view>
#include <utility>
#include <vector>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "plan/benchmark_flags.hpp"
#include "cases/catalog.hpp"
#include "plan/input_file.hpp"
#include "cases/parse.hpp"
#include "plan/suggest.hpp"
#include "cases/graph_names.hpp"
#include "plan/input_files.hpp"

namespace heapbench {

// heapbench's flags as CLI11 fills them, before they are checked into Options.
struct RunParsed {
  // Every axis flag's text (axes.hpp, AxisFlag: --patterns, --sizes, --threads, ...), by the flag.
  std::map<std::string, std::string, std::less<>> axes;
  std::vector<std::string> axis;  // --axis KEY=VALUES, each as given
  std::string graph_file;         // the graph workload's
  std::string trace_file;                                       // replay
  double max_demand_fraction = -1.0;  // <0: not given
  int device = 0;
  double kernel_budget_ms = 5000.0;
  double case_timeout_s = -1.0;  // <0: not given
  std::string out;
  std::string out_format = "json";
  bool list_tests = false;
  bool help = false;
  bool version = false;
  bool profile = false;
  int profile_iterations = 3;
  bool isolate = false;
  bool no_isolate = false;
  std::string devices;
  std::string child_plan;
  std::string child_input;
  std::string sweep = "default";
  double max_noise_pct = -1, max_time_s = -1;
  int min_rounds = -1;
  BenchmarkFlagValues benchmark;  // Google Benchmark's flags that heapbench checks
};

namespace {

using Parsed = RunParsed;

// The graph workload's inputs (docs/workloads.md), and replay's trace (docs/trace.md).
void add_workload_flags(CLI::App& app, Parsed& p) {
  app.add_option("--trace", p.trace_file,
                 "Replay a recorded trace (heapbench/trace.cuh; docs/trace.md): its launches, thread by thread, "
                 "against each of --apis (default malloc, bump and every allocator adapter) on --heaps (default "
                 "the heap it was recorded with); heapbench replay TRACE says the same");
  app.add_option("--graph", p.graph_file,
                 "graph: a Matrix Market coordinate file (FILE.mtx), one thread per vertex; its graph is named "
                 "by the file's stem, and replaces the generated ones unless --graphs is given too");
}

std::string axis_keys();  // the keys --axis takes (below)

// The flags that set the sweep's axes.
void add_axis_flags(CLI::App& app, Parsed& p) {
  // One flag per row of the axis table that has one (axes.hpp, AxisFlag), in its order.
  for (const AxisDecl* a : flag_axes()) {
    const AxisFlag& f = a->flag;
    std::string help(f.help);
    if (f.known != nullptr) help = fmt::format(fmt::runtime(f.help), fmt::join(f.known(), ","));
    if (f.more_help != nullptr) help += f.more_help();
    app.add_option(std::string(f.name), p.axes[std::string(f.name)], help);
  }
  add_workload_flags(app, p);
  app.add_option("--axis", p.axis,
                 fmt::format("An axis by its key (a case name's and axis_values' key: {}), KEY=VALUES, the values its "
                             "own flag takes (e.g. --axis threads=1K,1M --axis malloc_heap=64M); repeatable, one axis "
                             "each, never beside its flag",
                             axis_keys()))
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--max-demand-fraction", p.max_demand_fraction,
                 "Skip points whose threads x size (each call to CUDA's heap counted as at least 64 B) exceeds "
                 "this fraction of the heap (default 0.5 for the built-in sweep, 0 = keep all when an axis is given)");
}

// How the cases run: devices, processes, deadlines, the results file, profiling.
void add_run_flags(CLI::App& app, Parsed& p) {
  // Children of --isolate/--devices get --device and --benchmark_out appended: the last one counts.
  app.add_option("--device", p.device, "CUDA device index (default 0)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--devices", p.devices,
                 "Run on several devices at once, one process each, results merged into one file "
                 "(e.g. 0,1 or all); each entry gets gpu_index and a /device:N name suffix");
  app.add_flag("--isolate", p.isolate,
               "Run each heap size's cases in a child process and merge the results: a fault that kills "
               "the process costs only that group's unfinished cases, which become error results "
               "(the default whenever --benchmark_out is given, except under --profile)");
  app.add_flag("--no-isolate", p.no_isolate, "Run every case in this one process");
  // Internal: the file a child of --isolate/--devices takes its run from, and the file its cases
  // read (orchestrate/child_plan.hpp).
  app.add_option("--child-plan", p.child_plan)->group("");
  app.add_option("--child-input", p.child_input)->group("");
  app.add_option("--kernel-budget-ms", p.kernel_budget_ms,
                 fmt::format("Deadline for one allocating kernel; threads that find it passed do not allocate "
                             "and the case is reported as an error (default {:g})",
                             p.kernel_budget_ms));
  app.add_option("--case-timeout", p.case_timeout_s,
                 fmt::format("Seconds of wall time a case may run in a child process (--isolate, the default with "
                             "--benchmark_out) before the child is killed: the case becomes an error result and the "
                             "rest of its heap group run in a new process. For a thread that never returns from an "
                             "allocator, which --kernel-budget-ms cannot stop (default {:g} plus {:g} times "
                             "--max-time; 0: no limit)",
                             kCaseTimeoutBaseS, kCaseTimeoutMaxTimes));
  app.add_option("--benchmark_out", p.out,
                 "Results file (Google Benchmark JSON), rewritten after every finished case; a run that finishes "
                 "no case leaves an existing file alone")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--benchmark_out_format", p.out_format, "Results file format: json (the only one heapbench writes)");
  app.add_flag("--profile", p.profile,
               "Profiling mode: every case runs a fixed number of timed rounds (--profile-iterations) "
               "after its warm-up, with no calibration, so a timeline has a few clean rounds of each case");
  app.add_option("--profile-iterations", p.profile_iterations,
                 fmt::format("Timed rounds per case under --profile (default {})", p.profile_iterations));
  app.add_flag("--benchmark_list_tests", p.list_tests,
               "List the cases and exit (needs no GPU; =false: run them); stderr names the APIs this build left out");
  app.add_option("--sweep", p.sweep,
                 "Which built-in sweep the axis flags modify: default (the thorough one) or quick (every "
                 "pattern x API at one or two points, about 30 s on an H200) or size_map (the allocator's size "
                 "classes: every 16 B to 8 KiB, then coarser to 1 MiB; docs/cli.md) or zoo (every allocator "
                 "adapter beside malloc and bump on GPUMemManSurvey's grid; docs/zoo.md) or workloads (the "
                 "output, graph and hash workloads: what an application pays for allocating in a kernel, and "
                 "what it pays without; docs/workloads.md)")
      ->check(CLI::IsMember({"default", "quick", "size_map", "zoo", "workloads"}));
}

void add_flags(CLI::App& app, Parsed& p) {
  allow_repeats_to_be_judged(app);
  app.set_help_flag();  // --help is ours: it prints these flags and then Google Benchmark's.
  app.add_flag("-h,--help", p.help, "Print heapbench's flags, its subcommands and Google Benchmark's flags, and exit");
  app.add_flag("--version", p.version, "Print heapbench's version and git commit, and exit (needs no GPU)");
  add_axis_flags(app, p);
  add_run_flags(app, p);
  const StoppingRule rule;
  app.add_option("--max-noise", p.max_noise_pct,
                 fmt::format("Stop a case once the relative standard error of its mean round time is at most this "
                             "many percent (default {:g})",
                             100 * rule.max_noise));
  app.add_option("--min-rounds", p.min_rounds,
                 fmt::format("Timed rounds a case runs before its noise is judged (default {})", rule.min_rounds));
  app.add_option("--max-time", p.max_time_s,
                 fmt::format("Seconds of wall time after which a case stops measuring, converged or not (default {:g}); "
                             "a case reports rounds, noise, converged, timed_s and sm_clock_mhz",
                             rule.max_time_s));
  add_benchmark_flags(app, p.benchmark);
  // Google Benchmark's other flags stay in remaining(): checked against
  // google_benchmark_flags() and passed on.
  app.allow_extras();
}

std::vector<std::uint64_t> axis(const std::string& flag, const std::string& text) {
  try {
    return parse_quantity_list(text);
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("{}={}: {}", flag, text, e.what()));
  }
}

// Device indices: "0,1" (0 allowed, unlike quantities).
std::vector<int> axis_or_index(const std::string& flag, const std::string& text) {
  std::vector<int> out;
  for (const std::string& item : split_list(text)) {
    const bool digits = !item.empty() && item.size() <= 4 &&
                        item.find_first_not_of("0123456789") == std::string::npos;
    if (!digits) throw UsageError(fmt::format("{}={}: '{}' is not a device index (or use all)", flag, text, item));
    const int d = std::stoi(item);
    if (std::find(out.begin(), out.end(), d) != out.end()) {
      throw UsageError(fmt::format("{}={}: device {} given twice", flag, text, d));
    }
    out.push_back(d);
  }
  return out;
}

std::vector<std::string> names(const std::string& flag, const std::string& text, const std::vector<std::string_view>& all) {
  std::vector<std::string> out;
  for (std::string& item : split_list(text)) {
    const bool known = std::find(all.begin(), all.end(), item) != all.end();
    if (auto why = known ? std::string() : not_built_reason(item); !why.empty()) {
      throw UsageError(fmt::format("{}={}: '{}' is not built in: {}", flag, text, item, why));
    }
    if (!known) {
      throw UsageError(fmt::format("{}={}: unknown name '{}'{}", flag, text, item,
                                   did_you_mean(item, std::vector<std::string>(all.begin(), all.end()))));
    }
    out.push_back(std::move(item));
  }
  return out;
}

// The parts of the default sweep that measure at least one of `patterns`. The
// others' axes belong to patterns not asked for: replacing their patterns would
// bring those axes along (printf's 8-byte sizes and 1 MiB FIFOs into
// "--patterns=per_thread"), although each flag replaces only its own axis.
void keep_parts_with(std::vector<Sweep>& sweeps, const std::vector<std::string>& patterns) {
  sweeps.erase(std::remove_if(sweeps.begin(), sweeps.end(),
                              [&](const Sweep& s) {
                                return std::none_of(s.patterns.begin(), s.patterns.end(), [&](const std::string& p) {
                                  return std::find(patterns.begin(), patterns.end(), p) != patterns.end();
                                });
                              }),
               sweeps.end());
}

// The arguments CLI11 left over are Google Benchmark's flags, passed on to it
// in order. A refused one of them, a flag neither knows and a stray word are
// refused here, the flag with the closest known one.
void check_remaining(const CLI::App& app) {
  std::vector<std::string> known;  // what a mistyped flag may have meant
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_group().empty()) continue;  // internal
    for (const auto& n : opt->get_lnames()) known.push_back("--" + n);
  }
  for (const auto& f : google_benchmark_flags()) {
    if (f.refused.empty()) known.emplace_back(f.name);
  }
  const std::vector<std::string> rest = app.remaining();
  for (std::size_t i = 0; i < rest.size(); ++i) {
    const std::string& a = rest[i];
    if (a == "--") break;
    if (a.size() > 1 && a[0] == '-') {
      refuse_refused_flag(a);
      if (find_google_benchmark_flag(flag_name(a))) continue;
      throw UsageError(fmt::format("{}: unknown flag{}", a, did_you_mean(flag_name(a), known)));
    }
    if (i > 0 && find_google_benchmark_flag(rest[i - 1]) != nullptr) {
      throw UsageError(fmt::format("'{}': Google Benchmark's flags take their value after '=' ({}={})", a, rest[i - 1], a));
    }
    throw UsageError(fmt::format("'{}': unexpected argument (flags start with --; a subcommand comes first: "
                                 "heapbench SUBCOMMAND ...)",
                                 a));
  }
}

// --writes: a list of 0 and 1.
std::vector<std::uint64_t> switch_list(const std::string& flag, const std::string& text) {
  std::vector<std::uint64_t> out;
  for (const std::string& v : split_list(text)) {
    if (v.empty()) throw UsageError(fmt::format("{}={}: '{}' has an empty item", flag, text, text));
    if (v != "0" && v != "1") throw UsageError(fmt::format("{}={}: '{}' is not 0 or 1", flag, text, v));
    out.push_back(v == "1" ? 1 : 0);
  }
  return out;
}

// Each part of the sweep gets `value` as its `member`: each flag replaces its
// axis in every part of the built-in sweep.
template <class Member, class Value>
void set_all(std::vector<Sweep>& sweeps, Member member, const Value& value) {
  for (auto& s : sweeps) s.*member = value;
}

// A flag CLI11 converts but heapbench must check: one row per flag, run in
// this order when the flag was given (`flag` nullptr: always), each checking
// its value and storing it in Options.
struct FlagRule {
  const char* flag;
  void (*apply)(const CLI::App& app, const Parsed& p, Options& o);
};

const FlagRule kRunRules[] = {
    {nullptr,
     [](const CLI::App& app, const Parsed& p, Options& o) {
       if (p.isolate && p.no_isolate) throw UsageError("--isolate and --no-isolate: give one");
       // Isolation needs a file to merge into; under --profile one process keeps a
       // timeline simple. Elsewhere it is the default: a sticky CUDA error or a
       // crash then costs one heap group, not the run.
       o.isolate = p.isolate || (!p.no_isolate && app.count("--benchmark_out") > 0 && !p.profile && !p.list_tests);
     }},
    {"--devices",
     [](const CLI::App& app, const Parsed& p, Options& o) {
       if (p.devices == "all") {
         o.devices = {-1};
       } else {
         o.devices = axis_or_index("--devices", p.devices);
       }
       if (app.count("--device")) {
         throw UsageError(fmt::format("--devices={} and --device={}: give one", p.devices, p.device));
       }
     }},
    {nullptr,
     [](const CLI::App& app, const Parsed& p, Options& o) {
       o.profile = p.profile;
       if (p.profile_iterations < 1) {
         throw UsageError(fmt::format("--profile-iterations={}: must be at least 1", typed_value(app, "--profile-iterations")));
       }
       o.profile_iterations = p.profile_iterations;
       o.list_tests = p.list_tests;
     }},
    {"--max-noise",
     [](const CLI::App& app, const Parsed& p, Options& o) {
       if (!(p.max_noise_pct > 0 && p.max_noise_pct < 100)) {
         throw UsageError(fmt::format("--max-noise={}: a percentage above 0 and below 100", typed_value(app, "--max-noise")));
       }
       o.rule.max_noise = p.max_noise_pct / 100;
     }},
    {"--min-rounds",
     [](const CLI::App& app, const Parsed& p, Options& o) {
       if (p.min_rounds < 1 || p.min_rounds > 1000000) {
         throw UsageError(fmt::format("--min-rounds={}: must be 1 to 1000000", typed_value(app, "--min-rounds")));
       }
       o.rule.min_rounds = p.min_rounds;
     }},
    {"--max-time",
     [](const CLI::App& app, const Parsed& p, Options& o) {
       if (!(p.max_time_s > 0 && p.max_time_s <= 86400)) {
         throw UsageError(fmt::format("--max-time={}: seconds, above 0 and at most 86400", typed_value(app, "--max-time")));
       }
       o.rule.max_time_s = p.max_time_s;
     }},
    {"--case-timeout",
     [](const CLI::App& app, const Parsed& p, Options& o) {
       if (!(p.case_timeout_s >= 0.0) || !std::isfinite(p.case_timeout_s)) {
         throw UsageError(fmt::format("--case-timeout={}: must be a number of seconds >= 0 (0: no limit)",
                                      typed_value(app, "--case-timeout")));
       }
       // Only a parent can kill a case: in one process a hung case hangs the run.
       if (!o.isolate && o.devices.empty() && !o.list_tests) {
         throw UsageError("--case-timeout: only a case in a child process can be stopped; give --benchmark_out "
                          "(isolation is its default) or --isolate, not --no-isolate or --profile");
       }
       o.case_timeout_s = p.case_timeout_s;
     }},
};

// An integer axis's values as `flag` gave them, parsed as its row's kind says
// (axes.hpp, ValueKind): one parser for every integer axis's flag.
std::vector<std::uint64_t> axis_integers(const AxisDecl& a, const std::string& flag, const std::string& text) {
  switch (a.kind) {
    case ValueKind::switch01:
      return switch_list(flag, text);
    case ValueKind::whole_mib:
      return whole_mib_list(flag, text);
    case ValueKind::power_of_two: {
      const auto values = axis(flag, text);
      for (auto v : values) {
        if ((v & (v - 1)) != 0) throw UsageError(fmt::format("{}={}: {} is not a power of two", flag, text, v));
      }
      return values;
    }
    case ValueKind::quantity:
      return axis(flag, text);
    case ValueKind::names:
      break;
  }
  throw std::logic_error(fmt::format("axis {}: its values are names, not integers", a.key));
}

// The text an axis flag was given (on the command line or through --axis).
const std::string& flag_text(const Parsed& p, std::string_view flag) { return p.axes.find(flag)->second; }

// An integer axis's flag (axes.hpp), given: its values, checked as its row says.
std::vector<std::uint64_t> flag_values(const AxisDecl& a, const std::string& text) {
  const std::string flag(a.flag.name);
  const std::vector<std::uint64_t> values = axis_integers(a, flag, text);
  for (auto v : values) {
    if (a.flag.max != 0 && v > a.flag.max) {
      throw UsageError(fmt::format("{}={}: {} is more than {} ({})", flag, text, v, a.flag.max, a.flag.max_means));
    }
  }
  return values;
}

// A names axis's flag (axes.hpp), given: its names, each one this build has.
std::vector<std::string> flag_names(const AxisDecl& a, const std::string& text) {
  return names(std::string(a.flag.name), text, a.flag.known());
}
std::vector<std::string> flag_names(const Parsed& p, std::string_view flag) {
  return flag_names(*find_flag_axis(flag), flag_text(p, flag));
}

// Each part of the sweep takes a given axis flag's values (--patterns first,
// the table's order: it drops the parts that measure none of them). Returns
// whether the axis changes a point's demand on its heap.
bool apply_axis_flag(const AxisDecl& a, const Parsed& p, std::vector<Sweep>& sweeps) {
  const std::string& text = flag_text(p, a.flag.name);
  if (a.text()) {
    const std::vector<std::string> values = flag_names(a, text);
    if (a.key == "pattern") keep_parts_with(sweeps, values);
    for (Sweep& s : sweeps) s.set_names(a.key, values);
  } else {
    const std::vector<std::uint64_t> values = flag_values(a, text);
    for (Sweep& s : sweeps) s.set(a.key, values);
  }
  return a.flag.demand;
}

// Patterns and sizes both asked for by name: refuse a size a pattern cannot take.
void refuse_invalid_sizes(const Parsed& p, const std::vector<Sweep>& sweeps) {
  for (const auto& s : sweeps) {
    for (const auto& pattern : s.patterns) {
      for (auto size : s.sizes) {
        if (!valid_size(pattern, size)) {
          const PatternTraits& t = *find_pattern_traits(pattern);
          const std::string range = t.min_size == t.max_size ? fmt::format("{} bytes only", t.min_size)
                                    : t.size_step > 1 ? fmt::format("{} to {} bytes, a multiple of {}", t.min_size,
                                                                    t.max_size, t.size_step)
                                                      : fmt::format("{} to {} bytes", t.min_size, t.max_size);
          throw UsageError(fmt::format("--sizes={}: {} takes {}; {} is not one", flag_text(p, "--sizes"), pattern, range, size));
        }
      }
    }
  }
}

// Whether a flag was given: on the command line, or through --axis KEY=VALUES
// for the axis that flag sets (its values then stand in Parsed as the flag's).
struct Given {
  const CLI::App& app;
  std::map<std::string, std::string, std::less<>> via_axis;  // flag -> VALUES, from --axis
  bool operator()(std::string_view flag) const {
    return app.count(std::string(flag)) > 0 || via_axis.count(flag) > 0;
  }
};

// The flag --axis KEY=VALUES stands for ("" where KEY is no axis --axis sets: trace, whose
// value comes from --trace=FILE).
std::string_view flag_of_axis(std::string_view key) {
  const AxisDecl* a = find_axis(key);
  return a != nullptr ? a->flag.name : std::string_view{};
}

std::string axis_keys() {
  std::vector<std::string_view> keys;
  for (const AxisDecl& a : axis_table()) {
    if (!flag_of_axis(a.key).empty()) keys.push_back(a.key);
  }
  return fmt::format("{}", fmt::join(keys, ", "));
}

// Each --axis KEY=VALUES: an axis --axis sets, given once, never beside its own flag.
Given given_flags(const CLI::App& app, const Parsed& p) {
  Given g{app, {}};
  for (const std::string& arg : p.axis) {
    const auto eq = arg.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size()) {
      throw UsageError(fmt::format("--axis={}: give KEY=VALUES (e.g. --axis threads=1K,1M)", arg));
    }
    const std::string key = arg.substr(0, eq);
    const std::string_view flag = flag_of_axis(key);
    if (flag.empty()) {
      throw UsageError(fmt::format("--axis={}: {}; --axis takes {}", arg,
                                   find_axis(key) != nullptr ? "a trace comes from --trace=FILE, not from a list"
                                                             : fmt::format("no axis '{}'", key),
                                   axis_keys()));
    }
    if (app.count(std::string(flag)) > 0) {
      throw UsageError(fmt::format("--axis={} and {}: the same axis twice; give one", arg, flag));
    }
    if (!g.via_axis.emplace(flag, arg.substr(eq + 1)).second) {
      throw UsageError(fmt::format("--axis={}: its flag {} is given by another --axis already", arg, flag));
    }
  }
  return g;
}

// Parsed as if each --axis had been its flag.
Parsed with_axes(Parsed p, const Given& g) {
  for (const auto& [flag, values] : g.via_axis) p.axes[flag] = values;
  return p;
}

// --trace=FILE: read whole and planned now (a damaged file is refused before
// any device work), one part: the replay of its launches with the largest
// request and launch as the case's size and threads, on the heap it was
// recorded with (whole MiB, at least 8) unless --heaps says otherwise.
Sweep replay_sweep(const Given& given, const Parsed& p, const InputReaders& read) {
  for (const char* flag : {"--sweep", "--patterns", "--sizes", "--threads", "--graph"}) {
    if (given(flag)) throw UsageError(fmt::format("--trace={} and {}: the trace sets the cases (give one)", shown_path(p.trace_file), flag));
  }
  if (!read.trace) throw UsageError(fmt::format("--trace={}: this program reads no trace", shown_path(p.trace_file)));
  TraceFacts t;
  try {
    t = read.trace(p.trace_file);
  } catch (const std::exception& e) {
    throw UsageError(fmt::format("--trace={}: {}", shown_path(p.trace_file), e.what()));
  }
  const std::uint64_t recorded_heap = t.heap_bytes;
  Sweep s;
  s.trace = t.name;
  s.note = t.note;
  s.replay_device_bytes = t.device_bytes;
  s.input_hash = t.content_hash;
  s.patterns = {"replay"};
  s.apis = zoo_apis();
  s.sizes = {std::max<std::uint64_t>(t.max_size, 1)};
  s.aligns = {16};
  s.set("threads", {t.max_threads});
  const std::uint64_t mib = recorded_heap / kMiB + (recorded_heap % kMiB != 0 ? 1 : 0);  // rounded up, never wrapped
  if (mib > ~std::uint64_t{0} / kMiB && !given("--heaps")) {
    throw UsageError(fmt::format("--trace={}: recorded with a heap of {} bytes, more than 2^64 in whole MiB: give --heaps",
                                 shown_path(p.trace_file), recorded_heap));
  }
  s.heaps = {recorded_heap > 0 ? std::max<std::uint64_t>(mib, 8) * kMiB : 1024 * kMiB};
  s.trace_file = p.trace_file;
  return s;
}

// The sweep --sweep names; without --sweep, --patterns that only a sweep of
// their own measures (size_map, the workloads) bring that sweep's parts along.
std::vector<Sweep> base_sweeps(const Given& given, const Parsed& p, const InputReaders& read) {
  if (given("--trace")) return {replay_sweep(given, p, read)};
  if (p.sweep == "quick") return quick_sweep();
  if (p.sweep == "size_map") return size_map_sweep();
  if (p.sweep == "zoo") return zoo_sweep();
  if (p.sweep == "workloads") return workloads_sweep();
  std::vector<Sweep> out = default_sweep();
  if (given("--patterns")) {
    const auto asked = flag_names(p, "--patterns");
    if (std::find(asked.begin(), asked.end(), "replay") != asked.end()) {
      throw UsageError("--patterns=replay: a replay needs its trace: give --trace=FILE (or heapbench replay FILE)");
    }
  }
  if (!given("--sweep") && given("--patterns")) {
    for (auto extra : {size_map_sweep(), workloads_sweep()}) out.insert(out.end(), extra.begin(), extra.end());
  }
  return out;
}

// --graph=FILE: read whole now (a malformed file is refused before any device
// work, naming its line), and measured as a part of its own: the graph parts
// with that graph alone, one thread per vertex of it. It replaces the
// generated graphs unless --graphs names them too.
void add_graph_file(const Given& given, const Parsed& p, const InputReaders& read, std::vector<Sweep>& sweeps) {
  if (!read.graph) throw UsageError(fmt::format("--graph={}: this program reads no graph file", shown_path(p.graph_file)));
  GraphFacts g;
  try {
    g = read.graph(p.graph_file);
  } catch (const std::exception& e) {
    throw UsageError(fmt::format("--graph={}: {}", shown_path(p.graph_file), e.what()));
  }
  const std::string& name = g.name;
  if (g.vertices == 0) throw UsageError(fmt::format("--graph={}: the graph has no vertex", shown_path(p.graph_file)));
  std::vector<Sweep> files;
  for (const Sweep& s : sweeps) {
    if (std::find(s.patterns.begin(), s.patterns.end(), "graph") == s.patterns.end()) continue;
    Sweep f = s;
    f.patterns = {"graph"};
    f.graphs = {name};
    f.graph_file = p.graph_file;
    f.input_hash = g.content_hash;
    f.set("threads", {g.vertices});
    files.push_back(std::move(f));
  }
  if (files.empty()) {
    throw UsageError(fmt::format("--graph={}: the sweep has no graph case (give --sweep=workloads or --patterns=graph)",
                                 shown_path(p.graph_file)));
  }
  if (!given("--graphs")) {
    for (Sweep& s : sweeps) {
      s.patterns.erase(std::remove(s.patterns.begin(), s.patterns.end(), "graph"), s.patterns.end());
    }
  }
  sweeps.insert(sweeps.end(), files.begin(), files.end());
}

// --aligns given: an alignment must be one some API of the sweep takes
// (--apis=malloc --aligns=4096 measured malloc, the alignment silently
// ignored), and no larger than the largest heap it would be asked on
// (--aligns=8G: no block of any heap can be so aligned).
void refuse_unusable_aligns(const Parsed& p, const std::vector<Sweep>& sweeps) {
  std::uint64_t largest_heap = 0;
  std::vector<std::string> given_apis;
  for (const auto& s : sweeps) {
    for (const auto& name : s.apis) {
      const ApiTraits* t = find_api_traits(name);
      if (std::find(given_apis.begin(), given_apis.end(), name) == given_apis.end()) given_apis.push_back(name);
      if (t == nullptr || !t->takes_align || !t->built) continue;
      for (auto heap : s.heaps) largest_heap = std::max(largest_heap, heap);
    }
  }
  if (largest_heap == 0) {
    std::vector<std::string_view> aligning;
    for (const auto& t : api_traits_list()) {
      if (t.takes_align && t.built) aligning.push_back(t.name);
    }
    throw UsageError(fmt::format("--aligns={}: none of the APIs asked for ({}) takes an alignment; {} do (an "
                                 "alignment applies to them only)",
                                 flag_text(p, "--aligns"), fmt::join(given_apis, ","), fmt::join(aligning, ", ")));
  }
  for (const auto& s : sweeps) {
    for (auto a : s.aligns) {
      if (a > largest_heap) {
        throw UsageError(fmt::format("--aligns={}: {} is larger than the largest heap it would be asked on ({}): "
                                     "no block can be so aligned",
                                     flag_text(p, "--aligns"), format_quantity(a), format_quantity(largest_heap)));
      }
    }
  }
}

// --sweep, then the axis flags over every part of it.
void set_sweeps(const Given& given, const Parsed& p, const InputReaders& read, Options& o) {
  o.sweep = p.sweep;
  o.sweeps = base_sweeps(given, p, read);
  bool demand_axis_given = false;
  for (const AxisDecl* a : flag_axes()) {
    if (given(a->flag.name)) demand_axis_given |= apply_axis_flag(*a, p, o.sweeps);
  }
  if (given("--sizes") && given("--patterns")) refuse_invalid_sizes(p, o.sweeps);
  if (given("--graph")) add_graph_file(given, p, read, o.sweeps);
  if (given("--aligns")) refuse_unusable_aligns(p, o.sweeps);
  if (demand_axis_given) set_all(o.sweeps, &Sweep::max_demand_fraction, 0.0);
  if (given("--max-demand-fraction")) {
    if (!(p.max_demand_fraction >= 0.0)) {
      throw UsageError(fmt::format("--max-demand-fraction={}: must be >= 0", typed_value(given.app, "--max-demand-fraction")));
    }
    set_all(o.sweeps, &Sweep::max_demand_fraction, p.max_demand_fraction);
  }
}

const FlagRule kDeviceAndOutputRules[] = {
    {nullptr,
     [](const CLI::App& app, const Parsed& p, Options& o) {
       if (p.device < 0) throw UsageError(fmt::format("--device={}: must be >= 0", typed_value(app, "--device")));
       o.device = p.device;
       o.kernel_budget_s = kernel_budget_seconds(p.kernel_budget_ms, typed_value(app, "--kernel-budget-ms"));
       if (p.out_format != "json") {
         throw UsageError(
             fmt::format("--benchmark_out_format={}: heapbench writes its results file as json only", p.out_format));
       }
     }},
    {"--benchmark_out",
     [](const CLI::App&, const Parsed& p, Options& o) {
       if (p.out.empty()) throw UsageError("--benchmark_out: empty path");
       o.out = p.out;
     }},
};

template <std::size_t N>
void apply_rules(const FlagRule (&rules)[N], const CLI::App& app, const Parsed& p, Options& o) {
  for (const FlagRule& r : rules) {
    if (r.flag == nullptr || app.count(r.flag) > 0) r.apply(app, p, o);
  }
}

// What Google Benchmark is given: the program name, one iteration per case,
// --benchmark_list_tests where asked, and its own flags as they came.
std::vector<std::string> benchmark_args(const CLI::App& app, const Options& o, const char* program) {
  std::vector<std::string> args{program};
  // One Google Benchmark iteration per case: inside it heapbench runs rounds
  // until the stopping rule is met (src/measure/case_loop.cpp). Google Benchmark 1.8 and
  // later take "1x" (one iteration); 1.7 takes seconds, and any time at all
  // satisfies it after the first iteration (a bare number makes 1.8 warn at
  // every case).
#if HEAPBENCH_BENCHMARK_MIN_TIME_SUFFIX
  args.emplace_back("--benchmark_min_time=1x");
#else
  args.emplace_back("--benchmark_min_time=1e-9");
#endif
  if (o.list_tests) args.emplace_back("--benchmark_list_tests=true");
  for (auto& checked : given_benchmark_flags(app)) args.push_back(std::move(checked));
  for (const auto& extra : app.remaining()) args.push_back(extra);
  return args;
}

// What --help prints: the app's help (its flags, and the subcommands of its
// tree, each with its summary), then Google Benchmark's flags.
std::string help_text(const CLI::App& app) {
  std::string text = help_of(app);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  text += "\n\nGoogle Benchmark's flags, passed on to it:\n";
  std::string refused;
  for (const auto& f : google_benchmark_flags()) {
    const std::string flag = fmt::format("{}{}", f.name, f.value);
    if (f.refused.empty()) {
      text += fmt::format("  {:<28}{}{}\n", flag, flag.size() >= 28 ? "\n" + std::string(30, ' ') : "", f.help);
    } else {
      refused += fmt::format("  {}: {}\n", f.name, f.refused);
    }
  }
  text += "\nGoogle Benchmark's flags that heapbench refuses, and why:\n" + refused;
  if (!app.get_subcommands({}).empty()) {
    text += "\nheapbench SUBCOMMAND --help lists a subcommand's flags. Exit codes and more: docs/cli.md\n";
  }
  return text;
}

}  // namespace

RunCommandLine::RunCommandLine(InputReaders readers)
    : p_(std::make_unique<RunParsed>()), readers_(std::move(readers)) {}
RunCommandLine::~RunCommandLine() = default;

void RunCommandLine::build(CLI::App& app) {
  app.name("heapbench");
  app.description("heapbench: throughput and limits of CUDA's device heap");
  add_flags(app, *p_);
}

namespace {

// A child of isolation: its command line is what its parent gave it (--child-plan,
// --benchmark_out, --child-input where its cases read a file), never its
// parent's; everything else comes from the plan (src/orchestrate/run_plan.cpp). A child that
// parsed its parent's flags again planned the sweep again and read --trace and
// --graph again, at its own moment (a file being replaced refused it whole).
Options child_options(const Parsed& p, int argc, const char* const* argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a(argv[i]);
    if (a.rfind("--child-plan=", 0) != 0 && a.rfind("--child-input=", 0) != 0 && a.rfind("--benchmark_out=", 0) != 0) {
      throw UsageError(fmt::format("--child-plan: {}: a child of isolation takes its run from its plan, not from flags",
                                   argv[i]));
    }
    o.raw_args.emplace_back(argv[i]);
  }
  if (p.out.empty()) throw UsageError("--child-plan: a child writes its results to --benchmark_out: give one");
  o.child_plan = p.child_plan;
  o.child_input = p.child_input;
  o.out = p.out;
  return o;
}

}  // namespace

Options RunCommandLine::options(const CLI::App& app, int argc, const char* const* argv) const {
  const Parsed& p = *p_;
  if (!p.child_plan.empty() && !p.help && !p.version) return child_options(p, argc, argv);
  if (!p.child_input.empty()) throw UsageError("--child-input: an internal flag of a child of isolation");
  Options o;
  o.help = p.help;
  o.version = p.version;
  // With --help or --version the values are judged as for a run (--help
  // --sizes=0 is refused), the flags beside them are not.
  if (!o.help && !o.version) check_remaining(app);
  for (int i = 1; i < argc; ++i) o.raw_args.emplace_back(argv[i]);
  // --axis KEY=VALUES is its axis's flag from here on.
  const Given given = given_flags(app, p);
  const Parsed q = with_axes(p, given);
  apply_rules(kRunRules, app, q, o);
  set_sweeps(given, q, readers_, o);
  apply_rules(kDeviceAndOutputRules, app, q, o);
  o.benchmark_args = benchmark_args(app, o, argc > 0 ? argv[0] : "heapbench");
  o.benchmark_flags = benchmark_flags_of(app, p.benchmark);
  if (o.help) o.help_text = help_text(app);
  return o;
}


}  // namespace heapbench
