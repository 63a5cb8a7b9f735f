#pragma once
// The file a case reads and its content hash as the run's parent read it: the
// harness's part of a Case (Case::input), which the public header only names.
// A round that reads a file hashing otherwise is an error (plan/input_file.hpp).
#include <memory>
#include <string>
#include <utility>

#include "heapbench/case.hpp"

namespace heapbench {

struct CaseInput {
  std::string path;  // as given on the command line (--graph, --trace) or to a child (--child-input); never from a results file
  std::string hash;  // "": not pinned
};

// The case's file ("" for none) and its pinned hash ("" for none).
inline const std::string& input_path(const Case& c) {
  static const std::string none;
  return c.input ? c.input->path : none;
}
inline const std::string& input_hash(const Case& c) {
  static const std::string none;
  return c.input ? c.input->hash : none;
}
// The case reads `path` at `hash` (an empty path: it reads no file).
inline void set_input(Case& c, std::string path, std::string hash) {
  c.input = path.empty() ? nullptr : std::make_shared<const CaseInput>(CaseInput{std::move(path), std::move(hash)});
}

}  // namespace heapbench
