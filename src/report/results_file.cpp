#include "report/results_file.hpp"

#include "cases/catalog.hpp"
#include "report/counter_units.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace heapbench {

void add_declarations(nlohmann::ordered_json& doc) {
  doc[kCountersKey] = counters_json();
  doc[kApisKey] = apis_json();
}

void add_declarations(nlohmann::json& doc) {
  doc[kCountersKey] = nlohmann::json(counters_json());
  doc[kApisKey] = nlohmann::json(apis_json());
}

namespace {

template <class Json>
std::string indented_entry(const Json& entry) {
  const std::string text = entry.dump(2);
  std::string out;
  out.reserve(text.size() + text.size() / 8 + 8);
  out += "    ";
  for (const char c : text) {
    out += c;
    if (c == '\n') out += "    ";  // a newline inside a string is written as \n: every one here ends a line
  }
  return out;
}

}  // namespace

std::string entry_text(const nlohmann::json& entry) { return indented_entry(entry); }
std::string entry_text(const nlohmann::ordered_json& entry) { return indented_entry(entry); }

std::string document_text(const std::string& head, const std::vector<const std::string*>& entries) {
  static const std::string kEmpty = "\n  \"benchmarks\": []";
  const std::size_t at = head.find(kEmpty);
  if (at == std::string::npos) throw std::logic_error("document_text: the head has no empty top-level \"benchmarks\"");
  if (entries.empty()) return head;
  std::size_t size = head.size() + 16;
  for (const std::string* e : entries) size += e->size() + 2;
  std::string out;
  out.reserve(size);
  out.append(head, 0, at);
  out += "\n  \"benchmarks\": [\n";
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (i != 0) out += ",\n";
    out += *entries[i];
  }
  out += "\n  ]";
  out.append(head, at + kEmpty.size(), std::string::npos);
  return out;
}

namespace {

template <class Json>
std::string key_of(const Json& b) {
  const Json name = b.contains("name") ? b["name"] : Json();
  const Json rep = b.contains("repetition_index") ? b["repetition_index"] : Json(0);
  return fmt::format("{}#{}", name.is_string() ? name.template get<std::string>() : name.dump(), rep.dump());
}

}  // namespace

std::string entry_key(const nlohmann::json& b) { return key_of(b); }
std::string entry_key(const nlohmann::ordered_json& b) { return key_of(b); }
namespace {

namespace fs = std::filesystem;

// What the signal handler removes: fixed buffers, since a handler may only
// make async-signal-safe calls (unlink, signal, raise) and touch such data.
char g_scratch[2][4096];
volatile std::sig_atomic_t g_output_closed = 0;

// SIGPIPE: whoever read this process's output is gone (`heapbench ... | head`).
// Dying of it lost the scratch files' cleanup and, under isolation, a child's
// unfinished cases; instead the next snapshot is written and the run stops
// (SnapshotReporter checks output_closed()).
extern "C" void note_output_closed(int) { g_output_closed = 1; }

extern "C" void remove_scratch_and_reraise(int sig) {
  for (const char* path : g_scratch) {
    if (path[0] != '\0') unlink(path);
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void copy_path(char* to, const std::string& from) {
  if (from.size() >= sizeof g_scratch[0]) return;  // too long to keep: left behind on a signal
  std::memcpy(to, from.c_str(), from.size() + 1);
}

std::string kind_of(fs::file_type t) {
  switch (t) {
    case fs::file_type::directory: return "a directory";
    case fs::file_type::character: return "a character device";
    case fs::file_type::block: return "a block device";
    case fs::file_type::fifo: return "a pipe";
    case fs::file_type::socket: return "a socket";
    default: return "not a regular file";
  }
}

}  // namespace

int open_scratch(const std::string& path, int flags, std::string* why) {
  // O_NOFOLLOW: a planted link would have its target truncated (as root, any
  // file); O_NONBLOCK: opening a FIFO for writing would wait for a reader.
  const int fd = ::open(path.c_str(), flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (why) *why = errno == ELOOP ? "it is a symbolic link" : errno == ENXIO ? "it is a pipe" : std::strerror(errno);
    return -1;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    if (why) *why = fmt::format("it exists and is {}", S_ISFIFO(st.st_mode) ? "a pipe" : "not a regular file");
    ::close(fd);
    return -1;
  }
  return fd;
}

bool output_closed() { return g_output_closed != 0; }

void watch_output() {
  std::signal(SIGXFSZ, SIG_IGN);
  std::signal(SIGPIPE, note_output_closed);
}

void write_atomically(const std::string& path, const std::string& content) {
  AtomicFile file(path);
  file.write(content);
  file.commit();
}

ResultsFile::ResultsFile(std::string path, const std::string& flag) : path_(std::move(path)) {
  std::error_code ec;
  const fs::file_status link = fs::symlink_status(path_, ec);
  const fs::file_status target = fs::status(path_, ec);
  if (fs::exists(target) && !fs::is_regular_file(target)) {
    throw std::runtime_error(fmt::format("{}={}: exists and is {}; heapbench replaces its results file "
                                         "whole, so it must be a regular file or a new name",
                                         flag, path_, kind_of(target.type())));
  }
  if (fs::is_symlink(link) && !fs::exists(target)) {
    // A rename would replace the link with a regular file, and its target would
    // never be written; writing through it would create a file somewhere the
    // user may not expect (or fail, for a loop or a missing folder): refused.
    const std::string to = fs::read_symlink(path_, ec).string();
    throw std::runtime_error(fmt::format("{}={}: is a symbolic link to '{}', which does not exist (a "
                                         "missing file or folder, or a loop of links); give the target or a new name",
                                         flag, path_, to));
  }
  if (fs::is_symlink(link)) path_ = fs::canonical(path_).string();  // keep the link
  partial_ = path_ + ".partial";
  // The scratch file doubles as the run's lock: a second run writing the same
  // results file would rename its snapshots over the first's.
  std::string why;
  lock_fd_ = open_scratch(partial_, O_WRONLY | O_CREAT, &why);
  if (lock_fd_ < 0) {
    throw std::runtime_error(fmt::format("{}={}: cannot write '{}': {}", flag, path_, partial_, why));
  }
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(lock_fd_);
    lock_fd_ = -1;
    throw std::runtime_error(fmt::format("{}={}: another heapbench run is writing it", flag, path_));
  }
  if (::ftruncate(lock_fd_, 0) != 0) {
    // Not fatal: Google Benchmark truncates it again when it opens it.
  }
  try {
    refuse_unusable_scratch(flag);
  } catch (...) {
    discard();
    ::close(lock_fd_);
    lock_fd_ = -1;
    throw;
  }
}

// With the lock held, before any case: what would fail only once a case had
// finished. "<path>.groups" must be a folder (an isolated run keeps its
// children's files there, and a file of that name is not a killed run's to
// remove); "<path>.tmp" must be creatable, and a rename of it over <path>
// permitted: in a folder with the sticky bit (/tmp) only the owner of <path>
// (or of the folder) may replace it, so a run over another user's file
// finished its cases and then could not write them.
void ResultsFile::refuse_unusable_scratch(const std::string& flag) const {
  std::error_code ec;
  const fs::file_status groups = fs::symlink_status(groups_path(), ec);
  if (fs::exists(groups) && groups.type() != fs::file_type::directory) {
    throw std::runtime_error(fmt::format("{}={}: '{}' exists and is {}, not the folder heapbench keeps an isolated "
                                         "run's files in; move it away or give another name",
                                         flag, path_, groups_path(),
                                         fs::is_symlink(groups)        ? std::string("a symbolic link")
                                         : fs::is_regular_file(groups) ? std::string("a regular file")
                                                                       : kind_of(groups.type())));
  }
  const std::string tmp = path_ + ".tmp";
  // A snapshot a killed run never renamed (clean_leftovers removes it too).
  if (::unlink(tmp.c_str()) != 0 && errno != ENOENT) {
    throw std::runtime_error(fmt::format("{}={}: cannot remove '{}', left by an earlier run: {}", flag, path_, tmp,
                                         std::strerror(errno)));
  }
  std::string why;
  const int fd = open_scratch(tmp, O_WRONLY | O_CREAT | O_EXCL, &why);
  if (fd < 0) throw std::runtime_error(fmt::format("{}={}: cannot write '{}': {}", flag, path_, tmp, why));
  ::close(fd);
  ::unlink(tmp.c_str());
  struct stat file {}, dir {};
  const std::string folder = fs::path(path_).parent_path().empty() ? "." : fs::path(path_).parent_path().string();
  if (::lstat(path_.c_str(), &file) == 0 && ::stat(folder.c_str(), &dir) == 0 && (dir.st_mode & S_ISVTX) != 0 &&
      ::geteuid() != 0 && file.st_uid != ::geteuid() && dir.st_uid != ::geteuid()) {
    throw std::runtime_error(fmt::format("{}={}: belongs to another user (uid {}) in a folder with the sticky bit "
                                         "('{}'), where only its owner may replace it; give a new name",
                                         flag, path_, file.st_uid, folder));
  }
}

ResultsFile::~ResultsFile() {
  if (lock_fd_ >= 0) {
    // An error that ends the process early (an output that cannot be written)
    // leaves no scratch file either.
    discard();
    ::close(lock_fd_);
  }
}

void ResultsFile::discard() {
  // Once: a later call could remove the lock file of a run that started since.
  if (!discarded_) std::remove(partial_.c_str());
  discarded_ = true;
}

void ResultsFile::remove_scratch_on_signal() const {
  copy_path(g_scratch[0], partial_);
  copy_path(g_scratch[1], path_ + ".tmp");
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, remove_scratch_and_reraise);
  // A file size limit (RLIMIT_FSIZE) then fails the write (EFBIG) as a full
  // disk does, and the run stops as it does then, instead of dying with its
  // scratch files left; ignored, it stays ignored in the children.
  std::signal(SIGXFSZ, SIG_IGN);
  std::signal(SIGPIPE, note_output_closed);
}

}  // namespace heapbench
