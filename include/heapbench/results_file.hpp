#pragma once
// The results file named by --benchmark_out is never truncated by a run that
// fails: Google Benchmark writes to "<path>.partial", and only a run that
// produced results renames it over <path>.
#include <string>

namespace heapbench {

class ResultsFile {
 public:
  // Checks that the partial file can be created (so an unwritable path is refused
  // before any kernel runs). Throws std::runtime_error naming the path otherwise.
  explicit ResultsFile(std::string path);
  ResultsFile(const ResultsFile&) = delete;
  ResultsFile& operator=(const ResultsFile&) = delete;

  const std::string& path() const { return path_; }
  const std::string& partial_path() const { return partial_; }

  // Atomically replaces path() with the partial file. Throws on failure.
  void commit();
  // Leaves path() untouched and removes the partial file.
  void discard();

 private:
  std::string path_;
  std::string partial_;
};

}  // namespace heapbench
