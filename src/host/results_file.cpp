#include "heapbench/results_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace heapbench {

ResultsFile::ResultsFile(std::string path) : path_(std::move(path)), partial_(path_ + ".partial") {
  std::ofstream probe(partial_, std::ios::trunc);
  if (!probe) {
    throw std::runtime_error(fmt::format("--benchmark_out={}: cannot write '{}': {}", path_, partial_, std::strerror(errno)));
  }
}

void ResultsFile::discard() { std::remove(partial_.c_str()); }

}  // namespace heapbench
