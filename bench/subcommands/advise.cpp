// `heapbench advise`: the smallest cudaLimitMallocHeapSize at which a
// workload's allocations all succeed on this GPU, found by bisection over real
// runs of the workload (src/advise/advise.hpp has the search), each heap
// size after its own device reset (Backend::ensure_limit resets whenever the
// size changes: CUDA refuses a new limit once a kernel has called malloc).
//
// Prints the probes, the smallest heap that held everything, the utilisation
// there, the advice with its safety margin and the line of code to paste, and
// the fail rate at CUDA's default 8 MiB heap; --out writes the same as JSON.
#include "measure/round_phases.hpp"
#include "cases/case_naming.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <optional>

#include "app.hpp"
#include "orchestrate/exit_codes.hpp"
#include "advise/advise.hpp"
#include "plan/options.hpp"
#include "cases/parse.hpp"
#include "replay/trace_reader.hpp"  // a replay plan's device memory
#include "report/results_file.hpp"
#include "report/version.hpp"
#include "subcommand.hpp"

namespace heapbench {
namespace {

// CUDA's heap when nobody calls cudaDeviceSetLimit.
constexpr std::uint64_t kDefaultHeapMiB = 8;

// Bumped when a key of the advice file changes or changes meaning.
constexpr int kAdviceSchemaVersion = 1;

// Runs the workload on a heap of `mib` MiB, `rounds` times.
HeapProbe run_probe(Backend& backend, const Workload& w, std::uint64_t mib, int rounds, double budget_s) {
  const auto t0 = std::chrono::steady_clock::now();
  HeapProbe p;
  p.heap_mib = mib;
  const Backend::Heap heap = backend.ensure_limit(mib * kMiB);
  p.heap_bytes = heap.reported;
  const Case c = workload_case(w, mib * kMiB);
  {
    std::unique_ptr<Round> round = backend.make_round(c, budget_s);
    for (int i = 0; i < rounds; ++i) {
      const IterationResult r = run_round(*round, i);
      p.attempts += r.tally.attempts;
      p.successes += r.tally.successes;
      p.bytes += r.tally.bytes;
      p.not_started += r.not_started;
      ++p.rounds;
      if (r.misaligned || r.corrupted || !r.fault.empty()) {
        IterationResult checks = r;
        checks.not_started = 0;
        throw DeviceError(fmt::format("{} on a {} MiB heap: {}", case_name(c), mib, checks.problem(budget_s)));
      }
      if (r.not_started) break;  // the budget ran out: this heap fails, more rounds say nothing new
    }
  }
  p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return p;
}

nlohmann::json probe_json(const HeapProbe& p) {
  return {{"heap_mib", p.heap_mib},       {"heap_bytes", p.heap_bytes}, {"attempts", p.attempts},
          {"successes", p.successes},     {"bytes", p.bytes},           {"fail_rate", p.fail_rate()},
          {"not_started", p.not_started}, {"rounds", p.rounds},         {"seconds", p.seconds},
          {"all_succeeded", p.all_succeeded()}};
}

std::string mib_text(double bytes) { return fmt::format("{:.1f} MiB", bytes / static_cast<double>(kMiB)); }

// One run of `heapbench advise`: what was asked, the device, and what the
// search found.
struct Advice {
  const AdviseOptions& o;
  DeviceInfo device;
  std::uint64_t demand = 0;  // bytes the workload asks per round
  std::string runs_as;       // the case's name less its heap: the heap is what the search varies
  std::uint64_t max_mib = 0;
  HeapProbe at_default;
  HeapSearch search;
};

// The largest heap the search may try, or nullopt after saying why --max-heap
// (or a trace whose replay plan leaves no room for the smallest heap) is refused.
std::optional<std::uint64_t> max_heap_mib(const AdviseOptions& o, const DeviceInfo& device) {
  const Workload& w = o.workload;
  if (!w.trace_file.empty()) {
    // A replay's plan takes device memory beside every heap tried, the default one first.
    const std::uint64_t heap = std::max(o.max_heap, kDefaultHeapMiB * kMiB);
    if (w.trace_device_bytes > device.total_memory || heap > device.total_memory - w.trace_device_bytes) {
      fmt::print(stderr, "heapbench advise: --trace={}\n",
                 trace::device_memory_refusal(w.trace_file, w.trace_device_bytes, heap, memory_of(device)));
      return std::nullopt;
    }
  }
  // The heap is carved from device memory: leave a quarter for everything else
  // (and a replay's plan room beside it).
  if (o.max_heap == 0) return std::min(device.total_memory / 4 * 3, device.total_memory - w.trace_device_bytes) / kMiB;
  if (o.max_heap >= device.total_memory) {
    fmt::print(stderr, "heapbench advise: --max-heap={} is not smaller than the {} of device {} ({})\n",
               format_quantity(o.max_heap), format_quantity(device.total_memory), device.index, device.name);
    return std::nullopt;
  }
  return o.max_heap / kMiB;
}

void print_workload(const Advice& a) {
  const AdviseOptions& o = a.o;
  const Workload& w = o.workload;
  fmt::print("heapbench advise on {} (device {})\n", a.device.name, a.device.index);
  if (!w.trace.empty()) {
    fmt::print("workload: the trace {} replayed with {}, at most {} threads a launch: {} held live at most (heapbench "
               "case {})\n", w.trace, w.api, w.threads, mib_text(static_cast<double>(a.demand)), a.runs_as);
  } else {
    fmt::print("workload: {} threads x {} B ({}), {}, {}: {} asked per round (heapbench case {})\n", w.threads,
               w.size.text(), w.size.kind == SizeDistribution::Kind::fixed ? "fixed" : "uniform", w.pattern, w.api,
               mib_text(static_cast<double>(a.demand)), a.runs_as);
  }
  fmt::print("heap sizes tried, each after a device reset ({} round{} each):\n", o.rounds, o.rounds == 1 ? "" : "s");
}

// Probes CUDA's default heap, then bisects (find_min_heap), printing each probe.
void search(Advice& a, Backend& backend) {
  const AdviseOptions& o = a.o;
  const Workload& w = o.workload;

  auto run = [&](std::uint64_t mib) {
    HeapProbe p = run_probe(backend, w, mib, o.rounds, o.kernel_budget_s);
    fmt::print("  {:>8} MiB  fail_rate {:.4f}  {:>12} of {:>12} calls succeeded{}  {:.2f} s\n", mib, p.fail_rate(),
               p.successes, p.attempts,
               p.not_started ? fmt::format(" ({} calls found the kernel budget spent)", p.not_started) : "", p.seconds);
    std::fflush(stdout);
    return p;
  };
  a.at_default = run(kDefaultHeapMiB);
  a.search = find_min_heap(a.demand, a.max_mib, o.tolerance, [&](std::uint64_t mib) {
    return mib == kDefaultHeapMiB ? a.at_default : run(mib);
  });
}

// The advice file's keys that do not depend on the outcome.
nlohmann::json advice_json(const Advice& a) {
  const AdviseOptions& o = a.o;
  const Workload& w = o.workload;
  nlohmann::json doc = device_context(a.device);
  doc["heapbench_advice_version"] = kAdviceSchemaVersion;
  doc["workload"] = {{"threads", w.threads}, {"size", w.size.text()}, {"pattern", w.pattern},
                     {"api", w.api},         {"case", a.runs_as},     {"demand_bytes", a.demand}};
  if (!w.trace.empty()) doc["workload"]["trace"] = w.trace;
  doc["rounds_per_heap"] = o.rounds;
  doc["tolerance"] = o.tolerance;
  doc["margin"] = o.margin;
  doc["kernel_budget_s"] = o.kernel_budget_s;
  doc["default_heap"] = {{"heap_mib", kDefaultHeapMiB},
                         {"fail_rate", a.at_default.fail_rate()},
                         {"not_started", a.at_default.not_started}};
  nlohmann::json probes = nlohmann::json::array();
  for (const auto& p : a.search.probes) probes.push_back(probe_json(p));
  if (a.search.probes.empty() || a.search.probes.front().heap_mib != kDefaultHeapMiB) {
    probes.insert(probes.begin(), probe_json(a.at_default));
  }
  doc["probes"] = probes;
  return doc;
}

// Prints the outcome and adds it to `doc`; returns the exit status.
int report(const Advice& a, nlohmann::json& doc) {
  const AdviseOptions& o = a.o;
  const std::string default_line = fmt::format(
      "without the call (CUDA's default {} MiB heap): {:.1f} % of allocation calls return NULL{}", kDefaultHeapMiB,
      100 * a.at_default.fail_rate(),
      a.at_default.not_started
          ? fmt::format(" (at least: {} calls found the kernel budget spent)", a.at_default.not_started)
          : "");
  if (!a.search.min_mib) {
    fmt::print("no heap up to {} MiB held every allocation of this workload\n", a.max_mib);
    fmt::print("{}\n", default_line);
    doc["min_heap_mib"] = nullptr;
    return kExitNoAdvice;
  }
  const std::uint64_t min_mib = *a.search.min_mib;
  const HeapProbe* at_min = nullptr;
  for (const auto& p : a.search.probes) {
    if (p.heap_mib == min_mib) at_min = &p;
  }
  const double utilization = at_min && at_min->heap_bytes ? static_cast<double>(at_min->bytes) / at_min->rounds /
                                                                static_cast<double>(at_min->heap_bytes)
                                                          : 0;
  const std::uint64_t advised = advised_mib(min_mib, o.margin);
  const std::string code_line = set_limit_code(advised);
  const auto& max_failing = a.search.max_failing_mib;
  fmt::print("smallest heap that held every allocation: {} MiB{}\n", min_mib,
             max_failing ? fmt::format(" ({} MiB did not; bisection to {:g} %)", *max_failing, 100 * o.tolerance) : "");
  fmt::print("utilisation there: {:.1f} % of the heap limit holds requested bytes ({} of {})\n", 100 * utilization,
             mib_text(static_cast<double>(a.demand)), mib_text(static_cast<double>(min_mib * kMiB)));
  fmt::print("advice, with a {:g} % safety margin: {} MiB\n  {}\n", 100 * o.margin, advised, code_line);
  fmt::print("{}\n", default_line);
  doc["min_heap_mib"] = min_mib;
  doc["max_failing_heap_mib"] = max_failing ? nlohmann::json(*max_failing) : nlohmann::json();
  doc["utilization"] = utilization;
  doc["advised_heap_mib"] = advised;
  doc["advised_heap_bytes"] = advised * kMiB;
  doc["code"] = code_line;
  return kExitOk;
}

// The advice for the workload `o` describes.
int advise(const AdviseOptions& o, const DeviceHooks& hooks) {
  SubcommandFile out("advise", "--out");
  if (!out.open(o.out)) return kExitUsage;
  const auto t0 = std::chrono::steady_clock::now();
  const std::string shown = case_point_name(workload_case(o.workload, 0));
  const std::optional<DeviceInfo> device = probe_for("advise", hooks, o.device);
  if (!device) return kExitNoDevice;
  const std::optional<std::uint64_t> max_mib = max_heap_mib(o, *device);
  if (!max_mib) return kExitUsage;
  Advice a{o, *device, workload_demand(o.workload), shown, *max_mib, {}, {}};
  print_workload(a);
  std::unique_ptr<Backend> backend = hooks.make_backend(o.device);
  try {
    search(a, *backend);
  } catch (const std::exception& e) {
    fmt::print(stderr, "heapbench advise: {}\n", e.what());
    return kExitNoAdvice;
  }
  nlohmann::json doc = advice_json(a);
  const int code = report(a, doc);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  doc["seconds"] = seconds;
  fmt::print("took {:.1f} s\n", seconds);
  const int written = out.write(doc.dump(2) + '\n');
  return written != kExitOk ? written : code;
}

// `heapbench advise`: its flags in its app of heapbench's tree (AdviseCommandLine).
class AdviseCommand final : public ParsedCommand {
 public:
  explicit AdviseCommand(CLI::App& app) { flags_.build(app); }

  int run(const CLI::App& app, const DeviceHooks& hooks) override {
    const std::optional<AdviseOptions> parsed = parse_subcommand("advise", [&] { return flags_.options(app); });
    if (!parsed) return kExitUsage;
    if (parsed->help) {
      fmt::print("{}", parsed->help_text);
      return kExitOk;
    }
    return advise(*parsed, hooks);
  }

 private:
  AdviseCommandLine flags_;
};

}  // namespace
}  // namespace heapbench

HEAPBENCH_SUBCOMMAND(advise, "The smallest cudaLimitMallocHeapSize that holds a workload, by bisection over real runs",
                     heapbench::AdviseCommand)
