// hash: a hash table with chained buckets whose nodes come from the allocator.
//
// Workload: `threads` threads each insert one key (a node of a 24-byte header
// and a value of [size_min, size] bytes, pushed on its bucket's chain under
// the bucket's lock: src/workloads/hash_body.hpp), at load_pct keys per bucket
// x 100; then every other key is deleted (unlinked under the lock, its node
// freed); then the table is released (every node left freed). The three
// launches are timed by CUDA events. Untimed launches look every key up after
// the inserts and after the deletes and count every chain: a key missing,
// doubled, left after its delete, a value that does not read back, or a count
// that differs is an error, never a figure. Any NULL is an error too: the
// table could not be built on that heap.
//
// Counters: insert_s, delete_s, release_s (seconds per round of each launch),
// inserts_per_s, deletes_per_s (per second of their launch), heap_bytes.
#ifdef HEAPBENCH_PATTERN_TRAITS_ONLY  // the traits, read in namespace heapbench::patterns (pattern_traits.hpp)
inline constexpr PatternTraits hash_traits =
    PatternTraits{"hash", "a chained hash table: a node allocated per insert, freed per delete"}
        .with_axes("size_min", "load_pct")
        .in_own_sweep();
inline constexpr PatternList<1> hash_patterns = {&hash_traits};
#else
#include "device/round.cuh"
#include "workloads/hash_body.hpp"
#include "workloads/workload_metrics.hpp"

namespace heapbench::detail {

// The handle's calls, as the bodies make them.
template <class Api>
class HashRound final : public Round {
 public:
  HashRound(const Case& c, double budget_s)
      : owner_(c), buckets_(workloads::buckets_for(c.threads, c.axis("load_pct"))),
        budget_ns_(budget_ns(budget_s)), c_(c) {
    table_ = {buckets_.get(), workloads::buckets_for(c.threads, c.axis("load_pct")), c.size_min, c.size};
  }
  void begin_batch() override {}
  void begin() override {
    owner_.reset();
    HB_CUDA_CHECK(cudaMemsetAsync(buckets_.get(), 0, table_.n_buckets * sizeof(workloads::HashBucket)));
    counters_.begin(budget_ns_);
  }
  void allocate() override {
    timers_[0].start();
    insert();
    timers_[0].stop();
  }
  void use() override {
    check(0);
    timers_[1].start();
    erase();
    timers_[1].stop();
    check(1);
  }
  void release() override {
    timers_[2].start();
    release_all();
    timers_[2].stop();
  }
  IterationResult collect() override {
    HB_CUDA_CHECK(cudaDeviceSynchronize());
    const HashCounts t = counters_.read();
    const double seconds[3] = {timers_[0].seconds(), timers_[1].seconds(), timers_[2].seconds()};
    return hash_result(t, c_.threads, seconds);
  }
  std::unique_ptr<Reducer> reducer() const override { return hash_reducer(); }
  double reset_seconds() override { return timed_reset(owner_); }

  // The launches (public only because an extended __device__ lambda needs it).
  void insert() {
    const Api a = owner_.handle();
    const workloads::HashTable h = table_;
    HashCounts* tally = counters_.counts();
    const DeviceStats* stats = counters_.stats();
    launch_threads(c_.threads, [=] __device__(std::uint64_t t, bool active) {
      if (!active) return;
      const auto out = workloads::hash_insert(a, h, t, [=] { return !before_deadline(stats); });
      if (out == workloads::HashOutcome::null) atomicAdd(&tally->nulls, 1ull);
      if (out == workloads::HashOutcome::timed_out) atomicAdd(&tally->timed_out, 1ull);
    });
  }
  void erase() {
    const Api a = owner_.handle();
    const std::uint64_t keys = c_.threads;
    const workloads::HashTable h = table_;
    HashCounts* tally = counters_.counts();
    const DeviceStats* stats = counters_.stats();
    launch_threads(c_.threads, [=] __device__(std::uint64_t t, bool active) {
      if (!active || !workloads::deleted_key(t)) return;
      const auto out = workloads::hash_delete(a, h, t, [=] { return !before_deadline(stats); }, keys);
      if (out == workloads::HashOutcome::missing) atomicAdd(&tally->missing, 1ull);
      if (out == workloads::HashOutcome::timed_out) atomicAdd(&tally->timed_out, 1ull);
    });
  }
  void release_all() {
    const Api a = owner_.handle();
    const workloads::HashTable h = table_;
    const std::uint64_t keys = c_.threads;
    launch_threads(h.n_buckets, [=] __device__(std::uint64_t k, bool active) {
      if (active) workloads::hash_release_bucket(a, h, k, keys);
    });
  }
  // The verifier after the inserts (after = 0) or the deletes (1): every key
  // looked up, every chain counted.
  void check(int after) {
    const workloads::HashTable h = table_;
    HashCounts* tally = counters_.counts();
    const std::uint64_t keys = c_.threads;
    launch_threads(keys, [=] __device__(std::uint64_t t, bool active) {
      const unsigned f = active ? workloads::hash_check(h, t, after != 0, keys) : 0u;
      warp_add(&tally->faults[after], f != 0);
      if (f != 0) atomicOr(&tally->kinds, static_cast<unsigned long long>(f));
    });
    launch_threads(h.n_buckets, [=] __device__(std::uint64_t k, bool active) {
      warp_add(&tally->nodes[after], active ? static_cast<unsigned>(workloads::hash_chain_length(h, k, keys)) : 0u);
    });
  }

 private:
  alloc::Owner<Api> owner_;
  DeviceBuffer<workloads::HashBucket> buckets_;
  RoundCounters<HashCounts> counters_;
  workloads::HashTable table_{};
  EventTimer timers_[3];
  std::uint64_t budget_ns_;
  Case c_;

};

std::unique_ptr<Round> make_hash(const PatternTraits&, const Case& c, double budget_s) {
  return make_for_api<HashRound>(c, budget_s);
}

}  // namespace heapbench::detail
#endif  // HEAPBENCH_PATTERN_TRAITS_ONLY
