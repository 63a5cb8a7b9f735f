#pragma once
// Files heapbench reads as its input (a trace, a Matrix Market graph): a
// regular file only, checked before it is opened (a FIFO would hang the
// open, /dev/zero never ends, a pipe cannot be measured), and a path as a
// one-line message shows it.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace heapbench {

struct InputFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// `path` as a message shows it: as it is, or quoted with C escapes where it
// holds a control character (a newline in a path must not split the line).
std::string shown_path(const std::string& path);

// Words read from a file, as a message quotes them: in single quotes where
// every byte is printable ASCII, else in double quotes with escapes (a byte a
// reader of the message takes for a line break, such as \x1e or U+2028, must
// not split it).
std::string shown_words(std::string_view text);

// The size in bytes of the regular file `path` (a link to one: the file it
// names). InputFileError, one line "PATH: why", for a path that does not
// exist or is not a regular file (a FIFO, a device, a folder, a socket).
std::uint64_t regular_input_size(const std::string& path);

// A hash of a file's content as a reader reads it (64-bit FNV-1a, 16 hex
// digits): the parent of a run reads its --trace or --graph once and hands
// the hash to every child and round, which read the file again and refuse it
// if it hashes differently (the file was replaced during the run). It tells a
// changed file from the same one; it is no defence against a file made to
// collide.
class ContentHash {
 public:
  void add(const void* bytes, std::size_t n);
  std::string hex() const;

 private:
  std::uint64_t h_ = 0xcbf29ce484222325ull;
};

// The one line for a file whose content hash is not the pinned one.
std::string changed_input_message(const std::string& path, const std::string& pinned, const std::string& now);
// The one line for a pinned file that no longer reads at all (`why`: its
// reader's line): the file the run read did, so this is another one, or one
// being written as it was read.
std::string unreadable_input_message(const std::string& path, const std::string& pinned, const std::string& why);

// `read(path)` (a record with a content_hash; throws Error, one line, for a
// file it refuses) held to `pinned` ("": not pinned): a file that hashes
// otherwise, or no longer reads, is refused as changed (Error).
template <class Error, class Read>
auto read_pinned(const std::string& path, const std::string& pinned, Read read) -> decltype(read(path)) {
  if (pinned.empty()) return read(path);
  decltype(read(path)) got;
  try {
    got = read(path);
  } catch (const Error& e) {
    throw Error(unreadable_input_message(path, pinned, e.what()));
  }
  if (got.content_hash != pinned) throw Error(changed_input_message(path, pinned, got.content_hash));
  return got;
}

}  // namespace heapbench
