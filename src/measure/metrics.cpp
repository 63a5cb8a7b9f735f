#include "measure/metrics.hpp"

#include <algorithm>
#include <cmath>

#include "measure/iteration_result.hpp"

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

namespace {

class Combined final : public Reducer {
 public:
  explicit Combined(std::vector<std::unique_ptr<Reducer>> parts) : parts_(std::move(parts)) {}
  void add(const IterationResult& batch) override {
    for (auto& p : parts_) p->add(batch);
  }
  void write_counters(Counters& out) const override {
    for (const auto& p : parts_) p->write_counters(out);
  }
  bool reports_heap_bytes() const override {
    return std::any_of(parts_.begin(), parts_.end(), [](const auto& p) { return p->reports_heap_bytes(); });
  }

 private:
  std::vector<std::unique_ptr<Reducer>> parts_;
};

void append(std::vector<double>& all, const std::vector<double>& more, std::size_t cap) {
  const std::size_t room = cap - std::min(cap, all.size());
  all.insert(all.end(), more.begin(), more.begin() + static_cast<std::ptrdiff_t>(std::min(room, more.size())));
}

void write_percentiles(Counters& out, const std::string& prefix, std::vector<double> samples) {
  const Percentiles p = percentiles(samples);
  out[prefix + "lat_p50_ns"] = p.p50;
  out[prefix + "lat_p90_ns"] = p.p90;
  out[prefix + "lat_p99_ns"] = p.p99;
  out[prefix + "lat_max_ns"] = p.max;
}

class Allocation final : public Reducer {
 public:
  explicit Allocation(AllocationCounters which) : which_(which) {}
  void add(const IterationResult& batch) override {
    total_ += batch.tally;
    const std::size_t rounds = std::max<std::size_t>(batch.round_seconds.size(), 1);
    peak_ = std::max(peak_, static_cast<double>(batch.tally.bytes) / static_cast<double>(rounds));
  }
  void write_counters(Counters& out) const override {
    const Figures f = compute_figures(total_);
    out["allocs_per_s"] = f.allocs_per_s;
    if (which_.frees) out["frees_per_s"] = f.frees_per_s;
    out["bytes_per_s"] = f.bytes_per_s;
    if (which_.fail_rate) out["fail_rate"] = f.fail_rate;
    if (which_.use) out["use_bytes_per_s"] = f.use_bytes_per_s;
    if (which_.peak) out["peak_bytes"] = peak_;
  }
  bool reports_heap_bytes() const override { return true; }

 private:
  AllocationCounters which_;
  Tally total_;
  double peak_ = 0;
};

class Latency final : public Reducer {
 public:
  void add(const IterationResult& batch) override {
    if (const auto* s = batch.observed.find<LatencySamples>()) {
      append(alloc_, s->alloc_ns, kMaxLatencySamples);
      append(free_, s->free_ns, kMaxLatencySamples);
    }
  }
  void write_counters(Counters& out) const override {
    write_percentiles(out, "", alloc_);
    write_percentiles(out, "free_", free_);
  }

 private:
  std::vector<double> alloc_, free_;
};

// Each batch's median stride, averaged over the batches with two blocks or more.
class Stride final : public Reducer {
 public:
  void add(const IterationResult& batch) override {
    const auto* b = batch.observed.find<BlockAddresses>();
    if (b == nullptr || b->addresses.size() < 2) return;
    std::vector<std::uint64_t> a = b->addresses;
    sum_ += median_stride(a);
    ++batches_;
  }
  void write_counters(Counters& out) const override {
    if (batches_ > 0) out["stride_bytes"] = sum_ / batches_;
  }

 private:
  double sum_ = 0;
  int batches_ = 0;
};

class Capacity final : public Reducer {
 public:
  void add(const IterationResult& batch) override {
    const auto* raw = batch.observed.find<CapacityRaw>();
    if (raw == nullptr) return;
    span_.add(*raw);
    const CapacityFigures f = capacity_figures(*raw);
    ++rounds_;
    fill_only_ = raw->fill_only;
    sum_.utilization += f.utilization;
    sum_.overhead_bytes += f.overhead_bytes;
    sum_.addr_range_ratio += f.addr_range_ratio;
    for (int k = 0; k < 3; ++k) sum_.ext_frag[k] += f.ext_frag[k];
    sum_.recovery += f.recovery;
    sum_.recovery_allocs_per_s += f.recovery_allocs_per_s;
    sum_.ext_frag_random += f.ext_frag_random;
  }
  void write_counters(Counters& out) const override {
    if (rounds_ == 0) return;
    const double n = rounds_;
    out["utilization"] = sum_.utilization / n;
    out["overhead_bytes"] = sum_.overhead_bytes / n;
    out["addr_range_ratio"] = sum_.addr_range_ratio / n;
    out["addr_range_ratio_rounds"] = span_.ratio();
    if (fill_only_) return;  // capacity_fill measured nothing after the first fill
    out["ext_frag"] = sum_.ext_frag[0] / n;
    out["ext_frag_4x"] = sum_.ext_frag[1] / n;
    out["ext_frag_8x"] = sum_.ext_frag[2] / n;
    out["ext_frag_random"] = sum_.ext_frag_random / n;
    out["recovery"] = sum_.recovery / n;
    out["recovery_allocs_per_s"] = sum_.recovery_allocs_per_s / n;
  }

 private:
  int rounds_ = 0;
  bool fill_only_ = false;
  CapacityFigures sum_;
  AddressSpan span_;
};

}  // namespace

std::unique_ptr<Reducer> combine(std::vector<std::unique_ptr<Reducer>> parts) {
  return std::make_unique<Combined>(std::move(parts));
}

std::unique_ptr<Reducer> allocation_reducer(AllocationCounters which) { return std::make_unique<Allocation>(which); }
std::unique_ptr<Reducer> latency_reducer() { return std::make_unique<Latency>(); }
std::unique_ptr<Reducer> stride_reducer() { return std::make_unique<Stride>(); }
std::unique_ptr<Reducer> capacity_reducer() { return std::make_unique<Capacity>(); }

}  // namespace heapbench
