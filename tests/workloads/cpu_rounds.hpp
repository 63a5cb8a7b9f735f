#pragma once
// The workloads (docs/workloads.md) on the CPU: the same bodies and verifiers
// as the GPU's (src/workloads/*_body.hpp) and the same verdicts
// (workload_metrics.hpp), run on a few host threads against the host's
// allocator. The stand-in device (tests/robust/nogpu_main.cpp) measures its
// workload cases with these rounds, and tests/host/workloads_test.cpp checks
// that each verifier catches strategies broken on purpose:
//   Break::drop     output: one thread's output is left NULL without the strategy
//                   saying so; graph: one insertion is lost; hash: one node is
//                   allocated but never linked
//   Break::overlap  the allocator hands its 8th block out again while it is
//                   still live (two outputs, lists or nodes share bytes)
// Every API of a case is the host's allocator here: the stand-in has no device,
// so what its figures say is nothing; what it runs is the workloads' logic.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <numeric>
#include <set>
#include <string_view>
#include <thread>
#include <vector>

#include "workloads/graph_body.hpp"
#include "workloads/graph_input.hpp"
#include "workloads/hash_body.hpp"
#include "measure/backend.hpp"
#include "cases/catalog.hpp"
#include "cases/case_input.hpp"
#include "workloads/output_body.hpp"
#include "replay/replay_body.hpp"
#include "replay/replay_metrics.hpp"
#include "workloads/workload_metrics.hpp"

namespace heapbench::workloads::cpu {

enum class Break { none, drop, overlap };

inline Break break_named(std::string_view name) {
  if (name == "drop") return Break::drop;
  if (name == "overlap") return Break::overlap;
  return Break::none;
}

// The thread whose output, insertion or node Break::drop loses; the call whose
// block Break::overlap hands out twice.
inline constexpr std::uint64_t kBrokenThread = 7;
inline constexpr std::uint64_t kOverlapCall = 8;

// The host's allocator with a byte limit (the case's heap), thread-safe. A
// block freed twice, or one it never handed out, is ignored (Break::overlap
// hands one out twice), and a freed block's memory is kept until the next
// round begins (forget_freed), so a broken structure read after its release
// reads stale bytes, as on the GPU, not freed memory.
class HostHeap {
 public:
  HostHeap(std::uint64_t limit, bool overlap) : limit_(limit), overlap_(overlap) {}
  ~HostHeap() {
    for (const auto& [p, bytes] : live_) std::free(p);
    forget_freed();
  }
  void forget_freed() {
    std::lock_guard<std::mutex> lock(m_);
    for (void* p : freed_) std::free(p);
    freed_.clear();
  }
  HostHeap(const HostHeap&) = delete;
  HostHeap& operator=(const HostHeap&) = delete;

  void* allocate(std::size_t bytes) {
    std::lock_guard<std::mutex> lock(m_);
    if (overlap_ && ++calls_ == kOverlapCall && last_ != nullptr) return last_;
    const std::size_t rounded = (bytes + 15) / 16 * 16;
    if (held_ + rounded > limit_) return nullptr;
    void* p = std::aligned_alloc(16, rounded == 0 ? 16 : rounded);
    if (p == nullptr) return nullptr;
    held_ += rounded;
    live_.emplace(p, rounded);
    last_ = p;
    return p;
  }
  void deallocate(void* p) {
    std::lock_guard<std::mutex> lock(m_);
    const auto it = std::find_if(live_.begin(), live_.end(), [&](const auto& e) { return e.first == p; });
    if (it == live_.end()) return;
    held_ -= it->second;
    if (last_ == p) last_ = nullptr;
    freed_.push_back(p);
    live_.erase(it);
  }
  std::size_t live_blocks() const {
    std::lock_guard<std::mutex> lock(m_);
    return live_.size();
  }

 private:
  mutable std::mutex m_;
  std::uint64_t limit_, held_ = 0, calls_ = 0;
  bool overlap_;
  void* last_ = nullptr;
  std::set<std::pair<void*, std::size_t>> live_;
  std::vector<void*> freed_;
};

// What the bodies call: a handle of the heap.
struct HostAlloc {
  HostHeap* heap;
  void* allocate(std::size_t bytes, std::size_t) const { return heap->allocate(bytes); }
  void deallocate(void* p) const { heap->deallocate(p); }
};

// f(i) for i in [0, n) on a few host threads, which take indices from a
// counter; in index order on one thread where a case is broken on purpose, so
// which outputs, lists or nodes the breakage hits is the same on every run.
template <class F>
void parallel_for(std::uint64_t n, F f, Break b = Break::none) {
  const unsigned workers = b != Break::none ? 1u : std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
  std::atomic<std::uint64_t> next{0};
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < workers; ++w) {
    pool.emplace_back([&] {
      for (std::uint64_t i; (i = next.fetch_add(1)) < n;) f(i);
    });
  }
  for (auto& t : pool) t.join();
}

template <class F>
double timed(F f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The output workload: the strategy the case's API names, verified by check_output.
class OutputRound final : public Round {
 public:
  OutputRound(const Case& c, Break b)
      : c_(c), break_(b), heap_(c.malloc_heap(), b == Break::overlap), table_(c.threads) {}
  void begin() override {
    heap_.forget_freed();
    std::fill(table_.begin(), table_.end(), nullptr);
    owned_.clear();
    counts_ = OutputCounts{};
  }
  void allocate() override { produce_s_ = timed([&] { produce(); }); }
  void use() override {
    if (!c_.axis("writes")) {
      parallel_for(c_.threads, [&](std::uint64_t t) {
        if (table_[t] != nullptr) write_output(static_cast<unsigned char*>(table_[t]), bytes_of(t), t);
      }, break_);
    }
    for (std::uint64_t t = 0; t < c_.threads; ++t) {
      const OutputCheck k = check_output(table_[t], t, c_.size_min, c_.size);
      counts_.present += k.present;
      counts_.bytes += k.present ? bytes_of(t) : 0;
      counts_.nulls += table_[t] == nullptr;
      counts_.misaligned += k.misaligned;
      counts_.corrupted += k.corrupted;
    }
  }
  void release() override {
    release_s_ = timed([&] {
      for (void* p : owned_) heap_.deallocate(p);
    });
  }
  IterationResult collect() override { return output_result(counts_, c_.threads, produce_s_, release_s_); }
  std::unique_ptr<Reducer> reducer() const override { return output_reducer(); }

 private:
  Case c_;
  Break break_;
  HostHeap heap_;
  std::vector<void*> table_, owned_;
  OutputCounts counts_{};
  double produce_s_ = 0, release_s_ = 0;

  std::uint64_t bytes_of(std::uint64_t t) const { return output_bytes(t, c_.size_min, c_.size); }
  void place(std::uint64_t t, unsigned char* p) {
    table_[t] = p;
    if (p != nullptr && c_.axis("writes")) write_output(p, bytes_of(t), t);
  }
  // Blocks carved into outputs: per thread (each its own), per warp of 32, or
  // one. Break::overlap in a shared block: the broken thread's successor is
  // placed where it is (the offset not advanced past it).
  void carve(std::uint64_t group) {
    for (std::uint64_t first = 0; first < c_.threads; first += group) {
      const std::uint64_t last = std::min(c_.threads, first + group);
      std::uint64_t total = 0;
      for (std::uint64_t t = first; t < last; ++t) total += group == 1 ? bytes_of(t) : padded(bytes_of(t));
      auto* base = static_cast<unsigned char*>(heap_.allocate(total));
      if (base == nullptr) counts_.reported_nulls += last - first;
      if (base != nullptr) owned_.push_back(base);
      std::uint64_t offset = 0;
      for (std::uint64_t t = first; t < last; ++t) {
        place(t, base == nullptr ? nullptr : base + offset);
        if (!(group > 1 && break_ == Break::overlap && t == kBrokenThread)) offset += padded(bytes_of(t));
      }
    }
  }
  void produce() {
    const std::string_view api = c_.api_name();
    carve(api == api::kWarpAggregated.name ? 32
          : api == api::kTwoPass.name || api == api::kTwoPassAsync.name ? c_.threads
                                                                         : 1);
    if (break_ == Break::drop && kBrokenThread < c_.threads) table_[kBrokenThread] = nullptr;
  }
};

// The hash workload: inserts, every other key deleted, the table released.
class HashRound final : public Round {
 public:
  HashRound(const Case& c, Break b)
      : c_(c), break_(b), heap_(c.malloc_heap(), b == Break::overlap), buckets_(buckets_for(c.threads, c.axis("load_pct"))) {
    table_ = {buckets_.data(), buckets_.size(), c.size_min, c.size};
  }
  void begin() override {
    heap_.forget_freed();
    std::fill(buckets_.begin(), buckets_.end(), HashBucket{});
    counts_ = HashCounts{};
    lost_ = nullptr;
  }
  void allocate() override {
    seconds_[0] = timed([&] {
      parallel_for(c_.threads, [&](std::uint64_t t) {
        if (break_ == Break::drop && t == kBrokenThread) {
          lost_ = heap_.allocate(sizeof(HashNode) + value_bytes(table_, hash_key(t)));  // allocated, never linked
          return;
        }
        if (hash_insert(HostAlloc{&heap_}, table_, t, [] { return false; }) == HashOutcome::null) add(counts_.nulls);
      }, break_);
    });
  }
  void use() override {
    check(0);
    seconds_[1] = timed([&] {
      parallel_for(c_.threads, [&](std::uint64_t t) {
        if (deleted_key(t) &&
            hash_delete(HostAlloc{&heap_}, table_, t, [] { return false; }, c_.threads) == HashOutcome::missing) {
          add(counts_.missing);
        }
      }, break_);
    });
    check(1);
  }
  void release() override {
    seconds_[2] = timed([&] {
      for (std::uint64_t k = 0; k < table_.n_buckets; ++k) hash_release_bucket(HostAlloc{&heap_}, table_, k, c_.threads);
      if (lost_ != nullptr) heap_.deallocate(lost_);
    });
  }
  IterationResult collect() override { return hash_result(counts_, c_.threads, seconds_); }
  std::unique_ptr<Reducer> reducer() const override { return hash_reducer(); }

 private:
  Case c_;
  Break break_;
  HostHeap heap_;
  std::vector<HashBucket> buckets_;
  HashTable table_{};
  HashCounts counts_{};
  void* lost_ = nullptr;
  double seconds_[3] = {};
  std::mutex m_;

  void add(unsigned long long& counter) {
    std::lock_guard<std::mutex> lock(m_);
    ++counter;
  }
  void check(int after) {
    for (std::uint64_t t = 0; t < c_.threads; ++t) {
      const unsigned f = hash_check(table_, t, after != 0, c_.threads);
      counts_.faults[after] += f != 0;
      counts_.kinds |= f;
    }
    for (std::uint64_t k = 0; k < table_.n_buckets; ++k) counts_.nodes[after] += hash_chain_length(table_, k, c_.threads);
  }
};

// The graph workload: CSR into per-vertex blocks, the batches, the release.
class GraphRound final : public Round {
 public:
  GraphRound(const Case& c, Break b) : c_(c), break_(b), heap_(c.malloc_heap(), b == Break::overlap) {
    graph_ = make_graph(c.graph, input_path(c), c.threads, input_hash(c));
    batches_ = make_updates(graph_, 0x75706461746573ull, final_);  // the GPU's seed: the same updates
    for (const auto& batch : batches_) updates_ += batch.insert_targets.size() + batch.delete_targets.size();
    lists_.resize(graph_.vertices);
  }
  void begin() override {
    heap_.forget_freed();
    std::fill(lists_.begin(), lists_.end(), VertexList{nullptr, 0, 0});
    counts_ = GraphCounts{};
  }
  void allocate() override {
    seconds_[0] = timed([&] {
      parallel_for(graph_.vertices, [&](std::uint64_t u) {
        count(graph_init(HostAlloc{&heap_}, lists_[u], graph_.offsets.data(), graph_.targets.data(), u));
      }, break_);
    });
  }
  void use() override {
    seconds_[1] = timed([&] {
      for (std::size_t k = 0; k < batches_.size(); ++k) update(batches_[k], k == 0);
    });
    for (std::uint64_t u = 0; u < graph_.vertices; ++u) {
      counts_.wrong_lists += !graph_check(lists_[u], final_.offsets.data(), final_.targets.data(), u);
    }
  }
  void release() override {
    seconds_[2] = timed([&] {
      for (auto& v : lists_) graph_release(HostAlloc{&heap_}, v);
    });
  }
  IterationResult collect() override {
    return graph_result(counts_, {graph_.vertices, graph_.edges(), updates_, blocks_allocated(graph_, batches_)},
                        seconds_);
  }
  std::unique_ptr<Reducer> reducer() const override { return graph_reducer(); }
  bool small_warmup() const override { return input_path(c_).empty(); }

 private:
  Case c_;
  Break break_;
  HostHeap heap_;
  Csr graph_, final_;
  std::vector<UpdateBatch> batches_;
  std::vector<VertexList> lists_;
  std::uint64_t updates_ = 0;
  GraphCounts counts_{};
  double seconds_[3] = {};
  std::mutex m_;

  void count(const GraphStep& s) {
    std::lock_guard<std::mutex> lock(m_);
    counts_.nulls += s.nulls;
  }
  void update(const UpdateBatch& b, bool first) {
    // Break::drop: the first vertex with insertions in the first batch loses its first one.
    std::uint64_t dropped = graph_.vertices;
    if (first && break_ == Break::drop) {
      for (std::uint64_t u = 0; u < graph_.vertices && dropped == graph_.vertices; ++u) {
        if (b.insert_offsets[u] != b.insert_offsets[u + 1]) dropped = u;
      }
    }
    parallel_for(graph_.vertices, [&](std::uint64_t u) {
      const std::uint64_t begin = b.insert_offsets[u] + (u == dropped ? 1 : 0);
      count(graph_insert(HostAlloc{&heap_}, lists_[u], b.insert_targets.data(), begin, b.insert_offsets[u + 1]));
    }, break_);
    parallel_for(graph_.vertices, [&](std::uint64_t u) {
      count(graph_delete(HostAlloc{&heap_}, lists_[u], b.delete_targets.data(), b.delete_offsets[u],
                         b.delete_offsets[u + 1]));
    }, break_);
  }
};

// replay: the trace's launches one after the other; in a launch the threads
// take turns in index order, each making its operations until one waits for a
// block another thread has yet to allocate (replay_body.hpp), round after
// round of turns until every thread is done; turns that move no thread on
// are the GPU's deadline (timed_out). Then, as on the GPU, the floor: the same
// launches walked with no allocator (FloorAddresses over an arena of the
// plan's floor_bytes), timed the same way. Break::overlap: the allocator's.
class ReplayRound final : public Round {
 public:
  ReplayRound(const Case& c, Break b)
      : heap_(c.malloc_heap(), b == Break::overlap),
        plan_(trace::plan_replay(trace::read_trace(input_path(c), input_hash(c)), input_path(c))),
        table_(plan_.allocations),
        arena_(plan_.floor ? plan_.floor_bytes + plan_.floor_align : 0) {
    std::vector<std::uint64_t> sizes(plan_.allocations, 0);
    for (const auto& l : plan_.launches) {
      for (const auto& op : l.ops) {
        if (op.kind == trace::kAllocate) sizes[op.id] = op.size;
      }
      shape_.releases += l.releases;
    }
    shape_.allocations = plan_.allocations;
    shape_.launches = plan_.launches.size();
    shape_.peak_bytes = plan_.peak_bytes;
    shape_.unmatched_releases = plan_.unmatched_releases;
    tail_offsets_.push_back(0);
    for (std::uint32_t id : plan_.live_at_end) {
      tail_ops_.push_back({sizes[id], id, 0, trace::kRelease, 0, 0});
      tail_offsets_.push_back(tail_ops_.size());
    }
    const auto base = reinterpret_cast<std::uintptr_t>(arena_.data());
    floor_.base = arena_.data() + ((base + plan_.floor_align - 1) / plan_.floor_align * plan_.floor_align - base);
  }
  void begin() override {
    heap_.forget_freed();
    std::fill(table_.begin(), table_.end(), HB_REPLAY_PENDING);
    counts_ = floor_counts_ = ReplayCounts{};
    seconds_.clear();
    floor_seconds_.clear();
    empty_seconds_.clear();
  }
  void allocate() override {
    for (const auto& l : plan_.launches) {
      seconds_.push_back(timed([&] { run(HostAlloc{&heap_}, l.threads, l.offsets, l.ops, counts_); }));
    }
  }
  void use() override {  // the blocks the recording kept, then the floor
    run(HostAlloc{&heap_}, tail_ops_.size(), tail_offsets_, tail_ops_, counts_);
    if (!plan_.floor) return;
    std::fill(table_.begin(), table_.end(), HB_REPLAY_PENDING);
    for (const auto& l : plan_.launches) {
      floor_seconds_.push_back(timed([&] { run(floor_, l.threads, l.offsets, l.ops, floor_counts_); }));
    }
    for (std::size_t i = 0; i < plan_.launches.size(); ++i) empty_seconds_.push_back(timed([] {}));
  }
  bool has_free_phase() const override { return false; }
  bool small_warmup() const override { return false; }
  IterationResult collect() override {
    return replay_result(counts_, floor_counts_, shape_, seconds_, floor_seconds_, empty_seconds_);
  }
  std::unique_ptr<Reducer> reducer() const override { return replay_reducer(); }

 private:
  HostHeap heap_;
  trace::ReplayPlan plan_;
  std::vector<void*> table_;
  std::vector<unsigned char> arena_;
  trace::FloorAddresses floor_{};
  std::vector<std::uint64_t> tail_offsets_;
  std::vector<trace::ReplayOp> tail_ops_;
  ReplayShape shape_;
  ReplayCounts counts_{}, floor_counts_{};
  std::vector<double> seconds_, floor_seconds_, empty_seconds_;

  template <class A>
  void run(const A& a, std::uint64_t threads, const std::vector<std::uint64_t>& offsets,
           const std::vector<trace::ReplayOp>& ops, ReplayCounts& counts) {
    std::vector<std::uint64_t> next(offsets.begin(), offsets.end() - 1);
    for (bool moved = true, left = true; left;) {
      if (!moved) {
        for (std::uint64_t t = 0; t < threads; ++t) counts.timed_out += next[t] < offsets[t + 1];
        return;
      }
      moved = left = false;
      for (std::uint64_t t = 0; t < threads; ++t) {
        for (; next[t] < offsets[t + 1]; ++next[t], moved = true) {
          const trace::ReplayStep s = trace::replay_op(a, ops[next[t]], table_.data());
          if (s.waiting) break;
          counts.nulls += s.null;
          counts.new_nulls += s.new_null;
          counts.misaligned += s.misaligned;
          counts.corrupted += s.corrupted;
        }
        left |= next[t] < offsets[t + 1];
      }
    }
  }
};

// The round of a workload case (output, graph, hash) or of a replay, or nullptr for another pattern.
inline std::unique_ptr<Round> make_round(const Case& c, Break b) {
  const std::string_view p = c.pattern_name();
  if (p == "replay") return std::make_unique<ReplayRound>(c, b);
  if (p == "output") return std::make_unique<OutputRound>(c, b);
  if (p == "hash") return std::make_unique<HashRound>(c, b);
  if (p == "graph") return std::make_unique<GraphRound>(c, b);
  return nullptr;
}

}  // namespace heapbench::workloads::cpu
