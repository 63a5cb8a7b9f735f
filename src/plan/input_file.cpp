#include "plan/input_file.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace heapbench {

std::string shown_path(const std::string& path) {
  const bool plain = std::none_of(path.begin(), path.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
  return plain ? path : fmt::format("{:?}", path);
}

std::string shown_words(std::string_view text) {
  const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 && u < 0x7f;
  });
  if (plain) return fmt::format("'{}'", text);
  std::string escaped = "\"";
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    escaped += u >= 0x20 && u < 0x7f && c != '"' && c != '\\' ? std::string(1, c) : fmt::format("\\x{:02x}", u);
  }
  return escaped + "\"";
}

std::uint64_t regular_input_size(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw InputFileError(fmt::format("{}: cannot be opened for reading ({})", shown_path(path), std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    const char* kind = S_ISFIFO(st.st_mode)  ? "a FIFO or pipe"
                       : S_ISCHR(st.st_mode) ? "a character device"
                       : S_ISBLK(st.st_mode) ? "a block device"
                       : S_ISDIR(st.st_mode) ? "a folder"
                                             : "a socket";
    throw InputFileError(
        fmt::format("{}: is {}, not a regular file: give the file itself", shown_path(path), kind));
  }
  return static_cast<std::uint64_t>(st.st_size);
}

void ContentHash::add(const void* bytes, std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(bytes);
  for (std::size_t i = 0; i < n; ++i) h_ = (h_ ^ p[i]) * 0x100000001b3ull;
}

std::string ContentHash::hex() const { return fmt::format("{:016x}", h_); }

std::string changed_input_message(const std::string& path, const std::string& pinned, const std::string& now) {
  return fmt::format("{}: changed since this run first read it (content hash {}, not {}): a run measures one file; "
                     "start it again",
                     shown_path(path), now, pinned);
}

std::string unreadable_input_message(const std::string& path, const std::string& pinned, const std::string& why) {
  return fmt::format("{}: changed since this run first read it (content hash {}; now: {}): a run measures one file; "
                     "start it again",
                     shown_path(path), pinned, why);
}

}  // namespace heapbench
