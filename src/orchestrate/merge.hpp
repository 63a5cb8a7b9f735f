#pragma once
// Merging the results files of child processes (--isolate, --devices) into one
// Google Benchmark JSON document. Cases a child was to run but did not finish
// (it died, or wrote nothing) become error results naming why.
#include <nlohmann/json.hpp>

#include "report/results_file.hpp"

#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace heapbench {

// A case a child was to run, as its planned record gives it: the benchmark
// name its entry will have and its axis_values (cases/axis_values.hpp),
// which an error entry for it carries when the child does not finish it.
struct PlannedEntry {
  std::string name;
  nlohmann::json axis_values;
};

class ResultsMerger {
 public:
  // tag_devices: give every entry "gpu_index" and a "/device:N" name suffix,
  // so the same case on two GPUs stays two cases.
  // error_entry: makes the entry of a case a child did not finish, from its
  // name and why (the harness's is Google Benchmark's writer, snapshot_reporter.hpp);
  // a merger without one only merges what children wrote (add_missing throws).
  using ErrorEntry = std::function<nlohmann::json(const std::string& name, const std::string& message)>;
  explicit ResultsMerger(bool tag_devices, ErrorEntry error_entry = {})
      : tag_(tag_devices), error_entry_(std::move(error_entry)) {}

  // When a child ends, its caller (src/orchestrate/orchestrate.cpp) calls add_runs, then
  // add_missing for the planned cases whose names add_runs did not return.
  //
  // Appends the runs of a child's results file (none if it is missing) and
  // returns the names it finished; what peek() showed of that device is
  // dropped. skip_present: leave out entries the document already has (by
  // name and repetition), for recovering a run from its files. Throws
  // std::runtime_error if the child's file exists but is not JSON.
  std::set<std::string> add_runs(int device, const std::string& path, bool skip_present = false);
  // The same for a child's document already read.
  std::set<std::string> add_runs(int device, const nlohmann::json& child, bool skip_present = false);
  // Shows the runs a still-running child of `device` has written so far after
  // the merged ones, replacing what the last peek() of that device showed, so
  // the merged file holds every finished case while a group runs. Returns how
  // many runs that child has written. Throws as add_runs().
  std::size_t peek(int device, const std::string& path);
  // Appends an error result for each of `cases`, with its axis_values, saying
  // how the child ended (`death` empty: it exited by itself without a result for them).
  void add_missing(int device, const std::vector<PlannedEntry>& cases, const std::string& death);
  // Starts from an earlier merged document (recovery of an interrupted run).
  void adopt(nlohmann::json doc);
  // Entries of an interrupted run that the next run keeps in the file: each
  // one is in document(), after this run's entries, until this run has an
  // entry of the same name and repetition. They count as none of this run's.
  void carry(nlohmann::json entries) { carried_ = std::move(entries); }
  // A key of the document's context (wall and timed seconds of the run).
  void set_context(const std::string& key, const std::string& value) { extra_context_[key] = value; }

  std::size_t entries() const;
  // Entries that came from the children's files (the cases they finished),
  // not made up for cases a child did not finish.
  std::size_t runs_merged() const { return entries() - errors_added_; }
  std::size_t errors_added() const { return errors_added_; }
  // The merged document: every added entry, then what peek() shows. Valid
  // until the next call on this merger.
  const nlohmann::json& document() const;
  // Writes document() to `path` (write_atomically: ResultsWriteError on failure),
  // each entry serialised once in the merger's life (results_file.hpp's
  // entry_text), not again at every write.
  void write(const std::string& path) const;
  // Calls f(entry) for this run's entries, the added ones then what peek()
  // shows, without composing the document (the carried entries are not this
  // run's).
  void for_each_own(const std::function<void(const nlohmann::json&)>& f) const;

 private:
  // The child's entries, tagged with the device where tag_devices; `names`
  // (if given) gets the run names the child wrote, untagged.
  nlohmann::json runs_of(int device, const nlohmann::json& child, std::set<std::string>* names = nullptr);
  // The document without its entries ("benchmarks" empty), with the extra
  // context and the declarations: what document() and write() both start from.
  nlohmann::json head() const;
  // texts_ and keys_ made for every entry added so far.
  void sync_texts() const;
  // The entry_keys of this run's entries: the added ones and what peek() shows.
  std::set<std::string> own_keys() const;

  bool tag_;
  ErrorEntry error_entry_;
  nlohmann::json doc_ = nlohmann::json{{"benchmarks", nlohmann::json::array()}};
  std::map<int, nlohmann::json> live_;  // device -> runs its running child has written
  std::map<std::string, std::string> extra_context_;
  std::vector<int> devices_seen_;
  std::size_t errors_added_ = 0;
  nlohmann::json carried_ = nlohmann::json::array();
  mutable nlohmann::json composed_;
  // write()'s texts: of doc_'s entries so far (in order), and of the entries
  // peek() showed and carried ones, by entry_key (an entry, once a child has
  // written it, does not change).
  mutable std::vector<std::string> texts_;
  mutable std::set<std::string> keys_;
  mutable std::map<std::string, std::string> texts_by_key_;
};

// What an isolated run keeps in "<FILE>.groups/run.json" so that a later run
// can recover the cases it finished if it is killed by a signal it cannot
// catch (SIGKILL, the OOM killer), which leaves it no chance to merge them.
struct RunManifest {
  bool tag_devices = false;
  bool wrote_results = false;                        // <FILE> holds this run's merged results
  std::vector<std::pair<int, std::string>> children;  // (device, results file), in the order they started

  void write(const std::string& path) const;  // write_atomically
  static RunManifest read(const std::string& path);
};

inline constexpr const char* kManifestName = "run.json";

// One entry per run: its name and repetition (aggregates have names of their own).
// entry_key(entry), an entry's identity: report/results_file.hpp.

struct Recovery {
  std::size_t added = 0;              // cases written into the results file
  std::vector<std::string> skipped;   // what was not recovered from, each with why
  bool carry = false;                 // the results file now holds the killed run's cases: a rerun keeps them
  std::string moved_aside;            // where `out_path` was moved, kept, when it was not heapbench's results ("": not moved)
  std::string moved_why;              // why it was not
};

// "" when `doc` is a results document heapbench writes: an object whose
// context (if any) is an object naming heapbench_schema_version, this
// heapbench's kSchemaVersion (a file of another version is not merged into
// one of this; recovery skips such a child file, saying why), and whose
// every entry is an object with a string name, an axis_values object and, if
// it has one, a boolean error_occurred; else why not. Another program's Google
// Benchmark JSON, a damaged file or one edited by hand is not.
std::string why_not_heapbench_results(const nlohmann::json& doc);

// Renames `path` to "<path>.<what>" (then "<path>.<what>.1", ".2", ...: never
// over an existing file) and returns the new name; throws std::runtime_error
// naming both if it cannot.
std::string move_aside(const std::string& path, const std::string& what);

// Removes the files heapbench writes in a run's `groups_path` (the manifest,
// the children's plans, results and scratch files, by their names) and then the
// folder if that left it empty. Returns the names of anything else in it, which
// is left where it is, with the folder.
std::vector<std::string> remove_run_files(const std::string& groups_path);

// Merges into `out_path` the cases that the killed run whose children's files
// are in `groups_path` finished, child file by child file: a damaged one costs
// only its own cases, and only files in `groups_path` named as run_children
// names them are read (never a file the manifest points to elsewhere). The
// manifest says whether `out_path` already holds the run's merged results,
// which are kept; without one (deleted, damaged) a results document there is
// kept. Writes `out_path` only if there is at least one such case; an
// `out_path` that is not heapbench's results (why_not_heapbench_results: not
// JSON, another program's) is then never merged but moved aside first
// (move_aside: "damaged" or "foreign"), kept and named in the Recovery. Throws
// std::runtime_error (ResultsWriteError for a failed write) if the cases cannot
// be written; `groups_path` is never touched.
Recovery recover_interrupted_run(const std::string& out_path, const std::string& groups_path);

// Scratch files a run killed with SIGKILL (or a power cut) leaves behind
// `out`: "<path>.tmp" and "<path>.groups/". Since this process holds the
// file's lock, no live run owns them. The cases finished in "<path>.groups/"
// are merged into <path> (recover_interrupted_run: a <path> that is not
// heapbench's results is moved aside, never merged), kept in it for this run
// (ResultsFile::carry), and only then are the files heapbench wrote there
// removed (anything else stays, with the folder). Returns what was done, in
// words, or "" if nothing was left behind. Throws std::runtime_error, leaving
// the folder as it was, if the cases cannot be written.
std::string clean_leftovers(ResultsFile& out);

}  // namespace heapbench
