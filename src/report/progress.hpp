#pragma once
// Progress of a sweep on stderr, and how much of its wall time was measurement.
// Pure host logic: the caller passes the times, so tests use hand-made ones.
#include <nlohmann/json.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>
#include <optional>
#include <string>
#include <utility>

namespace heapbench {

// Where a case's wall time went (docs/metrics.md, "Where a run's time goes"),
// each a counter of its entry, in the order the console names them: the GPU
// time inside timed launches; the pattern's measuring work beside them
// (capacity's fragmentation and recovery fills, printf's drain); the measuring loop's wall
// time (both, and everything between them: verification, host waits, launch
// gaps); the warm-up round; the set-up of the round (the allocator and heapbench's
// buffers); the heap limit (a device reset when it changes); the capacity
// probes; the energy meter's reads; the whole case.
inline constexpr std::array<const char*, 9> kBudgetCounters = {"timed_s", "measuring_s", "loop_s",  "first_use_s",
                                                               "setup_s", "heap_s",      "probe_s", "meter_s",
                                                               "case_wall_s"};

// A run's budget: each of kBudgetCounters summed over its measured cases.
struct Budget {
  std::map<std::string, double> sum;
  std::vector<std::pair<std::string, double>> largest;  // the cases with the most wall time outside timed launches
  double get(const std::string& counter) const {
    const auto it = sum.find(counter);
    return it == sum.end() ? 0.0 : it->second;
  }
};

// "heapbench: where the wall time went: timed launches 90.7 s (68 %), between
// them 20.1 s (15 %), warm-up ..., outside the cases (process starts, device
// contexts, reporting and writing the file) 6.0 s (4 %)"; "" before any case.
std::string budget_line(const Budget& b, double wall_s);
// The results context's keys: heapbench_budget_<phase>_s for each phase of the line.
std::vector<std::pair<std::string, std::string>> budget_context(const Budget& b, double wall_s);

// What the results file says about one entry's timing.
struct CaseTiming {
  bool counts = true;            // false for error results and aggregates (mean, median, ...): no measurement
  std::optional<double> timed_s;  // the entry's `timed_s` counter, where the harness reports one
  double real_time = 0.0;         // per iteration, in time_unit
  double iterations = 0.0;
  std::string time_unit = "ns";   // ns, us, ms or s
  std::map<std::string, double> phases;  // its kBudgetCounters, those it has
};

// GPU seconds inside timed launches of one entry: its `timed_s` counter when it
// has one, else real_time x iterations (manual time is the GPU time of each
// round's timed launches); 0 for errors and aggregates.
double timed_seconds(const CaseTiming& t);
// The same, read from one entry of a Google Benchmark JSON "benchmarks" list.
CaseTiming case_timing(const nlohmann::json& entry);

// One entry of the results as progress counts it.
struct ReportedRun {
  std::string run_name;          // the case; its aggregates carry the same
  bool aggregate = false;        // mean, median, stddev, cv, ...
  std::string aggregate_name;
  std::int64_t repetitions = 1;  // of the case (aggregates: how many they summarise)
  CaseTiming timing;
};
ReportedRun reported_run(const nlohmann::json& entry);

// Cases done (each repetition of a case once) and their GPU seconds. A case
// whose repetitions came only as aggregates (--benchmark_report_aggregates_only)
// counts its mean's repetitions, and the mean's time that many times.
struct Done {
  std::size_t cases = 0;
  double timed_s = 0.0;
  std::size_t errors = 0;  // of `cases`: error results
  Budget budget;           // the measured runs' (not aggregates')
};
Done count_done(const std::vector<ReportedRun>& runs);

// The run's measured share: (the GPU time inside timed launches + the patterns'
// measuring work beside them, capacity's fragmentation and recovery fills and
// printf's drain) / the wall time, 0 before any wall time. The one definition:
// the console's closing line and the results file's heapbench_measured_fraction
// both come from it (docs/metrics.md, "Where a run's time goes").
double measured_fraction(double timed_s, double measuring_s, double wall_s);

// Cases done of a planned total, the time left, and the summary at the end.
class Progress {
 public:
  // No line in the first quiet_s seconds (a short sweep says nothing), then at
  // most one every every_s seconds.
  explicit Progress(std::size_t total, double quiet_s = 3.0, double every_s = 5.0)
      : total_(total), quiet_s_(quiet_s), every_s_(every_s) {}

  // `done` cases have finished `elapsed_s` seconds after the sweep began, with
  // `timed_s` GPU seconds inside timed launches and `measuring_s` seconds of
  // the patterns' measuring work beside them (the budget's measuring_s) among
  // them. Returns a line to print when one is due, else "".
  // `errors`: of the `done`, the cases that ended as error results (the
  // summary says how many, so "12 of 12 cases" never hides 8 errors).
  std::string update(std::size_t done, double timed_s, double elapsed_s, std::size_t errors = 0,
                     double measuring_s = 0.0);
  // The same from count_done's figures.
  std::string update(const Done& done, double elapsed_s) {
    return update(done.cases, done.timed_s, elapsed_s, done.errors, done.budget.get("measuring_s"));
  }

  // Seconds the remaining cases will take at the mean pace so far (elapsed
  // over done: cases of one sweep vary, so a per-case model would claim more
  // than it knows); nullopt before the first case.
  std::optional<double> seconds_left(double elapsed_s) const;

  // "N of M cases in T[ (K of them error results)]; measured X s, P % of the
  // wall time (timed launches Y s[, capacity's fills and printf's drain Z s])":
  // P is measured_fraction's, the results file's heapbench_measured_fraction.
  std::string summary(double wall_s) const;

  std::size_t done() const { return done_; }
  std::size_t total() const { return total_; }
  double timed_s() const { return timed_s_; }

 private:
  std::size_t total_;
  double quiet_s_, every_s_;
  std::size_t done_ = 0;
  std::size_t errors_ = 0;
  double timed_s_ = 0.0, measuring_s_ = 0.0;
  std::optional<double> last_line_s_;
};

// The closing line on the runs that applied the stopping rule, (case name,
// converged) each: "heapbench: 3 of 12 cases did not converge (noise above
// --max-noise when --max-time ran out; their converged is 0): a, b, c and 0
// more" -- at most `named` names, in run order; "" when every one converged.
std::string convergence_summary(const std::vector<std::pair<std::string, bool>>& runs, std::size_t named = 3);
// The same pairs from results entries (those measured: iteration entries that
// are not errors and carry `converged`), names without "/manual_time".
std::vector<std::pair<std::string, bool>> convergence_of(const nlohmann::json& entries);

// 75 -> "1:15", 3725 -> "1:02:05", 42 -> "42 s", 4.25 -> "4.2 s".
std::string format_duration(double seconds);

}  // namespace heapbench
