// heapbench's program: Google Benchmark's command line plus heapbench's own
// flags (--sizes, --threads, --heaps, ...; see --help), over the device that
// DeviceHooks reach.
//
// Exit codes: 0 results written; 1 no case ran; 2 bad command line (before any
// kernel runs); 3 no usable device; 4 (a child of isolation only) stopped after a
// device error, the rest of its group to run in a new process; 5 the results
// file could not be written (it keeps its last complete version).
#include "app.hpp"

#include <benchmark/benchmark.h>
#include <string_view>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <optional>

#include "advise.hpp"
#include "context.hpp"
#include "families.hpp"
#include "orchestrate.hpp"
#include "heapbench/benchmark_flags.hpp"
#include "heapbench/merge.hpp"
#include "heapbench/options.hpp"
#include "heapbench/parse.hpp"
#include "heapbench/progress.hpp"
#include "heapbench/results_file.hpp"
#include "heapbench/sweep.hpp"
#include "snapshot_reporter.hpp"

namespace heapbench {
namespace {

constexpr int kExitNoResults = 1;
constexpr int kExitUsage = 2;
constexpr int kExitNoDevice = 3;

// Seconds since the sweep began, for progress and the measurement summary.
class Stopwatch {
 public:
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// Wall and timed seconds of the run, in the results file's context.
std::vector<std::pair<std::string, std::string>> timing_context(double wall_s, double timed_s) {
  return {{"heapbench_wall_s", fmt::format("{:.3f}", wall_s)},
          {"heapbench_timed_s", fmt::format("{:.3f}", timed_s)},
          {"heapbench_timed_fraction", fmt::format("{:.4f}", wall_s > 0 ? timed_s / wall_s : 0.0)}};
}

template <class... Args>
int fail(int code, fmt::format_string<Args...> f, Args&&... args) {
  fmt::print(stderr, "heapbench: {}\n", fmt::format(f, std::forward<Args>(args)...));
  return code;
}

}  // namespace

int run_heapbench(int argc, char** argv, const DeviceHooks& hooks) {
  if (argc > 1 && std::string_view(argv[1]) == "advise") return run_advise(argc - 1, argv + 1, hooks);
  const Stopwatch clock;  // the run's wall time: what the measurement summary divides by
  Options o;
  BenchmarkFlags bflags;
  try {
    o = parse_options(argc, argv);
    bflags = check_benchmark_flags(o.benchmark_args);
  } catch (const UsageError& e) {
    return fail(kExitUsage, "{} (see --help)", e.what());
  }
  if (o.only_heap != 0) die_with_parent();
  if (o.help) {
    fmt::print("{}\nGoogle Benchmark's flags, also accepted:\n", options_help());
    benchmark::PrintDefaultHelp();
    return 0;
  }

  std::vector<Case> cases = plan_cases(o.sweeps);
  if (o.only_heap != 0) {
    // A child of --isolate/--devices: the parent's plan, one heap size of it.
    cases.erase(std::remove_if(cases.begin(), cases.end(), [&](const Case& c) { return c.limit_bytes != o.only_heap; }),
                cases.end());
  }
  const bool orchestrate = o.only_heap == 0 && (o.isolate || !o.devices.empty()) && !o.list_tests;
  if (orchestrate && !o.out) {
    return fail(kExitUsage, "--isolate and --devices merge their children's results into --benchmark_out: give one");
  }
  if (orchestrate && bflags.format == "csv") {
    // Each child would print a table with its own header; the merged results are JSON.
    return fail(kExitUsage, "--benchmark_format=csv: under isolation (the default with --benchmark_out) each heap "
                "group would print its own table; give --no-isolate, or read the merged --benchmark_out");
  }
  if (cases.empty()) {
    return fail(kExitUsage,
                "the sweep has no cases: the patterns and APIs given have no supported pair "
                "(alloca is per_thread only), or --max-demand-fraction leaves out every point");
  }
  std::unique_ptr<Backend> backend = hooks.make_backend(o.device);
  const RunConfig cfg{backend.get(), o.kernel_budget_s, o.profile ? o.profile_iterations : 0,
                      /*end_on_device_error=*/o.only_heap != 0, o.rule};
  std::vector<std::string> names;
  for (const auto& c : cases) names.push_back(benchmark_name(c, cfg));

  std::optional<ResultsFile> out;
  if (o.out && !o.list_tests) {
    try {
      out.emplace(*o.out);
    } catch (const std::exception& e) {
      return fail(kExitUsage, "{}", e.what());
    }
    o.benchmark_args.push_back("--benchmark_out=" + out->partial_path());
    out->remove_scratch_on_signal();
    if (o.only_heap == 0) {
      if (const std::string said = out->clean_leftovers(); !said.empty()) fmt::print(stderr, "heapbench: {}\n", said);
    }
  }
  // Removes the scratch file Google Benchmark is given as --benchmark_out (the
  // results themselves are written by SnapshotReporter) and returns `code`.
  auto finish = [&](int code) {
    if (out) out->discard();
    return code;
  };

  std::vector<char*> bargv;
  for (auto& a : o.benchmark_args) bargv.push_back(a.data());
  bargv.push_back(nullptr);
  int bargc = static_cast<int>(bargv.size()) - 1;
  benchmark::Initialize(&bargc, bargv.data());
  if (benchmark::ReportUnrecognizedArguments(bargc, bargv.data())) return finish(kExitUsage);

  const std::string filter = benchmark::GetBenchmarkFilter();
  try {
    if (count_matching(names, filter) == 0) {
      fmt::print(stderr, "heapbench: --benchmark_filter='{}' matches none of the {} cases (--benchmark_list_tests lists them)\n",
                 filter, names.size());
      return finish(kExitUsage);
    }
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "heapbench: {}\n", e.what());
    return finish(kExitUsage);
  }

  register_cases(cases, cfg);

  if (o.list_tests) {
    benchmark::RunSpecifiedBenchmarks();
    return 0;
  }

  // Every device this run uses answers, and holds every heap asked of it.
  std::vector<int> devices = o.devices.empty() || o.only_heap != 0 ? std::vector<int>{o.device} : o.devices;
  if (devices == std::vector<int>{-1}) {  // --devices=all
    devices.clear();
    for (int d = 0; d < 64; ++d) {
      try {
        hooks.probe(d);
        devices.push_back(d);
      } catch (const std::exception&) {
        break;
      }
    }
    if (devices.empty()) {
      try {
        hooks.probe(0);  // says why there is none
      } catch (const std::exception& e) {
        fmt::print(stderr, "heapbench: --devices=all: {}\n", e.what());
      }
      return finish(kExitNoDevice);
    }
  }
  DeviceInfo device;
  for (int d : devices) {
    try {
      device = hooks.probe(d);
    } catch (const NoDeviceError& e) {
      fmt::print(stderr, "heapbench: {}\n", e.what());
      return finish(kExitNoDevice);
    } catch (const DeviceError& e) {
      fmt::print(stderr, "heapbench: cannot query device {}: {}\n", d, e.what());
      return finish(kExitNoDevice);
    }
    for (const auto& c : cases) {
      if (c.limit_bytes >= device.total_memory) {
        fmt::print(stderr, "heapbench: --heaps: {} is not smaller than the {} bytes ({}) of device {} ({})\n",
                   format_quantity(c.limit_bytes), device.total_memory, format_quantity(device.total_memory),
                   device.index, device.name);
        return finish(kExitUsage);
      }
    }
  }

  if (orchestrate) {
    const auto selected = filter_matches(names, filter);
    std::vector<ChildPlan> plan;
    for (int d : devices) {
      for (std::size_t i = 0; i < cases.size(); ++i) {
        if (!selected[i]) continue;
        if (plan.empty() || plan.back().device != d || plan.back().heap != cases[i].limit_bytes) {
          plan.push_back(ChildPlan{d, cases[i].limit_bytes, {}});
        }
        plan.back().expected.push_back(names[i]);
      }
    }
    std::size_t planned = 0;
    for (const auto& p : plan) planned += p.expected.size();
    Progress progress(planned * static_cast<std::size_t>(bflags.repetitions));
    ChildrenSettings settings;
    settings.tag_devices = devices.size() > 1;
    settings.quiet_children = bflags.format == "json";  // stdout gets the merged document instead
    settings.on_change = [&](ResultsMerger& merger) {
      std::size_t cases = 0;
      double timed = 0;
      for (const auto& entry : merger.document()["benchmarks"]) {
        if (entry.value("run_type", "iteration") == "aggregate") continue;
        ++cases;
        timed += timed_seconds(case_timing(entry));
      }
      const double now = clock.seconds();
      if (const std::string line = progress.update(cases, timed, now); !line.empty()) fmt::print(stderr, "{}\n", line);
      for (const auto& [k, v] : timing_context(now, timed)) merger.set_context(k, v);
    };
    ChildrenOutcome done;
    try {
      done = run_children(o.raw_args, plan, out->path(), settings);
    } catch (const std::exception& e) {
      fmt::print(stderr, "heapbench: {}\n", e.what());
      return finish(kExitNoResults);
    }
    fmt::print(stderr, "{}\n", progress.summary(clock.seconds()));
    if (!done.write_error.empty()) {
      fmt::print(stderr, "heapbench: the run stopped: {}; {} keeps its last complete version\n", done.write_error,
                 out->path());
      return finish(kExitCannotWrite);
    }
    if (done.runs_merged == 0) {
      fmt::print(stderr, "heapbench: no case finished; {} was not written\n", out->path());
    } else if (bflags.format == "json") {
      fmt::print("{}\n", done.document.dump(2));
    }
    if (done.signal != 0) {
      fmt::print(stderr, "heapbench: stopped by signal {} ({}); {} results are in {}\n", done.signal,
                 strsignal(done.signal), done.runs_merged == 0 ? 0 : done.entries, out->path());
      finish(0);
      std::signal(done.signal, SIG_DFL);
      std::raise(done.signal);
    }
    return finish(done.runs_merged == 0 ? kExitNoResults : 0);
  }
  add_results_context(device, o);

  std::size_t ran = 0;
  try {
    if (out) {
      // Progress and the measurement summary: the results file's reporter sees every case.
      const std::size_t selected = count_matching(names, filter);
      Progress progress(selected * static_cast<std::size_t>(bflags.repetitions));
      auto tally = [&](const std::vector<benchmark::BenchmarkReporter::Run>& runs) {
        std::size_t cases = 0;
        double timed = 0;
        for (const auto& r : runs) {
          if (r.run_type == benchmark::BenchmarkReporter::Run::RT_Aggregate) continue;
          ++cases;
          timed += timed_seconds(case_timing(r));
        }
        const std::string line = progress.update(cases, timed, clock.seconds());
        if (!line.empty() && o.only_heap == 0) fmt::print(stderr, "{}\n", line);  // a child's parent reports
      };
      auto before_last_write = [&] {
        if (o.only_heap != 0) return;
        for (const auto& [k, v] : timing_context(clock.seconds(), progress.timed_s())) benchmark::AddCustomContext(k, v);
      };
      SnapshotReporter snapshots(out->path(), tally, before_last_write);
      ran = benchmark::RunSpecifiedBenchmarks(nullptr, &snapshots);
      if (o.only_heap == 0) fmt::print(stderr, "{}\n", progress.summary(clock.seconds()));
    } else {
      ran = benchmark::RunSpecifiedBenchmarks();
    }
  } catch (const ResultsWriteError& e) {
    fmt::print(stderr, "heapbench: {}; {} keeps its last complete version\n", e.what(), out->path());
    return finish(kExitCannotWrite);
  } catch (const std::exception& e) {
    fmt::print(stderr, "heapbench: {}\n", e.what());
    return finish(kExitNoResults);
  }
  benchmark::Shutdown();
  return finish(ran == 0 ? kExitNoResults : 0);
}

}  // namespace heapbench
