#pragma once
// heapbench's JSON document, one builder for both places it goes:
//  - SnapshotReporter, the results file reporter: after every case it rewrites
//    the whole file (context + every run so far) into "<path>.tmp" and renames
//    it over <path>. The file on disk is therefore valid JSON holding every
//    finished case at every moment: a crash, Ctrl-C or SIGTERM loses only the
//    case that was running. A run that finishes no case never touches <path>.
//    A failed write throws ResultsWriteError (results_file.hpp) out of the run,
//    leaving <path> as the last complete snapshot.
//  - JsonReporter, the display reporter for --benchmark_format=json: the same
//    document to standard output once the run ends.
// Each entry, aggregates too, carries its case's axis_values, taken from the
// Case that registration recorded for the run's family (measure/case_loop.hpp), each
// measured one its rounds (round_ns, round_ns_stride), and the document
// carries the "counters" and "apis" blocks (results_file.hpp).
#include <benchmark/benchmark.h>

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "report/progress.hpp"

#include <nlohmann/json.hpp>

namespace heapbench {

// Each measured entry's rounds (RoundSamples, docs/json.md): GPU time of each
// kept round in ns, and which rounds were kept (every stride-th).
inline constexpr const char* kRoundNsKey = "round_ns";
inline constexpr const char* kRoundNsStrideKey = "round_ns_stride";

class ResultsDocument {
 public:
  using Run = benchmark::BenchmarkReporter::Run;
  using Context = benchmark::BenchmarkReporter::Context;

  void set_context(const Context& context) { context_.emplace(context); }
  // Keeps the runs, less counters that are not finite.
  void add(const std::vector<Run>& runs);
  // Entries of an interrupted run kept after this run's own (ResultsFile::carried())
  // until this run has the same case.
  void carry(const nlohmann::json& entries);

  const std::vector<Run>& runs() const { return runs_; }
  // The document's text (dump(2)): Google Benchmark's context and fields for
  // each run (its JSONReporter's; the date and custom context are its own to
  // write), plus axis_values and rounds, the carried entries and the
  // declarations. Each run's entry is made once, at the first write after it,
  // and kept as text (results_file.hpp's entry_text): a write serialises the
  // context and the new runs, not every run again.
  std::string text();

 private:
  // Google Benchmark's document for the context and runs_[from, to).
  nlohmann::ordered_json reported(std::size_t from, std::size_t to) const;

  std::optional<Context> context_;
  std::vector<Run> runs_;
  std::vector<std::string> entries_;  // entry_text of runs_[i], made so far
  std::set<std::string> keys_;        // their entry_keys
  std::vector<std::pair<std::string, std::string>> carried_;  // (entry_key, entry_text)
};

class SnapshotReporter final : public benchmark::BenchmarkReporter {
 public:
  // on_runs: called with every run so far after each case (progress);
  // before_last_write: called once when the run ends, before the last snapshot
  // (to add context that only the end knows, with benchmark::AddCustomContext).
  explicit SnapshotReporter(std::string path, std::function<void(const std::vector<Run>&)> on_runs = {},
                            std::function<void()> before_last_write = {})
      : path_(std::move(path)), on_runs_(std::move(on_runs)), before_last_write_(std::move(before_last_write)) {}

  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override;

  void carry(const nlohmann::json& entries) { doc_.carry(entries); }

 private:
  void write();

  std::string path_;
  std::function<void(const std::vector<Run>&)> on_runs_;
  std::function<void()> before_last_write_;
  ResultsDocument doc_;
};

// --benchmark_format=json: the results file's document, written to the
// reporter's output stream (standard output) when the run ends.
class JsonReporter final : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& runs) override { doc_.add(runs); }
  void Finalize() override;

 private:
  ResultsDocument doc_;
};

// One run's timing as the results file will carry it (its `timed_s` counter,
// real time, iterations, unit; errors and aggregates count no time).
CaseTiming case_timing(const benchmark::BenchmarkReporter::Run& run);

// The entry of a case that has no result of its own (its child died, was
// stopped or ran past --case-timeout): written by Google Benchmark's JSON
// reporter, as every other entry, from a failed run of that name, without the
// family indices of a benchmark this process never registered. The merger
// (ResultsMerger) makes its error entries with it.
nlohmann::json error_entry(const std::string& name, const std::string& message);

}  // namespace heapbench
