// graph: a dynamic graph whose per-vertex adjacency lists are allocated in a kernel.
//
// Workload: a graph (generated R-MAT or grid of `threads` vertices, or the
// Matrix Market file --graph names: src/workloads/graph_input.hpp) is copied
// from CSR into one block per vertex (capacity a power of two: the
// initialisation launch, timed); then kUpdateBatches seeded batches of edge
// insertions and deletions, a launch each (timed together), move lists that
// outgrow their block to one twice as large and lists down to a quarter of
// theirs to one half as large (allocate, copy, free the old:
// src/workloads/graph_body.hpp); then a launch frees every block (timed). One
// thread per vertex throughout. An untimed launch compares every vertex's
// list, in order, with the host's reference after all the updates: a list that
// differs, or any NULL (the graph does not fit the heap), is an error.
//
// Counters: init_s, update_s, release_s (seconds per round of each phase),
// edges_per_s (edges placed per second of the initialisation),
// edge_updates_per_s (insertions and deletions per second of the updates),
// allocs_per_s (allocation calls per second of initialisation and updates),
// heap_bytes.
#ifdef HEAPBENCH_PATTERN_TRAITS_ONLY  // the traits, read in namespace heapbench::patterns (pattern_traits.hpp)
inline constexpr PatternTraits graph_traits =
    PatternTraits{"graph", "a dynamic graph: per-vertex adjacency blocks grown and shrunk by edge updates"}
        .sizes(4, 4, 4)  // an entry is a 4-byte vertex id
        .with_axes("graph")
        .in_own_sweep();
inline constexpr PatternList<1> graph_patterns = {&graph_traits};
#else
#include <fmt/format.h>

#include "cases/case_input.hpp"
#include "device/round.cuh"
#include "workloads/graph_body.hpp"
#include "workloads/graph_input.hpp"
#include "workloads/workload_metrics.hpp"

namespace heapbench::detail {

// A host vector's copy on the device.
template <class T>
DeviceBuffer<T> upload(const std::vector<T>& v) {
  DeviceBuffer<T> d(v.size());
  if (!v.empty()) HB_CUDA_CHECK(cudaMemcpy(d.get(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

struct DeviceBatch {
  DeviceBuffer<std::uint64_t> insert_offsets, delete_offsets;
  DeviceBuffer<std::uint32_t> insert_targets, delete_targets;
};

__device__ inline void count(GraphCounts* t, const workloads::GraphStep& s) {
  if (s.nulls != 0) atomicAdd(&t->nulls, static_cast<unsigned long long>(s.nulls));
}

template <class Api>
class GraphRound final : public Round {
 public:
  GraphRound(const Case& c, double budget_s) : owner_(c), budget_ns_(budget_ns(budget_s)), c_(c) {
    const workloads::Csr g = workloads::make_graph(c.graph, input_path(c), c.threads, input_hash(c));
    if (g.vertices != c.threads) {
      throw std::invalid_argument(fmt::format("graph '{}' has {} vertices, the case {}", c.graph, g.vertices, c.threads));
    }
    workloads::Csr final;
    const auto batches = workloads::make_updates(g, 0x75706461746573ull, final);  // "updates"
    vertices_ = g.vertices;
    offsets_ = upload(g.offsets);
    targets_ = upload(g.targets);
    ref_offsets_ = upload(final.offsets);
    ref_targets_ = upload(final.targets);
    for (const auto& b : batches) {
      batches_.push_back({upload(b.insert_offsets), upload(b.delete_offsets), upload(b.insert_targets),
                          upload(b.delete_targets)});
      updates_ += b.insert_targets.size() + b.delete_targets.size();
    }
    shape_ = {g.vertices, g.edges(), updates_, workloads::blocks_allocated(g, batches)};
    lists_ = DeviceBuffer<workloads::VertexList>(vertices_);
  }
  void begin() override {
    owner_.reset();
    HB_CUDA_CHECK(cudaMemsetAsync(lists_.get(), 0, vertices_ * sizeof(workloads::VertexList)));
    counters_.begin(budget_ns_);
  }
  void allocate() override {
    timers_[0].start();
    init();
    timers_[0].stop();
  }
  void use() override {
    timers_[1].start();
    for (const DeviceBatch& b : batches_) update(b);
    timers_[1].stop();
    check();
  }
  void release() override {
    timers_[2].start();
    release_all();
    timers_[2].stop();
  }
  IterationResult collect() override {
    HB_CUDA_CHECK(cudaDeviceSynchronize());
    const GraphCounts t = counters_.read();
    const double seconds[3] = {timers_[0].seconds(), timers_[1].seconds(), timers_[2].seconds()};
    return graph_result(t, shape_, seconds);
  }
  std::unique_ptr<Reducer> reducer() const override { return graph_reducer(); }
  // A file's graph has the vertices it has: no smaller warm-up round of it.
  bool small_warmup() const override { return input_path(c_).empty(); }
  double reset_seconds() override { return timed_reset(owner_); }

  // The launches (public only because an extended __device__ lambda needs it).
  void init() {
    const Api a = owner_.handle();
    workloads::VertexList* lists = lists_.get();
    const std::uint64_t* offsets = offsets_.get();
    const std::uint32_t* targets = targets_.get();
    GraphCounts* tally = counters_.counts();
    const DeviceStats* stats = counters_.stats();
    launch([=] __device__(std::uint64_t u, bool active) {
      if (!active) return;
      if (!before_deadline(stats)) {
        warp_add(&tally->timed_out, 1);
        return;
      }
      count(tally, workloads::graph_init(a, lists[u], offsets, targets, u));
    });
  }
  void update(const DeviceBatch& b) {
    const Api a = owner_.handle();
    workloads::VertexList* lists = lists_.get();
    GraphCounts* tally = counters_.counts();
    const DeviceStats* stats = counters_.stats();
    const std::uint64_t* ins_off = b.insert_offsets.get();
    const std::uint32_t* ins = b.insert_targets.get();
    launch([=] __device__(std::uint64_t u, bool active) {
      if (!active || ins_off[u] == ins_off[u + 1]) return;
      if (!before_deadline(stats)) {
        warp_add(&tally->timed_out, 1);
        return;
      }
      count(tally, workloads::graph_insert(a, lists[u], ins, ins_off[u], ins_off[u + 1]));
    });
    const std::uint64_t* del_off = b.delete_offsets.get();
    const std::uint32_t* del = b.delete_targets.get();
    launch([=] __device__(std::uint64_t u, bool active) {
      if (!active || del_off[u] == del_off[u + 1]) return;
      if (!before_deadline(stats)) {
        warp_add(&tally->timed_out, 1);
        return;
      }
      count(tally, workloads::graph_delete(a, lists[u], del, del_off[u], del_off[u + 1]));
    });
  }
  void release_all() {
    const Api a = owner_.handle();
    workloads::VertexList* lists = lists_.get();
    GraphCounts* tally = counters_.counts();
    launch([=] __device__(std::uint64_t u, bool active) {
      if (active) count(tally, workloads::graph_release(a, lists[u]));
    });
  }
  void check() {
    const workloads::VertexList* lists = lists_.get();
    const std::uint64_t* offsets = ref_offsets_.get();
    const std::uint32_t* targets = ref_targets_.get();
    GraphCounts* tally = counters_.counts();
    launch([=] __device__(std::uint64_t u, bool active) {
      warp_add(&tally->wrong_lists, active && !workloads::graph_check(lists[u], offsets, targets, u));
    });
  }

 private:
  alloc::Owner<Api> owner_;
  RoundCounters<GraphCounts> counters_;
  DeviceBuffer<std::uint64_t> offsets_, ref_offsets_;
  DeviceBuffer<std::uint32_t> targets_, ref_targets_;
  DeviceBuffer<workloads::VertexList> lists_;
  std::vector<DeviceBatch> batches_;
  std::uint64_t vertices_ = 0, updates_ = 0;
  GraphShape shape_;
  EventTimer timers_[3];
  std::uint64_t budget_ns_;
  Case c_;

  template <class F>
  void launch(F f) {
    launch_threads(vertices_, f);
  }
};

std::unique_ptr<Round> make_graph(const PatternTraits&, const Case& c, double budget_s) {
  return make_for_api<GraphRound>(c, budget_s);
}

}  // namespace heapbench::detail
#endif  // HEAPBENCH_PATTERN_TRAITS_ONLY
