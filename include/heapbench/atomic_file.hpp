#pragma once
// heapbench's one way of writing a file: to "<path><suffix>" (".tmp" unless
// told), renamed to <path> once whole, so <path> holds either what it held
// before or everything written. The scratch name is made fresh: a leftover
// there (or a link planted there) is removed, never opened, and the new file
// is created with O_EXCL | O_NOFOLLOW, so no write ever lands on a link's
// target. Used by the results writer (write_atomically) and by the trace
// Recorder of heapbench/trace.cuh, which streams its file in pieces.
//
//   heapbench::AtomicFile f("out.json");
//   f.write(text.data(), text.size());
//   f.commit();                        // renamed into place; a file never committed is removed
//
// Header-only and POSIX: it is public (trace.cuh is built into your program).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

namespace heapbench {

// A file could not be written: a full disk, a quota, a file size limit, a
// folder that does not exist. The message names the file and the reason.
struct WriteError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class AtomicFile {
 public:
  explicit AtomicFile(std::string path, const char* suffix = ".tmp") : path_(std::move(path)), scratch_(path_ + suffix) {
    ::unlink(scratch_.c_str());
    fd_ = ::open(scratch_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd_ < 0) fail("cannot write '" + scratch_ + "': ", errno == ELOOP ? "it is a symbolic link" : std::strerror(errno));
  }
  // A file never committed (an exception on the way) is removed: half a file is of no use.
  ~AtomicFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(scratch_.c_str());
  }
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, std::size_t bytes) {
    const char* p = static_cast<const char*>(data);
    for (std::size_t done = 0; done < bytes;) {
      const ssize_t n = ::write(fd_, p + done, bytes - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail("cannot write '" + scratch_ + "': ", std::strerror(n < 0 ? errno : ENOSPC));
      done += static_cast<std::size_t>(n);
    }
  }
  void write(const std::string& text) { write(text.data(), text.size()); }

  // Closes the scratch file and renames it to the path.
  void commit() {
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) fail("cannot write '" + scratch_ + "': ", std::strerror(errno));
    if (std::rename(scratch_.c_str(), path_.c_str()) != 0) {
      fail("cannot move '" + scratch_ + "' to '" + path_ + "': ", std::strerror(errno));
    }
    committed_ = true;
  }

  const std::string& path() const { return path_; }
  const std::string& scratch_path() const { return scratch_; }

 private:
  std::string path_, scratch_;
  int fd_ = -1;
  bool committed_ = false;

  [[noreturn]] static void fail(const std::string& what, const char* why) { throw WriteError(what + why); }
};

}  // namespace heapbench
