#include "heapbench/metrics.hpp"

namespace heapbench {

Tally& Tally::operator+=(const Tally& o) {
  attempts += o.attempts;
  successes += o.successes;
  bytes += o.bytes;
  frees += o.frees;
  alloc_seconds += o.alloc_seconds;
  free_seconds += o.free_seconds;
  use_bytes += o.use_bytes;
  use_seconds += o.use_seconds;
  return *this;
}

Figures compute_figures(const Tally& t) {
  Figures f;
  if (t.alloc_seconds > 0) {
    f.allocs_per_s = static_cast<double>(t.successes) / t.alloc_seconds;
    f.bytes_per_s = static_cast<double>(t.bytes) / t.alloc_seconds;
  }
  if (t.free_seconds > 0) f.frees_per_s = static_cast<double>(t.frees) / t.free_seconds;
  if (t.use_seconds > 0) f.use_bytes_per_s = static_cast<double>(t.use_bytes) / t.use_seconds;
  if (t.attempts > 0) f.fail_rate = static_cast<double>(t.attempts - t.successes) / static_cast<double>(t.attempts);
  return f;
}

}  // namespace heapbench
