#include "report/snapshot_reporter.hpp"

#include "measure/case_loop.hpp"
#include "cases/axis_values.hpp"
#include "report/results_file.hpp"
#include "report/run_error.hpp"

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>
#include <iterator>
#include <set>
#include <sstream>

namespace heapbench {

CaseTiming case_timing(const benchmark::BenchmarkReporter::Run& run) {
  CaseTiming t;
  t.counts = run_error(run) == nullptr && run.run_type != benchmark::BenchmarkReporter::Run::RT_Aggregate;
  if (const auto c = run.counters.find("timed_s"); c != run.counters.end()) t.timed_s = c->second.value;
  t.real_time = run.GetAdjustedRealTime();
  t.iterations = static_cast<double>(run.iterations);
  t.time_unit = benchmark::GetTimeUnitString(run.time_unit);
  for (const char* c : kBudgetCounters) {
    if (const auto it = run.counters.find(c); it != run.counters.end()) t.phases[c] = it->second.value;
  }
  return t;
}

nlohmann::json error_entry(const std::string& name, const std::string& message) {
  benchmark::BenchmarkReporter::Run run;
  run.run_name.function_name = name;
  run.family_index = 0;
  run.per_family_instance_index = 0;
  run.repetitions = 1;
  run.repetition_index = 0;
  run.iterations = 0;
  run.time_unit = benchmark::kMillisecond;
  mark_error(run, message);
  std::ostringstream out, err;
  benchmark::JSONReporter json;
  json.SetOutputStream(&out);
  json.SetErrorStream(&err);
  json.ReportContext(benchmark::BenchmarkReporter::Context());
  json.ReportRuns({run});
  json.Finalize();
  nlohmann::json entry = nlohmann::json::parse(out.str()).at("benchmarks").at(0);
  entry.erase("family_index");
  entry.erase("per_family_instance_index");
  return entry;
}

void ResultsDocument::add(const std::vector<Run>& runs) {
  for (Run r : runs) {
    // Google Benchmark writes a non-finite counter as a bare NaN or inf, which
    // is not JSON (the coefficient of variation of a counter whose mean is 0,
    // such as fail_rate over repetitions, is 0/0): such a value is left out.
    for (auto it = r.counters.begin(); it != r.counters.end();) {
      it = std::isfinite(it->second.value) ? std::next(it) : r.counters.erase(it);
    }
    runs_.push_back(std::move(r));
  }
}

void ResultsDocument::carry(const nlohmann::json& entries) {
  carried_.clear();
  // As they stand in the file (a json's keys in their sorted order): no copy as ordered_json is needed.
  for (const auto& entry : entries) carried_.emplace_back(entry_key(entry), entry_text(entry));
}

nlohmann::ordered_json ResultsDocument::reported(std::size_t from, std::size_t to) const {
  std::ostringstream out, err;
  benchmark::JSONReporter json;
  json.SetOutputStream(&out);
  json.SetErrorStream(&err);
  if (context_) json.ReportContext(*context_);
  json.ReportRuns(std::vector<Run>(runs_.begin() + static_cast<std::ptrdiff_t>(from),
                                   runs_.begin() + static_cast<std::ptrdiff_t>(to)));
  json.Finalize();
  return nlohmann::ordered_json::parse(out.str());
}

std::string ResultsDocument::text() {
  // Google Benchmark's own writer makes the context and the entries: their
  // fields are its version's (1.7's error_occurred, 1.8's skipped, its date and
  // custom context). An ordered document keeps its field order.
  if (entries_.size() < runs_.size()) {
    const std::size_t from = entries_.size();
    auto made = reported(from, runs_.size());
    auto& entries = made["benchmarks"];
    if (entries.size() != runs_.size() - from) {
      throw std::logic_error(fmt::format("Google Benchmark wrote {} entries for {} runs", entries.size(),
                                         runs_.size() - from));
    }
    // Entry i is run i: its axes come from the Case registration recorded for the
    // run's family (run_name.function_name); no name in the document is read.
    for (std::size_t i = from; i < runs_.size(); ++i) {
      const Run& run = runs_[i];
      auto& entry = entries[i - from];
      if (const Case* c = registered_case(run.run_name.function_name)) entry[kAxisValuesKey] = axis_values(*c);
      // The rounds themselves (RoundSamples): what a two-sample test compares between two files.
      if (run.run_type == Run::RT_Iteration && run_error(run) == nullptr) {
        if (const RoundSamples* s = round_samples(run.run_name.function_name, run.repetition_index)) {
          entry[kRoundNsKey] = s->ns();
          entry[kRoundNsStrideKey] = s->stride();
        }
      }
      keys_.insert(entry_key(entry));
      entries_.push_back(entry_text(entry));
    }
  }
  // The context at every write: what the run adds at its end (custom context)
  // is in the last one.
  nlohmann::ordered_json head = reported(0, 0);
  add_declarations(head);
  std::vector<const std::string*> texts;
  texts.reserve(entries_.size() + carried_.size());
  for (const auto& e : entries_) texts.push_back(&e);
  for (const auto& [key, text] : carried_) {
    if (!keys_.count(key)) texts.push_back(&text);
  }
  return document_text(head.dump(2), texts);
}

bool SnapshotReporter::ReportContext(const Context& context) {
  doc_.set_context(context);
  return true;
}

void SnapshotReporter::ReportRuns(const std::vector<Run>& runs) {
  doc_.add(runs);
  write();
  if (on_runs_) on_runs_(doc_.runs());
  // After the write: the case that met the closed pipe is kept.
  if (output_closed()) throw ResultsWriteError("standard output was closed (SIGPIPE: its reader is gone)");
}

void SnapshotReporter::Finalize() {
  if (doc_.runs().empty()) return;
  if (before_last_write_) before_last_write_();
  write();
}

void SnapshotReporter::write() { write_atomically(path_, doc_.text() + '\n'); }

bool JsonReporter::ReportContext(const Context& context) {
  doc_.set_context(context);
  return true;
}

void JsonReporter::Finalize() {
  GetOutputStream() << doc_.text() << '\n';
  GetOutputStream().flush();
}

}  // namespace heapbench
