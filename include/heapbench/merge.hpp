#pragma once
// Merging the results files of child processes (--isolate, --devices) into one
// Google Benchmark JSON document. Cases a child was to run but did not finish
// (it died, or wrote nothing) become error results naming why.
#include <nlohmann/json.hpp>

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

  // Throws std::runtime_error if the child's file exists but is not JSON.
  void add(const GroupResult& g);
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
