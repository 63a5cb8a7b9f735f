#include "advise/advise.hpp"
#include "cases/case_naming.hpp"

#include "replay/trace_reader.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "plan/benchmark_flags.hpp"
#include "plan/input_file.hpp"
#include "cases/catalog.hpp"
#include "cases/case_input.hpp"
#include "cases/mixed_sizes.hpp"
#include "plan/options.hpp"
#include "cases/parse.hpp"
#include "plan/suggest.hpp"

namespace heapbench {

double SizeDistribution::mean_bytes() const {
  if (kind != Kind::weighted) return (static_cast<double>(lo) + static_cast<double>(hi)) / 2;
  double sum = 0, weights = 0;
  for (const auto& [size, w] : weighted) {
    sum += static_cast<double>(size) * w;
    weights += w;
  }
  return sum / weights;
}

std::string SizeDistribution::text() const {
  switch (kind) {
    case Kind::fixed: return std::to_string(lo);
    case Kind::uniform: return fmt::format("{}-{}", lo, hi);
    case Kind::weighted: break;
  }
  std::string out;
  for (const auto& [size, w] : weighted) out += fmt::format("{}{}:{:g}", out.empty() ? "" : ",", size, w);
  return out;
}

namespace {

// A part of the --size text: what is wrong with it, and where in the whole when it is a part.
std::uint64_t quantity(const std::string& whole, const std::string& part) {
  try {
    return parse_quantity(part);
  } catch (const std::invalid_argument& e) {
    if (part == whole) throw;  // --size=0: "'0' is not a valid quantity", not "'0': '0' is not..."
    throw std::invalid_argument(fmt::format("'{}': {}", whole, e.what()));
  }
}


}  // namespace

SizeDistribution parse_size_distribution(const std::string& text) {
  SizeDistribution d;
  if (text.empty()) throw std::invalid_argument("empty size");
  if (text.find(':') != std::string::npos) {
    d.kind = SizeDistribution::Kind::weighted;
    for (const std::string& item : split_list(text)) {
      const auto parts = split_list(item, ':');
      if (parts.size() != 2) {
        throw std::invalid_argument(fmt::format("'{}': '{}' is not <size>:<weight>", text, item));
      }
      const std::uint64_t size = quantity(text, parts[0]);
      double w = 0;
      std::size_t used = 0;
      try {
        w = std::stod(parts[1], &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != parts[1].size() || !(w > 0) || !std::isfinite(w)) {
        throw std::invalid_argument(fmt::format("'{}': weight '{}' is not a positive number", text, parts[1]));
      }
      d.weighted.emplace_back(size, w);
    }
    return d;
  }
  if (const auto dash = text.find('-'); dash != std::string::npos) {
    d.kind = SizeDistribution::Kind::uniform;
    d.lo = quantity(text, text.substr(0, dash));
    d.hi = quantity(text, text.substr(dash + 1));
    if (d.lo >= d.hi) throw std::invalid_argument(fmt::format("'{}': a range goes from the smaller size to the larger", text));
    return d;
  }
  d.lo = d.hi = quantity(text, text);
  return d;
}

namespace {

// The patterns advice runs a workload with (at a fixed size).
bool advisable(const PatternTraits* p) {
  return p == &patterns::per_thread_traits || p == &patterns::per_warp_traits || p == &patterns::per_block_traits;
}

// The APIs advice is for: the device heap's, called directly.
bool advisable(const ApiTraits& a) { return a.heap_backed() && !a.is_call_path(); }

// Their names, from the catalog, in its order.
std::vector<std::string> advisable_patterns() {
  std::vector<std::string> out;
  for (const PatternTraits* t : kPatternTraits) {
    if (advisable(t)) out.emplace_back(t->name);
  }
  return out;
}

std::vector<std::string> advisable_apis() {
  std::vector<std::string> out;
  for (const ApiTraits& t : api_traits_list()) {
    if (advisable(t)) out.emplace_back(t.name);
  }
  return out;
}

// "a, b and c" (`last`: "and" or "or").
std::string listed(const std::vector<std::string>& names, const char* last) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    out += i == 0 ? "" : i + 1 == names.size() ? fmt::format(" {} ", last) : ", ";
    out += names[i];
  }
  return out;
}

}  // namespace

Case workload_case(const Workload& w, std::uint64_t heap) {
  if (!w.trace_file.empty()) {
    const ApiTraits* api = find_api_traits(w.api);
    if (api == nullptr || !api->built || !advisable(*api)) {
      const std::vector<std::string> known = advisable_apis();
      throw std::invalid_argument(fmt::format("--api={}: advice is for the device heap's APIs ({}){}", w.api,
                                              fmt::join(known, ", "), did_you_mean(w.api, known)));
    }
    Case c = make_case("replay", w.api, w.size.lo, 0, w.threads, heap);
    c.trace = w.trace;
    set_input(c, w.trace_file, w.trace_hash);
    return c;
  }
  if (w.threads == 0) throw std::invalid_argument("--threads: at least one allocating thread");
  const PatternTraits* pattern = find_pattern_traits(w.pattern);
  if (!advisable(pattern)) {
    const std::vector<std::string> known = advisable_patterns();
    throw std::invalid_argument(
        fmt::format("--pattern={}: advice knows {}{}", w.pattern, listed(known, "and"), did_you_mean(w.pattern, known)));
  }
  const ApiTraits* api = find_api_traits(w.api);
  if (!supported(w.pattern, w.api) || !advisable(*api)) {
    const std::vector<std::string> known = advisable_apis();
    throw std::invalid_argument(fmt::format("--api={}: advice is for the device heap's APIs ({}) with {}{}", w.api,
                                            fmt::join(known, ", "), w.pattern, did_you_mean(w.api, known)));
  }
  Case c;
  c.pattern = pattern;
  c.api = api;
  c.size = w.size.lo;
  c.align = api->takes_align ? w.align : 0;
  c.threads = w.threads;
  c.limit_bytes = heap;
  switch (w.size.kind) {
    case SizeDistribution::Kind::fixed:
      return c;
    case SizeDistribution::Kind::uniform:
      // per_thread_mixed's seeded sizes are uniform over [min(16, hi), hi]: the
      // only range a kernel of heapbench asks for.
      if (pattern != &patterns::per_thread_traits || w.size.lo != std::min<std::uint64_t>(16, w.size.hi)) {
        throw std::invalid_argument(fmt::format(
            "--size={}: heapbench runs uniform ranges from 16 B (or from hi, below 16) with per_thread only "
            "(per_thread_mixed); give 16-{} or a fixed size",
            w.size.text(), w.size.hi));
      }
      c.pattern = &patterns::per_thread_mixed_traits;
      c.size = w.size.hi;
      return c;
    case SizeDistribution::Kind::weighted:
      break;
  }
  throw std::invalid_argument(fmt::format(
      "--size={}: a list with weights parses, but no heapbench kernel asks for such sizes yet; give a fixed size or "
      "a range 16-<max>",
      w.size.text()));
}

std::optional<std::uint64_t> checked_workload_demand(const Workload& w) {
  if (!w.trace_file.empty()) return w.trace_peak_bytes;  // the most the recording held at once
  const Case c = workload_case(w, 0);
  const std::uint64_t stride = c.pattern->threads_per_call;
  // A partial warp or block still asks for all of it; per_thread_mixed's seeded sizes are at most c.size each.
  const auto most = checked_product((c.threads + stride - 1) / stride * stride, c.size);
  if (!most || w.size.kind != SizeDistribution::Kind::uniform) return most;
  std::uint64_t sum = 0;
  for (std::uint64_t tid = 0; tid < c.threads; ++tid) sum += mixed_size(tid, c.size);
  return sum;
}

std::uint64_t workload_demand(const Workload& w) {
  const auto demand = checked_workload_demand(w);
  return demand ? *demand : ~std::uint64_t{0};
}

HeapSearch find_min_heap(std::uint64_t demand_bytes, std::uint64_t max_mib, double tolerance,
                         const std::function<HeapProbe(std::uint64_t heap_mib)>& run) {
  HeapSearch s;
  std::map<std::uint64_t, bool> seen;
  auto ok = [&](std::uint64_t mib) {
    if (auto it = seen.find(mib); it != seen.end()) return it->second;
    HeapProbe p = run(mib);
    p.heap_mib = mib;
    s.probes.push_back(p);
    return seen[mib] = p.all_succeeded();
  };
  if (max_mib == 0) return s;
  // A heap smaller than the bytes asked for cannot hold them: the largest whole
  // MiB below the demand fails without a run.
  std::uint64_t lo = (demand_bytes + kMiB - 1) / kMiB - 1;
  if (lo >= max_mib) {
    s.max_failing_mib = lo;
    return s;
  }
  std::uint64_t hi = std::clamp<std::uint64_t>((2 * demand_bytes + kMiB - 1) / kMiB, lo + 1, max_mib);
  while (!ok(hi)) {
    lo = hi;
    if (hi == max_mib) {
      s.max_failing_mib = lo;
      return s;
    }
    hi = std::min(2 * hi, max_mib);
  }
  auto width = [&] {
    return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(tolerance * static_cast<double>(hi)));
  };
  while (hi - lo > width()) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    (ok(mid) ? hi : lo) = mid;
  }
  s.min_mib = hi;
  if (lo > 0) s.max_failing_mib = lo;
  return s;
}

std::uint64_t advised_mib(std::uint64_t min_mib, double margin) {
  return static_cast<std::uint64_t>(std::ceil(static_cast<double>(min_mib) * (1 + margin) - 1e-9));
}

std::string set_limit_code(std::uint64_t mib) {
  return fmt::format("cudaDeviceSetLimit(cudaLimitMallocHeapSize, size_t{{{}}} << 20);  // {} MiB, before the first "
                     "kernel that calls malloc",
                     mib, mib);
}

// heapbench advise's flags as CLI11 fills them, before they are checked.
struct AdviseParsed {
  std::string threads, size, max_heap, trace;
  double margin_pct = 10, tolerance_pct = 2, budget_ms = 20000;
};

namespace {

// heapbench advise's description and flags: the one app that parses them and
// whose help --help prints (help_text).
void build_app(CLI::App& app, AdviseOptions& o, AdviseParsed& p) {
  app.description("heapbench advise: the smallest cudaLimitMallocHeapSize for a workload, by bisection over real runs");
  add_subcommand_flags(app, o.help, o.device);
  app.add_option("--threads", p.threads, "Allocating threads of the kernel (K/M suffixes; per_block: blocks x 256)");
  app.add_option("--size", p.size,
                 "Bytes each thread asks for: fixed (1000, 4K) or a uniform range (16-256, per_thread only: "
                 "heapbench's per_thread_mixed). per_warp: lane 0 asks 32x this for its warp; per_block: thread 0 "
                 "asks 256x for its block, as in the sweep's --sizes");
  const Workload defaults;
  app.add_option("--pattern", o.workload.pattern,
                 fmt::format("{} (default {})", listed(advisable_patterns(), "or"), defaults.pattern));
  app.add_option("--api", o.workload.api, fmt::format("{} (default {})", listed(advisable_apis(), "or"), defaults.api));
  app.add_option("--align", o.workload.align, "Alignment for aligned APIs (default 16)");
  app.add_option("--trace", p.trace,
                 "A recorded program (heapbench/trace.cuh, docs/trace.md) instead of --threads, --size and "
                 "--pattern: the heap its replay needs, every allocation holding");
  app.add_option("--margin", p.margin_pct,
                 "Safety margin added to the smallest heap that held everything, percent (default 10): the allocator "
                 "places blocks differently from run to run, so the boundary moves a little");
  app.add_option("--tolerance", p.tolerance_pct,
                 "Bisection stops when the bracket is this many percent of the heap (default 2; never under 1 MiB)");
  app.add_option("--rounds", o.rounds, "Rounds of the workload per heap size; all must succeed (default 1)");
  app.add_option("--kernel-budget-ms", p.budget_ms,
                 "Deadline for one allocating kernel (default 20000: failing calls on a full heap are slow)");
  app.add_option("--max-heap", p.max_heap, "Largest heap to try (default: 3/4 of the device's memory, less what a --trace replay's plan takes)");
  app.add_option("--out", o.out, "Also write the advice as JSON to this file");
}

// --threads, --size and --pattern: the workload as described.
void set_described_workload(const CLI::App& app, const AdviseParsed& p, Workload& w) {
  if (p.threads.empty()) throw UsageError("--threads is required (how many threads allocate), or --trace");
  if (p.size.empty()) throw UsageError("--size is required (bytes per thread: 1000, or 16-256), or --trace");
  try {
    w.threads = parse_quantity(p.threads);
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("--threads={}: {}", p.threads, e.what()));
  }
  if (w.threads > kMaxThreads) {
    throw UsageError(fmt::format("--threads={}: more than the {} heapbench supports", p.threads, kMaxThreads));
  }
  try {
    w.size = parse_size_distribution(p.size);
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("--size={}: {}", p.size, e.what()));
  }
  if ((w.align & (w.align - 1)) != 0 || w.align == 0) {
    throw UsageError(fmt::format("--align={}: not a power of two", typed_value(app, "--align")));
  }
  try {
    (void)workload_case(w, 0);  // refuses what no pattern runs, before any device is touched
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (!checked_workload_demand(w)) {  // it wrapped: "0.0 MiB asked"
    throw UsageError(fmt::format("--size={} x --threads={}: the workload asks for more than 2^64 bytes; no heap holds it",
                                 p.size, p.threads));
  }
}

// --trace=FILE: the recorded program, read and planned whole now (a damaged
// file is refused before any device work); its largest launch and request are
// the case's threads and size, the most it held live its demand.
void set_trace_workload(const CLI::App& app, const AdviseParsed& p, Workload& w) {
  for (const char* flag : {"--threads", "--size", "--pattern", "--align"}) {
    if (app.count(flag)) throw UsageError(fmt::format("--trace={} and {}: the trace says what it asks for (give one)", shown_path(p.trace), flag));
  }
  try {
    const trace::Trace t = trace::read_trace(p.trace);
    const trace::ReplayPlan plan = trace::plan_replay(t, p.trace, trace::PlanDetail::kShape);
    w.trace_hash = t.content_hash;
    if (const std::string note = trace::unmatched_note(plan, p.trace); !note.empty()) {
      fmt::print(stderr, "heapbench advise: {}\n", note);
    }
    w.trace = trace::trace_name_of_file(p.trace);
    w.trace_file = p.trace;
    w.pattern = "replay";
    w.threads = plan.max_threads;
    w.size.lo = w.size.hi = std::max<std::uint64_t>(plan.max_size, 1);
    w.trace_peak_bytes = plan.peak_bytes;
    w.trace_device_bytes = trace::replay_device_bytes(plan);
    (void)workload_case(w, 0);
  } catch (const trace::TraceError& e) {
    throw UsageError(fmt::format("--trace={}: {}", shown_path(p.trace), e.what()));
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

// --margin, --tolerance, --rounds, --kernel-budget-ms, --device and --max-heap:
// how the bisection runs.
void set_search(const CLI::App& app, const AdviseParsed& p, AdviseOptions& o) {
  if (!(p.margin_pct >= 0 && p.margin_pct <= 100)) {
    throw UsageError(fmt::format("--margin={}: percent, 0 to 100", typed_value(app, "--margin")));
  }
  if (!(p.tolerance_pct > 0 && p.tolerance_pct <= 50)) {
    throw UsageError(fmt::format("--tolerance={}: percent, above 0 and at most 50", typed_value(app, "--tolerance")));
  }
  if (o.rounds < 1 || o.rounds > 100) throw UsageError(fmt::format("--rounds={}: 1 to 100", typed_value(app, "--rounds")));
  o.kernel_budget_s = kernel_budget_seconds(p.budget_ms, typed_value(app, "--kernel-budget-ms"));
  if (o.device < 0) throw UsageError(fmt::format("--device={}: must be >= 0", typed_value(app, "--device")));
  if (!p.max_heap.empty()) {
    try {
      o.max_heap = parse_heap_size(p.max_heap);  // a bare number is MiB, as --heaps
    } catch (const std::invalid_argument& e) {
      throw UsageError(fmt::format("--max-heap={}: {}", p.max_heap, e.what()));
    }
    if (o.max_heap < kMiB) throw UsageError(fmt::format("--max-heap={}: at least 1M", p.max_heap));
    check_whole_mib("--max-heap", p.max_heap, o.max_heap);
  }
  o.margin = p.margin_pct / 100;
  o.tolerance = p.tolerance_pct / 100;
}

}  // namespace

AdviseCommandLine::AdviseCommandLine() : o_(std::make_unique<AdviseOptions>()), p_(std::make_unique<AdviseParsed>()) {}
AdviseCommandLine::~AdviseCommandLine() = default;

void AdviseCommandLine::build(CLI::App& app) {
  build_app(app, *o_, *p_);
  app.allow_extras();  // what is left is refused in options() (refuse_extras), with the closest flag
}

AdviseOptions AdviseCommandLine::options(const CLI::App& app) const {
  AdviseOptions o = *o_;
  const AdviseParsed& p = *p_;
  if (o.help) {
    o.help_text = help_of(app);
    return o;
  }
  refuse_extras(app);
  if (!p.trace.empty()) {
    set_trace_workload(app, p, o.workload);
  } else {
    set_described_workload(app, p, o.workload);
  }
  set_search(app, p, o);
  return o;
}


}  // namespace heapbench
