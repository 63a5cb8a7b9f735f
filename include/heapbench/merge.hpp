#pragma once
// Merging the results files of child processes (--isolate, --devices) into one
// Google Benchmark JSON document. Cases a child was to run but did not finish
// (it died, or wrote nothing) become error results naming why.
#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <vector>

namespace heapbench {

struct GroupResult {
  int device = 0;                      // the GPU the child ran on
  std::string path;                    // the child's results file (may be missing)
  std::vector<std::string> expected;   // benchmark names the child was to run
  std::string death;                   // empty if the child exited by itself, else how it ended
};

class ResultsMerger {
 public:
  // tag_devices: give every entry "gpu_index" and a "/device:N" name suffix,
  // so the same case on two GPUs stays two cases.
  explicit ResultsMerger(bool tag_devices) : tag_(tag_devices) {}

  // add_runs, then add_missing for the expected names the child did not finish.
  // Throws std::runtime_error if the child's file exists but is not JSON.
  void add(const GroupResult& g);
  // Appends the runs of a child's results file (none if it is missing) and
  // returns the names it finished. Throws as add().
  std::set<std::string> add_runs(int device, const std::string& path);
  // Appends an error result for each of `names`, saying how the child ended
  // (`death` empty: it exited by itself without a result for them).
  void add_missing(int device, const std::vector<std::string>& names, const std::string& death);
  std::size_t entries() const { return doc_.contains("benchmarks") ? doc_["benchmarks"].size() : 0; }
  std::size_t errors_added() const { return errors_added_; }
  const nlohmann::json& document() const { return doc_; }
  // Writes the document to `path` through "<path>.tmp" and a rename.
  void write(const std::string& path) const;

 private:
  bool tag_;
  nlohmann::json doc_ = nlohmann::json::object();
  std::vector<int> devices_seen_;
  std::size_t errors_added_ = 0;
};

}  // namespace heapbench
