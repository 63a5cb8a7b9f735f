#include "report/progress.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

namespace heapbench {

double timed_seconds(const CaseTiming& t) {
  if (!t.counts) return 0.0;
  if (t.timed_s) return *t.timed_s;
  double per_unit = 1e-9;
  if (t.time_unit == "us") per_unit = 1e-6;
  if (t.time_unit == "ms") per_unit = 1e-3;
  if (t.time_unit == "s") per_unit = 1.0;
  return t.real_time * t.iterations * per_unit;
}

CaseTiming case_timing(const nlohmann::json& e) {
  CaseTiming t;
  // Only a boolean true is an error (value() would throw on "no"; heapbench writes booleans).
  const bool error = e.contains("error_occurred") && e["error_occurred"].is_boolean() && e["error_occurred"].get<bool>();
  t.counts = !error && e.value("run_type", "iteration") != "aggregate";
  if (e.contains("timed_s") && e["timed_s"].is_number()) t.timed_s = e["timed_s"].get<double>();
  if (e.contains("real_time") && e["real_time"].is_number()) t.real_time = e["real_time"].get<double>();
  if (e.contains("iterations") && e["iterations"].is_number()) t.iterations = e["iterations"].get<double>();
  t.time_unit = e.value("time_unit", "ns");
  for (const char* c : kBudgetCounters) {
    if (e.contains(c) && e[c].is_number()) t.phases[c] = e[c].get<double>();
  }
  return t;
}

ReportedRun reported_run(const nlohmann::json& e) {
  ReportedRun r;
  r.run_name = e.value("run_name", e.value("name", ""));
  r.aggregate = e.value("run_type", "iteration") == "aggregate";
  r.aggregate_name = e.value("aggregate_name", "");
  if (e.contains("repetitions") && e["repetitions"].is_number_integer()) r.repetitions = e["repetitions"].get<std::int64_t>();
  r.timing = case_timing(e);
  return r;
}

Done count_done(const std::vector<ReportedRun>& runs) {
  Done d;
  std::set<std::string> with_iterations;
  for (const auto& r : runs) {
    if (r.aggregate) continue;
    ++d.cases;
    if (!r.timing.counts) ++d.errors;
    d.timed_s += timed_seconds(r.timing);
    with_iterations.insert(r.run_name);
    if (!r.timing.counts) continue;
    for (const auto& [c, v] : r.timing.phases) d.budget.sum[c] += v;
    const auto wall = r.timing.phases.find("case_wall_s");
    if (wall != r.timing.phases.end()) {
      std::string name = r.run_name;
      if (const auto at = name.rfind("/manual_time"); at != std::string::npos && at + 12 == name.size()) name.resize(at);
      d.budget.largest.emplace_back(name, wall->second - timed_seconds(r.timing));
    }
  }
  auto& largest = d.budget.largest;
  std::sort(largest.begin(), largest.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (largest.size() > 3) largest.resize(3);
  for (const auto& r : runs) {
    if (!r.aggregate || r.aggregate_name != "mean" || with_iterations.count(r.run_name)) continue;
    const auto reps = static_cast<std::size_t>(std::max<std::int64_t>(r.repetitions, 1));
    d.cases += reps;
    // A mean's counters are means; its iterations are the repetitions'.
    CaseTiming t = r.timing;
    t.counts = true;
    d.timed_s += t.timed_s ? *t.timed_s * static_cast<double>(reps) : timed_seconds(t);
  }
  return d;
}

namespace {
// The line's phases: (context key, words, seconds).
std::vector<std::tuple<std::string, std::string, double>> phases_of(const Budget& b, double wall_s) {
  const double timed = b.get("timed_s"), measuring = b.get("measuring_s"), loop = b.get("loop_s");
  const double cases = b.get("case_wall_s");
  const double setup = b.get("setup_s"), heap = b.get("heap_s"), probe = b.get("probe_s"), meter = b.get("meter_s");
  const double warmup = b.get("first_use_s");
  const double in_case = cases - loop - setup - heap - probe - meter - warmup;  // the rest of run_case: counters, checks
  return {{"timed", "timed launches", timed},
          {"measuring", "capacity's fragmentation and recovery fills, printf's drain", measuring},
          {"between", "between them in the measuring loop (verification, host waits, launch gaps)",
           std::max(0.0, loop - timed - measuring)},
          {"warmup", "warm-up", warmup},
          {"setup", "set-up of the rounds", setup},
          {"heap", "heap limits and device resets", heap},
          {"probe", "capacity probes", probe},
          {"meter", "energy meter", meter},
          {"case_rest", "the rest of the cases", std::max(0.0, in_case)},
          {"outside", "outside the cases (process starts, device contexts, reporting, writing the file)",
           std::max(0.0, wall_s - cases)}};
}
}  // namespace

std::string budget_line(const Budget& b, double wall_s) {
  if (b.get("case_wall_s") <= 0 || wall_s <= 0) return {};
  std::string parts;
  for (const auto& [key, words, s] : phases_of(b, wall_s)) {
    if (s < 0.05 && key != "timed") continue;  // measuring too: 0 in a run without capacity cases
    parts += fmt::format("{}{} {:.1f} s ({:.0f} %)", parts.empty() ? "" : ", ", words, s, 100.0 * s / wall_s);
  }
  std::string largest;
  for (const auto& [name, s] : b.largest) {
    if (s >= 0.1) largest += fmt::format("{}{} {:.1f} s", largest.empty() ? "" : ", ", name, s);
  }
  return fmt::format("heapbench: where the {:.1f} s went: {}{}", wall_s, parts,
                     largest.empty() ? "" : "; most outside timed launches: " + largest);
}

std::vector<std::pair<std::string, std::string>> budget_context(const Budget& b, double wall_s) {
  std::vector<std::pair<std::string, std::string>> out;
  if (b.get("case_wall_s") <= 0) return out;
  for (const auto& [key, words, s] : phases_of(b, wall_s)) out.emplace_back("heapbench_budget_" + key + "_s", fmt::format("{:.3f}", s));
  return out;
}

std::string convergence_summary(const std::vector<std::pair<std::string, bool>>& runs, std::size_t named) {
  std::vector<std::string> unconverged;
  for (const auto& [name, converged] : runs) {
    if (!converged) unconverged.push_back(name);
  }
  if (unconverged.empty()) return {};
  std::string names;
  for (std::size_t i = 0; i < std::min(named, unconverged.size()); ++i) names += (i ? ", " : "") + unconverged[i];
  if (unconverged.size() > named) names += fmt::format(" and {} more", unconverged.size() - named);
  return fmt::format("heapbench: {} of {} cases did not converge (their noise was still above --max-noise when "
                     "--max-time ran out: converged=0 in the results): {}",
                     unconverged.size(), runs.size(), names);
}

std::vector<std::pair<std::string, bool>> convergence_of(const nlohmann::json& entries) {
  std::vector<std::pair<std::string, bool>> out;
  if (!entries.is_array()) return out;
  for (const auto& e : entries) {
    if (!e.is_object() || !e.contains("converged") || !e["converged"].is_number()) continue;
    if (e.value("run_type", "iteration") != "iteration") continue;
    if (e.contains("error_occurred") && !(e["error_occurred"].is_boolean() && !e["error_occurred"].get<bool>())) continue;
    std::string name = e.contains("name") && e["name"].is_string() ? e["name"].get<std::string>() : "";
    if (const auto at = name.rfind("/manual_time"); at != std::string::npos && at + 12 == name.size()) name.resize(at);
    out.emplace_back(name, e["converged"].get<double>() == 1);
  }
  return out;
}

std::string format_duration(double s) {
  if (!(s >= 0)) s = 0;
  if (s < 10) return fmt::format("{:.1f} s", s);
  if (s < 60) return fmt::format("{:.0f} s", s);
  const auto total = static_cast<long long>(std::llround(s));
  if (total < 3600) return fmt::format("{}:{:02}", total / 60, total % 60);
  return fmt::format("{}:{:02}:{:02}", total / 3600, total / 60 % 60, total % 60);
}

std::optional<double> Progress::seconds_left(double elapsed_s) const {
  if (done_ == 0) return std::nullopt;
  if (done_ >= total_) return 0.0;
  return elapsed_s / static_cast<double>(done_) * static_cast<double>(total_ - done_);
}

double measured_fraction(double timed_s, double measuring_s, double wall_s) {
  return wall_s > 0 ? (timed_s + measuring_s) / wall_s : 0.0;
}

std::string Progress::update(std::size_t done, double timed_s, double elapsed_s, std::size_t errors, double measuring_s) {
  done_ = done;
  errors_ = errors;
  timed_s_ = timed_s;
  measuring_s_ = measuring_s;
  if (elapsed_s < quiet_s_ || done_ >= total_) return {};
  if (last_line_s_ && elapsed_s - *last_line_s_ < every_s_) return {};
  last_line_s_ = elapsed_s;
  const auto left = seconds_left(elapsed_s);
  return fmt::format("heapbench: {} of {} cases, {} elapsed, about {} left", done_, total_, format_duration(elapsed_s),
                     left ? format_duration(*left) : std::string("? s"));
}

std::string Progress::summary(double wall_s) const {
  const double share = 100.0 * measured_fraction(timed_s_, measuring_s_, wall_s);
  return fmt::format("heapbench: {} of {} cases in {}{}; measured {:.1f} s, {:.0f} % of the wall time (timed launches "
                     "{:.1f} s{})",
                     done_, total_, format_duration(wall_s),
                     errors_ ? fmt::format(" ({} of them error results)", errors_) : "", timed_s_ + measuring_s_, share,
                     timed_s_,
                     measuring_s_ > 0 ? fmt::format(", capacity's fills and printf's drain {:.1f} s", measuring_s_) : "");
}

}  // namespace heapbench
