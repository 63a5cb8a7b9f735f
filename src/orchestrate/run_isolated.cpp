// The planned cases in children of this program (--isolate, the default with
// --benchmark_out, and --devices): one child per heap group and device
// (orchestrate.hpp), their results merged into --benchmark_out as they come.
#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <optional>
#include <set>

#include "report/context.hpp"
#include "orchestrate/exit_codes.hpp"
#include "plan/benchmark_flags.hpp"  // filter_matches
#include "orchestrate/merge.hpp"
#include "report/progress.hpp"
#include "orchestrate/orchestrate.hpp"
#include "orchestrate/runners.hpp"

namespace heapbench {
namespace {

// The entries of `document` this run wrote: not those of an interrupted run it
// carries (an entry equal to one of `carried`; the run's own result for the
// same case differs from it, and replaces it).
nlohmann::json own_entries(const nlohmann::json& document, const std::set<std::string>& carried) {
  nlohmann::json own = nlohmann::json::array();
  if (!document.contains("benchmarks")) return own;
  for (const auto& entry : document["benchmarks"]) {
    if (!carried.count(entry.dump())) own.push_back(entry);
  }
  return own;
}

// The selected cases in heap groups, one child's worth each, device by device;
// `name_width` gets the widest name (repetitions add "_stddev" and the like, as
// Google Benchmark pads for them).
std::vector<HeapGroup> heap_groups(const PlannedRun& run, const std::vector<int>& devices, std::size_t& name_width) {
  const Plan& plan = run.plan;
  const auto selected = filter_matches(run.names, run.filter);
  std::vector<HeapGroup> groups;
  for (int d : devices) {
    std::uint64_t first_heap = 0;
    for (std::size_t i = 0; i < plan.cases.size(); ++i) {
      if (!selected[i]) continue;
      const Case& c = plan.cases[i];
      if (first_heap == 0) first_heap = c.limit_bytes;
      if (groups.empty() || groups.back().device != d || groups.back().heap != c.limit_bytes) {
        groups.push_back(HeapGroup{d, c.limit_bytes, {}, {}, c.limit_bytes == first_heap});
      }
      groups.back().cases.push_back(c);
      groups.back().names.push_back(run.names[i]);
      name_width = std::max(name_width, run.names[i].size() + (plan.bflags.repetitions > 1 ? 7 : 0));
    }
  }
  return groups;
}

// The closing lines, and the exit status (after dying of the signal that stopped the run, if one did).
// `file_wall`: the wall time the file's context was last given (print_timing_lines).
int finish(const PlannedRun& run, const ChildrenOutcome& done, const Progress& progress, const Done& last,
           std::optional<double> file_wall, const std::set<std::string>& carried, ResultsFile& out) {
  print_timing_lines(progress, last, file_wall, run.clock.seconds());
  if (const std::string line = convergence_summary(convergence_of(own_entries(done.document, carried))); !line.empty()) {
    fmt::print(stderr, "{}\n", line);
  }
  if (!done.write_error.empty()) {
    fmt::print(stderr, "heapbench: the run stopped: {}; {} keeps its last complete version\n", done.write_error,
               out.path());
    return kExitCannotWrite;
  }
  if (done.runs_merged == 0) {
    fmt::print(stderr, "heapbench: no case finished; {} was not written\n", out.path());
  } else if (run.plan.bflags.format == "json") {
    fmt::print("{}\n", done.document.dump(2));
  }
  if (done.signal != 0) {
    fmt::print(stderr, "heapbench: stopped by signal {} ({}); {} results are in {}\n", done.signal,
               strsignal(done.signal), done.runs_merged == 0 ? 0 : done.entries, out.path());
    out.discard();
    std::signal(done.signal, SIG_DFL);
    std::raise(done.signal);
  }
  return done.runs_merged == 0 ? kExitNoResults : kExitOk;
}

}  // namespace

int run_isolated(const PlannedRun& run, const std::vector<int>& devices, ResultsFile& out,
                 std::function<std::string()> gate_line) {
  const Plan& plan = run.plan;
  ChildrenSettings settings;
  const std::vector<HeapGroup> children = heap_groups(run, devices, settings.name_width);
  std::size_t planned = 0;
  for (const auto& g : children) planned += g.cases.size();
  Progress progress(planned * static_cast<std::size_t>(plan.bflags.repetitions));
  const std::string command_line = heapbench::command_line(plan.options);
  settings.tag_devices = devices.size() > 1;
  settings.quiet_children = plan.bflags.format == "json";  // stdout gets the merged document instead
  settings.case_timeout_s = case_timeout_seconds(plan.options);
  settings.carried = out.carried();
  settings.gate_line = std::move(gate_line);
  std::set<std::string> carried;
  for (const auto& entry : settings.carried) carried.insert(entry.dump());
  Done last;  // the runs merged so far: the closing lines and the context's budget
  std::optional<double> file_wall;
  settings.on_change = [&](ResultsMerger& merger) {
    std::vector<ReportedRun> reported;
    merger.for_each_own([&](const nlohmann::json& entry) { reported.push_back(reported_run(entry)); });
    const Done done = count_done(reported);
    last = done;
    const double now = run.clock.seconds();
    file_wall = now;
    if (const std::string line = progress.update(done, now); !line.empty()) {
      fmt::print(stderr, "{}\n", line);
    }
    for (const auto& [k, v] : timing_context(now, done)) merger.set_context(k, v);
    merger.set_context(kCommandLineKey, command_line);  // the run's, not its children's
  };
  ChildrenOutcome done;
  try {
    done = run_children(child_run_of(plan.options), children, out.path(), settings);
  } catch (const std::exception& e) {
    fmt::print(stderr, "heapbench: {}\n", e.what());
    return kExitNoResults;
  }
  return finish(run, done, progress, last, file_wall, carried, out);
}

}  // namespace heapbench
