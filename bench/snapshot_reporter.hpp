#pragma once
// The results file reporter: after every case it rewrites the whole file with
// Google Benchmark's own JSONReporter (context + every run so far) into
// "<path>.tmp" and renames it over <path>. The file on disk is therefore valid
// JSON holding every finished case at every moment: a crash, Ctrl-C or SIGTERM
// loses only the case that was running. A run that finishes no case never
// touches <path>.
#include <benchmark/benchmark.h>

#include <optional>
#include <string>
#include <vector>

namespace heapbench {

class SnapshotReporter final : public benchmark::BenchmarkReporter {
 public:
  explicit SnapshotReporter(std::string path) : path_(std::move(path)) {}

  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override;

  std::size_t runs_written() const { return runs_.size(); }

 private:
  void write();

  std::string path_;
  std::optional<Context> context_;
  std::vector<Run> runs_;
};

}  // namespace heapbench
