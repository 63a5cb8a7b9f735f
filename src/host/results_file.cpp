#include "heapbench/results_file.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace heapbench {
namespace {

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

}  // namespace

ResultsFile::ResultsFile(std::string path) : path_(std::move(path)), partial_(path_ + ".partial") {
  std::ofstream probe(partial_, std::ios::trunc);
  if (!probe) {
    throw std::runtime_error(fmt::format("--benchmark_out={}: cannot write '{}': {}", path_, partial_, std::strerror(errno)));
  }
}

void ResultsFile::discard() { std::remove(partial_.c_str()); }

void ResultsFile::remove_scratch_on_signal() const {
  copy_path(g_scratch[0], partial_);
  copy_path(g_scratch[1], path_ + ".tmp");
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, remove_scratch_and_reraise);
}

}  // namespace heapbench
