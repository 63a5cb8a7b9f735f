#include "snapshot_reporter.hpp"

#include "families.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <iterator>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace heapbench {

bool SnapshotReporter::ReportContext(const Context& context) {
  context_.emplace(context);
  return true;
}

void SnapshotReporter::ReportRuns(const std::vector<Run>& runs) {
  for (Run r : runs) {
    // Google Benchmark writes a non-finite counter as a bare NaN or inf, which
    // is not JSON (the coefficient of variation of a counter whose mean is 0,
    // such as fail_rate over repetitions, is 0/0): such a value is left out.
    for (auto it = r.counters.begin(); it != r.counters.end();) {
      it = std::isfinite(it->second.value) ? std::next(it) : r.counters.erase(it);
    }
    runs_.push_back(std::move(r));
  }
  write();
  if (device_error_ends_process()) {
    // A child of isolation after a device error: the case's error result is on
    // disk; the parent runs the rest of the group in a new process.
    std::fflush(stdout);
    std::_Exit(kExitDeviceError);
  }
}

void SnapshotReporter::Finalize() {
  if (!runs_.empty()) write();
}

void SnapshotReporter::write() {
  std::ostringstream out, err;
  benchmark::JSONReporter json;
  json.SetOutputStream(&out);
  json.SetErrorStream(&err);
  if (context_) json.ReportContext(*context_);
  json.ReportRuns(runs_);
  json.Finalize();
  const std::string tmp = path_ + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << out.str();
    f.flush();
    if (!f) throw std::runtime_error(fmt::format("cannot write '{}': {}", tmp, std::strerror(errno)));
  }
  if (std::rename(tmp.c_str(), path_.c_str()) != 0) {
    throw std::runtime_error(fmt::format("cannot move '{}' to '{}': {}", tmp, path_, std::strerror(errno)));
  }
}

}  // namespace heapbench
