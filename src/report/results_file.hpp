#pragma once
// The results file named by --benchmark_out. Google Benchmark insists on
// opening (and truncating) the file it is given, so it is given a scratch file,
// "<path>.partial", and heapbench's SnapshotReporter writes <path> itself after
// each finished case. A run refused or failed before any case finished never
// touches <path>.
#include <nlohmann/json.hpp>

#include "heapbench/atomic_file.hpp"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace heapbench {

// The results could not be written (a full disk, a quota, a file size limit).
using ResultsWriteError = WriteError;

// The declarations every results file carries beside "context" and
// "benchmarks" (docs/json.md): "counters" (counter_units.hpp's counters_json())
// and "apis" (catalog.hpp's apis_json()). A reader takes the meaning of each
// counter and API from there, not from a table of its own.
inline constexpr const char* kCountersKey = "counters";
inline constexpr const char* kApisKey = "apis";
void add_declarations(nlohmann::ordered_json& doc);
void add_declarations(nlohmann::json& doc);

// A results document written from parts, byte for byte what dump(2) of the
// whole document writes, without serialising every entry again at every write
// (a run rewrites its file after each case: re-serialising all of it made the
// writes grow with the square of the cases):
//  - entry_text: one entry as it stands in "benchmarks", its dump(2) with each
//    line indented by the four spaces of that place;
//  - document_text: `head`, the document's dump(2) with an empty "benchmarks"
//    list among its top-level keys, with `entries` (entry_text's) put in it.
std::string entry_text(const nlohmann::json& entry);
std::string entry_text(const nlohmann::ordered_json& entry);
std::string document_text(const std::string& head, const std::vector<const std::string*>& entries);
// An entry's identity in a document: "<name>#<repetition_index>" (0 where it has none).
std::string entry_key(const nlohmann::json& entry);
std::string entry_key(const nlohmann::ordered_json& entry);

// Writes `content` to `path` through "<path>.tmp" and a rename (AtomicFile), so
// `path` holds either what it held before or all of `content`. On failure
// removes the ".tmp" and throws ResultsWriteError naming the file and the reason.
void write_atomically(const std::string& path, const std::string& content);

// Opens a scratch or lock file without following a symbolic link and without
// waiting on a FIFO (O_NOFOLLOW, O_NONBLOCK, O_CLOEXEC added to `flags`), and
// only if it is a regular file. Returns the descriptor, or -1 with the reason
// in `why`.
int open_scratch(const std::string& path, int flags, std::string* why = nullptr);

// Whether this process got SIGPIPE since remove_scratch_on_signal(): its
// standard output's reader is gone. The run then stops as when a write fails.
bool output_closed();

// Every heapbench process, from its start: SIGPIPE noted (output_closed()),
// not fatal, and SIGXFSZ ignored, so a closed pipe or a file size limit fails
// the write (EPIPE, EFBIG) and the program says so in one line, as for a full
// disk, instead of dying of the signal.
void watch_output();

class ResultsFile {
 public:
  // Refuses (std::runtime_error naming the flag and path) a path that exists
  // and is not a regular file -- a rename over /dev/null would replace the
  // device node, and one over a directory fails only after the cases ran -- and
  // a path another heapbench run is writing. A symbolic link to a regular file
  // is followed, so the link survives; a dangling one (a missing target or
  // folder, a loop) is refused. Creates the scratch file, so an
  // unwritable path is refused before any kernel runs, and holds a lock on it
  // until the process ends. Also refuses what would fail only after the first
  // case (refuse_unusable_scratch): a "<path>.groups" that is not a folder, a
  // "<path>.tmp" that cannot be made, a <path> a rename may not replace.
  // `flag`: the flag that named the path, for messages.
  explicit ResultsFile(std::string path, const std::string& flag = "--benchmark_out");
  ~ResultsFile();
  ResultsFile(const ResultsFile&) = delete;
  ResultsFile& operator=(const ResultsFile&) = delete;

  const std::string& path() const { return path_; }
  const std::string& partial_path() const { return partial_; }
  // Where --isolate and --devices keep their children's files during a run.
  std::string groups_path() const { return path_ + ".groups"; }

  // The entries <path> held when clean_leftovers() (merge.hpp) recovered an
  // interrupted run into it (its finished cases): this run keeps them in
  // <path> until it has its own results for the same cases. Empty when nothing
  // was recovered.
  const nlohmann::json& carried() const { return carried_; }
  void carry(nlohmann::json entries) { carried_ = std::move(entries); }

  // Removes the scratch file; path() is left as it is. The destructor does
  // too.
  void discard();

  // On SIGINT, SIGTERM or SIGHUP, removes the scratch files (the one above and
  // SnapshotReporter's "<path>.tmp") and then dies of the signal as it would
  // have: <path> keeps the last complete snapshot and nothing else is left
  // behind. Also ignores SIGXFSZ (a file size limit fails the write instead)
  // and notes SIGPIPE (output_closed()). One ResultsFile per process installs this.
  void remove_scratch_on_signal() const;

 private:
  void refuse_unusable_scratch(const std::string& flag) const;

  std::string path_;
  std::string partial_;
  int lock_fd_ = -1;
  bool discarded_ = false;
  nlohmann::json carried_ = nlohmann::json::array();
};

}  // namespace heapbench
