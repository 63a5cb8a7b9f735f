#include "heapbench/metrics.hpp"

#include <algorithm>
#include <cmath>

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

namespace heapbench {

Percentiles percentiles(std::vector<double>& samples) {
  Percentiles p;
  if (samples.empty()) return p;
  auto rank = [&](double q) {
    const auto n = samples.size();
    auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(n)));
    k = std::clamp<std::size_t>(k, 1, n) - 1;
    std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(k), samples.end());
    return samples[k];
  };
  p.p50 = rank(0.50);
  p.p90 = rank(0.90);
  p.p99 = rank(0.99);
  p.max = *std::max_element(samples.begin(), samples.end());
  return p;
}

}  // namespace heapbench

namespace heapbench {

CapacityFigures capacity_figures(const CapacityRaw& raw) {
  CapacityFigures f;
  const auto& a = raw.addresses;
  const double n = static_cast<double>(a.size());
  if (a.empty() || raw.size == 0) return f;
  const double size = static_cast<double>(raw.size);
  if (raw.heap_bytes > 0) f.utilization = n * size / static_cast<double>(raw.heap_bytes);
  if (a.size() >= 2) {
    std::vector<double> strides;
    strides.reserve(a.size() - 1);
    for (std::size_t i = 1; i < a.size(); ++i) strides.push_back(static_cast<double>(a[i] - a[i - 1]));
    f.overhead_bytes = percentiles(strides).p50 - size;
  }
  f.addr_range_ratio = (static_cast<double>(a.back() - a.front()) + size) / (n * size);
  for (int k = 0; k < 3; ++k) {
    if (raw.freed_bytes > 0) {
      f.ext_frag[k] = 1.0 - static_cast<double>(raw.refill_bytes[k]) / static_cast<double>(raw.freed_bytes);
    }
  }
  f.recovery = static_cast<double>(raw.recovery_blocks) / n;
  if (raw.recovery_seconds > 0) f.recovery_allocs_per_s = static_cast<double>(raw.recovery_blocks) / raw.recovery_seconds;
  if (raw.random_freed_bytes > 0) {
    f.ext_frag_random =
        1.0 - static_cast<double>(raw.random_refill_bytes) / static_cast<double>(raw.random_freed_bytes);
  }
  return f;
}

}  // namespace heapbench

namespace heapbench {

void AddressSpan::add(const CapacityRaw& round) {
  if (round.addresses.empty()) return;
  min_ = std::min(min_, round.addresses.front());
  max_ = std::max(max_, round.addresses.back());
  blocks_ = std::max<std::uint64_t>(blocks_, round.addresses.size());
  size_ = round.size;
}

double AddressSpan::ratio() const {
  if (blocks_ == 0 || size_ == 0) return 0;
  return (static_cast<double>(max_ - min_) + static_cast<double>(size_)) /
         (static_cast<double>(blocks_) * static_cast<double>(size_));
}

}  // namespace heapbench

namespace heapbench {

double median_stride(std::vector<std::uint64_t>& addresses) {
  if (addresses.size() < 2) return 0;
  std::sort(addresses.begin(), addresses.end());
  std::vector<double> strides;
  strides.reserve(addresses.size() - 1);
  for (std::size_t i = 1; i < addresses.size(); ++i) strides.push_back(static_cast<double>(addresses[i] - addresses[i - 1]));
  return percentiles(strides).p50;
}

}  // namespace heapbench
