#pragma once
// The results file reporter: after every case it rewrites the whole file with
// Google Benchmark's own JSONReporter (context + every run so far) into
// "<path>.tmp" and renames it over <path>. The file on disk is therefore valid
// JSON holding every finished case at every moment: a crash, Ctrl-C or SIGTERM
// loses only the case that was running. A run that finishes no case never
// touches <path>. A failed write throws ResultsWriteError (results_file.hpp)
// out of the run, leaving <path> as the last complete snapshot.
#include <benchmark/benchmark.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "heapbench/progress.hpp"

#include <nlohmann/json.hpp>

namespace heapbench {

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

  std::size_t runs_written() const { return runs_.size(); }
  // Entries of an interrupted run kept in the file after this run's own
  // (ResultsFile::carried()) until this run has the same case.
  void carry(nlohmann::json entries) { carried_ = std::move(entries); }

 private:
  void write();

  std::string path_;
  std::function<void(const std::vector<Run>&)> on_runs_;
  std::function<void()> before_last_write_;
  std::optional<Context> context_;
  std::vector<Run> runs_;
  nlohmann::json carried_ = nlohmann::json::array();
};

// One run's timing as the results file will carry it (its `timed_s` counter,
// real time, iterations, unit; errors and aggregates count no time).
CaseTiming case_timing(const benchmark::BenchmarkReporter::Run& run);

}  // namespace heapbench
