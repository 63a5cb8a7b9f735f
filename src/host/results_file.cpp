#include "heapbench/results_file.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "heapbench/merge.hpp"

namespace heapbench {
namespace {

namespace fs = std::filesystem;

// What the signal handler removes: fixed buffers, since a handler may only
// make async-signal-safe calls (unlink, signal, raise) and touch such data.
char g_scratch[2][4096];

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

// A child of a killed run dies with it (PR_SET_PDEATHSIG), but may still be
// between the signal and its end; each child holds a lock on its own scratch
// file until it ends. Waits a few seconds at most for them.
void wait_for_children_of_a_dead_run(const fs::path& groups) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(groups, ec)) {
    if (e.path().extension() != ".partial") continue;
    const int fd = ::open(e.path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    for (int i = 0; i < 50 && ::flock(fd, LOCK_EX | LOCK_NB) != 0; ++i) ::usleep(100 * 1000);
    ::close(fd);
  }
}

}  // namespace

void write_atomically(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp";
  std::string why;
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << content;
    f.flush();
    if (!f) why = std::strerror(errno);
    f.close();
    if (why.empty() && !f) why = std::strerror(errno);
  }
  if (!why.empty()) {
    std::remove(tmp.c_str());  // half a file is of no use to anyone
    throw ResultsWriteError(fmt::format("cannot write '{}': {}", tmp, why));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw ResultsWriteError(fmt::format("cannot move '{}' to '{}': {}", tmp, path, why));
  }
}

ResultsFile::ResultsFile(std::string path) : path_(std::move(path)) {
  std::error_code ec;
  const fs::file_status link = fs::symlink_status(path_, ec);
  const fs::file_status target = fs::status(path_, ec);
  if (fs::exists(target) && !fs::is_regular_file(target)) {
    throw std::runtime_error(fmt::format("--benchmark_out={}: exists and is {}; heapbench replaces its results file "
                                         "whole, so it must be a regular file or a new name",
                                         path_, kind_of(target.type())));
  }
  if (fs::is_symlink(link) && fs::exists(target)) path_ = fs::canonical(path_).string();  // keep the link
  partial_ = path_ + ".partial";
  // The scratch file doubles as the run's lock: a second run writing the same
  // results file would rename its snapshots over the first's.
  lock_fd_ = ::open(partial_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) {
    throw std::runtime_error(fmt::format("--benchmark_out={}: cannot write '{}': {}", path_, partial_, std::strerror(errno)));
  }
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(lock_fd_);
    lock_fd_ = -1;
    throw std::runtime_error(fmt::format("--benchmark_out={}: another heapbench run is writing it", path_));
  }
  if (::ftruncate(lock_fd_, 0) != 0) {
    // Not fatal: Google Benchmark truncates it again when it opens it.
  }
}

ResultsFile::~ResultsFile() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

std::string ResultsFile::clean_leftovers() {
  std::string said;
  std::error_code ec;
  if (fs::exists(groups_path(), ec)) {
    wait_for_children_of_a_dead_run(groups_path());
    try {
      const std::size_t n = recover_interrupted_run(path_, groups_path());
      if (n > 0) said = fmt::format("recovered {} finished case(s) of an interrupted run from '{}' into '{}'", n,
                                    groups_path(), path_);
    } catch (const std::exception& e) {
      said = fmt::format("could not recover the cases of an interrupted run from '{}' ({}); removed it", groups_path(),
                         e.what());
    }
    fs::remove_all(groups_path(), ec);
    if (said.empty()) {
      said = fmt::format("removed '{}', left by an interrupted run ('{}' already held every case it finished)",
                         groups_path(), path_);
    }
  }
  // A snapshot never renamed over <path>: possibly incomplete, and at most the
  // one case that was being written when the run was killed ahead of <path>.
  fs::remove(path_ + ".tmp", ec);
  return said;
}

void ResultsFile::discard() { std::remove(partial_.c_str()); }

void ResultsFile::remove_scratch_on_signal() const {
  copy_path(g_scratch[0], partial_);
  copy_path(g_scratch[1], path_ + ".tmp");
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, remove_scratch_and_reraise);
}

}  // namespace heapbench
