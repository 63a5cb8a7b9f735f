// `heapbench advise`: the smallest cudaLimitMallocHeapSize at which a
// workload's allocations all succeed on this GPU, found by bisection over real
// runs of the workload (include/heapbench/advise.hpp has the search), each heap
// size after its own device reset (Backend::ensure_limit resets whenever the
// size changes: CUDA refuses a new limit once a kernel has called malloc).
//
// Prints the probes, the smallest heap that held everything, the utilisation
// there, the advice with its safety margin and the line of code to paste, and
// the fail rate at CUDA's default 8 MiB heap; --out writes the same as JSON.
#include "advise.hpp"
#include "round.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>

#include "exit_codes.hpp"
#include "heapbench/advise.hpp"
#include "heapbench/options.hpp"
#include "heapbench/parse.hpp"
#include "heapbench/results_file.hpp"
#include "heapbench/version.hpp"

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

}  // namespace

int run_advise(int argc, char** argv, const DeviceHooks& hooks) {
  AdviseOptions o;
  try {
    o = parse_advise_options(argc, argv);
  } catch (const UsageError& e) {
    fmt::print(stderr, "heapbench advise: {} (see heapbench advise --help)\n", e.what());
    return kExitUsage;
  }
  if (o.help) {
    fmt::print("{}", advise_help());
    return kExitOk;
  }
  // --out is checked, locked and written as the main program's results file
  // (results_file.hpp): refused before the search if it cannot be written,
  // replaced whole by a rename, so a failed write leaves the earlier advice.
  std::optional<ResultsFile> out;
  if (o.out) {
    try {
      out.emplace(*o.out, "--out");
    } catch (const std::exception& e) {
      fmt::print(stderr, "heapbench advise: {}\n", e.what());
      return kExitUsage;
    }
    out->remove_scratch_on_signal();
  }
  struct DiscardScratch {
    std::optional<ResultsFile>& f;
    ~DiscardScratch() {
      if (f) f->discard();
    }
  } discard_scratch{out};
  const auto t0 = std::chrono::steady_clock::now();
  const Workload& w = o.workload;
  const std::uint64_t demand = workload_demand(w);
  // The case's name less its heap: the heap is what the search varies.
  const std::string shown = case_name(workload_case(w, 0));
  const std::string runs_as = shown.substr(0, shown.rfind("/heap:"));

  DeviceInfo device;
  try {
    device = hooks.probe(o.device);
  } catch (const std::exception& e) {
    fmt::print(stderr, "heapbench advise: {}\n", e.what());
    return kExitNoDevice;
  }
  // The heap is carved from device memory: leave a quarter for everything else.
  std::uint64_t max_mib = device.total_memory / 4 * 3 / kMiB;
  if (o.max_heap != 0) {
    if (o.max_heap >= device.total_memory) {
      fmt::print(stderr, "heapbench advise: --max-heap={} is not smaller than the {} of device {} ({})\n",
                 format_quantity(o.max_heap), format_quantity(device.total_memory), device.index, device.name);
      return kExitUsage;
    }
    max_mib = o.max_heap / kMiB;
  }

  fmt::print("heapbench advise on {} (device {})\n", device.name, device.index);
  fmt::print("workload: {} threads x {} B ({}), {}, {}: {} asked per round (heapbench case {})\n", w.threads,
             w.size.text(), w.size.kind == SizeDistribution::Kind::fixed ? "fixed" : "uniform", w.pattern, w.api,
             mib_text(static_cast<double>(demand)), runs_as);
  fmt::print("heap sizes tried, each after a device reset ({} round{} each):\n", o.rounds, o.rounds == 1 ? "" : "s");

  std::unique_ptr<Backend> backend = hooks.make_backend(o.device);
  auto run = [&](std::uint64_t mib) {
    HeapProbe p = run_probe(*backend, w, mib, o.rounds, o.kernel_budget_s);
    fmt::print("  {:>8} MiB  fail_rate {:.4f}  {:>12} of {:>12} calls succeeded{}  {:.2f} s\n", mib, p.fail_rate(),
               p.successes, p.attempts,
               p.not_started ? fmt::format(" ({} calls found the kernel budget spent)", p.not_started) : "", p.seconds);
    std::fflush(stdout);
    return p;
  };

  HeapProbe at_default;
  HeapSearch search;
  try {
    at_default = run(kDefaultHeapMiB);
    search = find_min_heap(demand, max_mib, o.tolerance, [&](std::uint64_t mib) {
      return mib == kDefaultHeapMiB ? at_default : run(mib);
    });
  } catch (const std::exception& e) {
    fmt::print(stderr, "heapbench advise: {}\n", e.what());
    return kExitNoAdvice;
  }

  nlohmann::json doc = {
      {"heapbench_advice_version", kAdviceSchemaVersion},
      {"heapbench_version", kVersion},
      {"heapbench_git_commit", kGitCommit},
      {"gpu_name", device.name},
      {"gpu_index", device.index},
      {"gpu_memory_bytes", device.total_memory},
      {"cuda_driver_version", device.driver_version},
      {"cuda_runtime_version", device.runtime_version},
      {"workload",
       {{"threads", w.threads},
        {"size", w.size.text()},
        {"pattern", w.pattern},
        {"api", w.api},
        {"case", runs_as},
        {"demand_bytes", demand}}},
      {"rounds_per_heap", o.rounds},
      {"tolerance", o.tolerance},
      {"margin", o.margin},
      {"kernel_budget_s", o.kernel_budget_s},
      {"default_heap",
       {{"heap_mib", kDefaultHeapMiB},
        {"fail_rate", at_default.fail_rate()},
        {"not_started", at_default.not_started}}},
  };
  nlohmann::json probes = nlohmann::json::array();
  for (const auto& p : search.probes) probes.push_back(probe_json(p));
  if (search.probes.empty() || search.probes.front().heap_mib != kDefaultHeapMiB) {
    probes.insert(probes.begin(), probe_json(at_default));
  }
  doc["probes"] = probes;

  int code = kExitOk;
  const std::string default_line = fmt::format(
      "without the call (CUDA's default {} MiB heap): {:.1f} % of allocation calls return NULL{}", kDefaultHeapMiB,
      100 * at_default.fail_rate(),
      at_default.not_started ? fmt::format(" (at least: {} calls found the kernel budget spent)", at_default.not_started)
                             : "");
  if (!search.min_mib) {
    fmt::print("no heap up to {} MiB held every allocation of this workload\n", max_mib);
    fmt::print("{}\n", default_line);
    doc["min_heap_mib"] = nullptr;
    code = kExitNoAdvice;
  } else {
    const std::uint64_t min_mib = *search.min_mib;
    const HeapProbe* at_min = nullptr;
    for (const auto& p : search.probes) {
      if (p.heap_mib == min_mib) at_min = &p;
    }
    const double utilization =
        at_min && at_min->heap_bytes ? static_cast<double>(at_min->bytes) / at_min->rounds / static_cast<double>(at_min->heap_bytes) : 0;
    const std::uint64_t advised = advised_mib(min_mib, o.margin);
    const std::string code_line = set_limit_code(advised);
    fmt::print("smallest heap that held every allocation: {} MiB{}\n", min_mib,
               search.max_failing_mib ? fmt::format(" ({} MiB did not; bisection to {:g} %)", *search.max_failing_mib,
                                                    100 * o.tolerance)
                                      : "");
    fmt::print("utilisation there: {:.1f} % of the heap limit holds requested bytes ({} of {})\n", 100 * utilization,
               mib_text(static_cast<double>(demand)), mib_text(static_cast<double>(min_mib * kMiB)));
    fmt::print("advice, with a {:g} % safety margin: {} MiB\n  {}\n", 100 * o.margin, advised, code_line);
    fmt::print("{}\n", default_line);
    doc["min_heap_mib"] = min_mib;
    doc["max_failing_heap_mib"] = search.max_failing_mib ? nlohmann::json(*search.max_failing_mib) : nlohmann::json();
    doc["utilization"] = utilization;
    doc["advised_heap_mib"] = advised;
    doc["advised_heap_bytes"] = advised * kMiB;
    doc["code"] = code_line;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  doc["seconds"] = seconds;
  fmt::print("took {:.1f} s\n", seconds);
  if (out) {
    try {
      write_atomically(out->path(), doc.dump(2) + '\n');
    } catch (const ResultsWriteError& e) {
      fmt::print(stderr, "heapbench advise: {}; {} keeps its earlier content\n", e.what(), out->path());
      return kExitCannotWrite;
    }
  }
  return code;
}

}  // namespace heapbench
