#include "orchestrate/run_plan.hpp"
#include "cases/case_naming.hpp"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "orchestrate/exit_codes.hpp"
#include "plan/benchmark_flags.hpp"  // count_matching
#include "cases/catalog.hpp"
#include "cases/case_input.hpp"
#include "orchestrate/child_plan.hpp"
#include "replay/trace_reader.hpp"  // a replay plan's device memory
#include "cases/parse.hpp"
#include "plan/sweep.hpp"
#include "report/version.hpp"

namespace heapbench {
namespace {

template <class... Args>
int fail(int code, fmt::format_string<Args...> f, Args&&... args) {
  fmt::print(stderr, "heapbench: {}\n", fmt::format(f, std::forward<Args>(args)...));
  return code;
}

// The first case whose bytes do not fit in 64 bits: size x threads, each
// call's block (size x the threads that share it, per_warp's 32, per_block's
// 256) counted whole. "" when every case's do. A wrapped product passed the
// demand check as 0 bytes (--sizes=9223372036854775808 --threads=2).
std::string overflowing_case(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    const std::uint64_t sharing = c.pattern ? std::max<std::uint64_t>(c.pattern->threads_per_call, 1) : 1;
    const std::uint64_t calls = (c.threads + sharing - 1) / sharing;
    const auto block = checked_product(c.size, sharing);
    if (!block || !checked_product(*block, calls)) {
      return fmt::format("{}: {} B x {} threads is more than 2^64 bytes (--sizes x --threads); no heap holds it",
                         case_name(c), c.size, c.threads);
    }
  }
  return {};
}

// The run's cases, and whether children run them (isolation); or the exit
// status of a refusal, after saying why.
int plan_cases_of(Plan& plan) {
  const Options& o = plan.options;
  if (o.child()) {
    // A child of --isolate/--devices: the cases its parent planned for it and how to measure
    // them, as its parent's parser read them; nothing planned or parsed again.
    try {
      ChildPlan child = read_child_plan(o.child_plan, o.child_input);
      plan.cases = std::move(child.cases);
      plan.context_and_header = child.context_and_header;
      plan.name_width = child.name_width;
      take_child_run(std::move(child.run), plan.options);
      plan.bflags = plan.options.benchmark_flags;
    } catch (const std::exception& e) {
      return fail(kExitUsage, "{}", e.what());
    }
  } else {
    plan.cases = plan_cases(o.sweeps);
  }
  plan.isolated = !o.child() && (o.isolate || !o.devices.empty()) && !o.list_tests;
  if (plan.isolated && !o.out) {
    return fail(kExitUsage, "--isolate and --devices merge their children's results into --benchmark_out: give one");
  }
  if (plan.isolated && plan.bflags.format == "csv") {
    // Each child would print a table with its own header; the merged results are JSON.
    return fail(kExitUsage, "--benchmark_format=csv: under isolation (the default with --benchmark_out) each heap "
                "group would print its own table; give --no-isolate, or read the merged --benchmark_out");
  }
  return kExitOk;
}

}  // namespace

std::variant<Plan, int> plan_run(const CLI::App& app, const RunCommandLine& run, int argc, char** argv) {
  Plan plan;
  Options& o = plan.options;
  try {
    o = run.options(app, argc, argv);
    plan.bflags = o.benchmark_flags;  // a child's: its plan's (plan_cases_of)
  } catch (const UsageError& e) {
    return fail(kExitUsage, "{} (see --help)", e.what());
  }
  if (o.help) {
    fmt::print("{}", o.help_text);
    return kExitOk;
  }
  if (o.version) {
    fmt::print("heapbench {} (git commit {})\n", kVersion, kGitCommit);
    return kExitOk;
  }

  if (const int code = plan_cases_of(plan); code != kExitOk) return code;
  if (const std::string why = overflowing_case(plan.cases); !why.empty()) return fail(kExitUsage, "{}", why);
  if (plan.cases.empty()) {
    return fail(kExitUsage,
                "the sweep has no cases: the patterns and APIs given have no supported pair "
                "(alloca is per_thread only), or --max-demand-fraction leaves out every point");
  }
  return plan;
}

int check_filter(const std::vector<std::string>& names, const std::string& filter) {
  try {
    if (count_matching(names, filter) == 0) {
      return fail(kExitUsage, "--benchmark_filter='{}' matches none of the {} cases (--benchmark_list_tests lists them)",
                  filter, names.size());
    }
  } catch (const std::invalid_argument& e) {
    return fail(kExitUsage, "{}", e.what());
  }
  return kExitOk;
}

namespace {

// A replay's plan takes device memory beside the heap (a plan within the
// trace reader's ceiling can still pass a device's memory): kExitOk, or
// kExitUsage after saying so. The parent's check (a child has no sweeps): a
// child's rounds check the plan against the memory free then (replay.cu).
int check_replay_memory(const Options& o, const Case& c, const DeviceInfo& device) {
  for (const Sweep& s : o.sweeps) {
    if (s.trace_file.empty() || s.trace_file != input_path(c)) continue;
    if (s.replay_device_bytes > device.total_memory - c.limit_bytes) {
      return fail(kExitUsage, "--trace={}",
                  trace::device_memory_refusal(input_path(c), s.replay_device_bytes, c.limit_bytes, memory_of(device)));
    }
  }
  return kExitOk;
}

}  // namespace

std::variant<Devices, int> check_devices(const Plan& plan, const std::function<DeviceInfo(int device)>& probe) {
  const Options& o = plan.options;
  Devices d;
  d.indices = o.devices.empty() || o.child() ? std::vector<int>{o.device} : o.devices;
  if (d.indices == std::vector<int>{-1}) {  // --devices=all
    d.indices.clear();
    for (int i = 0; i < 64; ++i) {
      try {
        probe(i);
        d.indices.push_back(i);
      } catch (const std::exception&) {
        break;
      }
    }
    if (d.indices.empty()) {
      try {
        probe(0);  // says why there is none
      } catch (const std::exception& e) {
        fmt::print(stderr, "heapbench: --devices=all: {}\n", e.what());
      }
      return kExitNoDevice;
    }
  }
  for (int i : d.indices) {
    try {
      d.last = probe(i);
    } catch (const NoDeviceError& e) {
      return fail(kExitNoDevice, "{}", e.what());
    } catch (const DeviceError& e) {
      return fail(kExitNoDevice, "cannot query device {}: {}", i, e.what());
    }
    for (const auto& c : plan.cases) {
      if (c.limit_bytes >= d.last.total_memory) {
        return fail(kExitUsage, "--heaps: {} is not smaller than the {} bytes ({}) of device {} ({})",
                    format_quantity(c.limit_bytes), d.last.total_memory, format_quantity(d.last.total_memory),
                    d.last.index, d.last.name);
      }
      if (const int code = check_replay_memory(o, c, d.last); code != kExitOk) return code;
    }
  }
  return d;
}

std::vector<std::pair<std::string, std::string>> timing_context(double wall_s, const Done& done) {
  std::vector<std::pair<std::string, std::string>> out = {
      {"heapbench_wall_s", fmt::format("{:.3f}", wall_s)},
      {"heapbench_timed_s", fmt::format("{:.3f}", done.timed_s)},
      {"heapbench_timed_fraction", fmt::format("{:.4f}", wall_s > 0 ? done.timed_s / wall_s : 0.0)},
      {"heapbench_measured_fraction",
       fmt::format("{:.4f}", measured_fraction(done.timed_s, done.budget.get("measuring_s"), wall_s))}};
  for (auto& kv : budget_context(done.budget, wall_s)) out.push_back(std::move(kv));
  return out;
}

void print_timing_lines(const Progress& progress, const Done& last, std::optional<double> file_wall_s, double now_s) {
  const double wall = file_wall_s.value_or(now_s);
  fmt::print(stderr, "{}\n", progress.summary(wall));
  if (const std::string line = budget_line(last.budget, wall); !line.empty()) fmt::print(stderr, "{}\n", line);
}

}  // namespace heapbench
