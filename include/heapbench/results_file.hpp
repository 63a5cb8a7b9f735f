#pragma once
// The results file named by --benchmark_out. Google Benchmark insists on
// opening (and truncating) the file it is given, so it is given a scratch file,
// "<path>.partial", and heapbench's SnapshotReporter writes <path> itself after
// each finished case. A run refused or failed before any case finished never
// touches <path>.
#include <string>

namespace heapbench {

class ResultsFile {
 public:
  // Creates the scratch file, so an unwritable path is refused before any
  // kernel runs. Throws std::runtime_error naming the path otherwise.
  explicit ResultsFile(std::string path);
  ResultsFile(const ResultsFile&) = delete;
  ResultsFile& operator=(const ResultsFile&) = delete;

  const std::string& path() const { return path_; }
  const std::string& partial_path() const { return partial_; }

  // Removes the scratch file; path() is left as it is.
  void discard();

  // On SIGINT, SIGTERM or SIGHUP, removes the scratch files (the one above and
  // SnapshotReporter's "<path>.tmp") and then dies of the signal as it would
  // have: <path> keeps the last complete snapshot and nothing else is left
  // behind. One ResultsFile per process installs this.
  void remove_scratch_on_signal() const;

 private:
  std::string path_;
  std::string partial_;
};

}  // namespace heapbench
