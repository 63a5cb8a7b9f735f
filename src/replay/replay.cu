// replay: a recorded program's allocations (heapbench/trace.cuh), run again
// against an allocator (docs/trace.md).
//
// Workload: the trace's launches in order, each with its recorded grid and
// block shape; every thread makes its recorded operations in its recorded
// order (src/replay/replay_body.hpp): an allocation of the recorded size
// (and alignment), stamped at both ends; a release of the block the recording
// released, wherever and whichever thread allocated it (a block allocated by
// one launch and freed by another, or by another thread, is freed the same
// way; a release whose block another thread of its launch has yet to allocate
// waits for it, within the kernel budget). Each launch is timed by CUDA events.
// Blocks the recording never released are checked and freed after the last
// launch (untimed). A stamp that does not read back, or a misaligned block, is
// an error; a NULL is counted, and one where the recording had a block is
// counted apart (new_nulls): the allocator or heap could not hold what the
// program did. Each round then walks the same launches with no allocator
// (the floor: every block at the place plan_floor gave it, the same stamps,
// table and checks), timed the same way, so the replay's own cost is known,
// and launches an empty kernel of each launch's shape, the launch's own cost.
//
// Counters: launch_s, floor_s (the floor's seconds per launch), net_launch_s
// (launch_s - floor_s: the allocator's), empty_launch_s (the empty kernel's
// seconds per launch), allocs_per_s, frees_per_s,
// fail_rate, new_nulls, unmatched_releases (the trace's releases not
// replayed), peak_bytes (the recording's most live bytes), heap_bytes.
#ifdef HEAPBENCH_PATTERN_TRAITS_ONLY  // the traits, read in namespace heapbench::patterns (pattern_traits.hpp)
inline constexpr PatternTraits replay_traits =
    PatternTraits{"replay", "a recorded program's allocations, launch by launch and thread by thread (--trace)"}
        .with_axes("trace")
        .in_own_sweep();
inline constexpr PatternList<1> replay_patterns = {&replay_traits};
#else
#include <fmt/format.h>

#include "replay/replay_body.hpp"
#include "replay/replay_metrics.hpp"
#include "cases/case_input.hpp"
#include "device/round.cuh"
#include "replay/trace_reader.hpp"

namespace heapbench::detail {

struct DeviceLaunch {
  dim3 grid, block;
  std::uint64_t threads;
  DeviceBuffer<std::uint64_t> offsets;
  DeviceBuffer<trace::ReplayOp> ops;
};

__device__ inline void count_step(ReplayCounts* c, const trace::ReplayStep& s) {
  if (s.null) atomicAdd(&c->nulls, 1ull);
  if (s.new_null) atomicAdd(&c->new_nulls, 1ull);
  if (s.misaligned) atomicAdd(&c->misaligned, 1ull);
  if (s.corrupted) atomicAdd(&c->corrupted, 1ull);
}

// Nothing: launched with a recorded launch's grid and block and timed as it is,
// the part of every launch's time that no walk and no allocator can remove.
__global__ void replay_empty_launch() {}

// One recorded launch: thread (block, thread) makes its operations in order.
// The first `threads` threads have operations (all of a recorded launch's; the
// untimed release of what the recording kept runs it over a 1-D grid). A
// thread's operations lie together (offsets), so a warp's first ones are
// neighbours; each op is loaded while the one before it runs, and nothing
// else is loaded for it but its block's table entry at a release. With `a` a
// FloorAddresses it is the floor: the same walk with no allocator.
template <class Api>
__global__ void replay_launch(Api a, std::uint64_t threads, const std::uint64_t* offsets,
                              const trace::ReplayOp* ops, void** table, ReplayCounts* counts, const DeviceStats* stats) {
  const std::uint64_t block = blockIdx.x + std::uint64_t{gridDim.x} * (blockIdx.y + std::uint64_t{gridDim.y} * blockIdx.z);
  const std::uint64_t thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const std::uint64_t t = block * (blockDim.x * blockDim.y * blockDim.z) + thread;
  if (t >= threads) return;
  std::uint64_t k = offsets[t];
  const std::uint64_t end = offsets[t + 1];
  if (k == end) return;
  trace::ReplayOp next = ops[k];
  for (; k < end; ++k) {
    const trace::ReplayOp op = next;
    if (k + 1 < end) next = ops[k + 1];  // in flight while this one runs
    trace::ReplayStep s = trace::replay_op(a, op, table);
    while (s.waiting) {
      if (!before_deadline(stats)) {
        atomicAdd(&counts->timed_out, 1ull);
        return;
      }
      s = trace::replay_op(a, op, table);
    }
    count_step(counts, s);
  }
}

template <class Api>
class ReplayRound final : public Round {
 public:
  ReplayRound(const Case& c, double budget_s) : owner_(c), budget_ns_(budget_ns(budget_s)) {
    const trace::ReplayPlan plan = trace::plan_replay(trace::read_trace(input_path(c), input_hash(c)), input_path(c));
    refuse_what_does_not_fit(c, plan);
    shape_.allocations = plan.allocations;
    shape_.peak_bytes = plan.peak_bytes;
    shape_.unmatched_releases = plan.unmatched_releases;
    shape_.launches = plan.launches.size();
    for (const trace::ReplayLaunch& l : plan.launches) {
      shape_.releases += l.releases;
      launches_.push_back(upload_launch(l));
    }
    allocations_ = plan.allocations;
    table_ = DeviceBuffer<void*>(plan.allocations);
    // The blocks the recording kept: released after the last launch, as one more thread's operations each.
    std::vector<std::uint64_t> sizes(plan.allocations, 0);
    for (const trace::ReplayLaunch& l : plan.launches) {
      for (const trace::ReplayOp& op : l.ops) {
        if (op.kind == trace::kAllocate) sizes[op.id] = op.size;
      }
    }
    trace::ReplayLaunch tail;
    tail.threads = plan.live_at_end.size();
    for (std::uint64_t i = 0; i <= tail.threads; ++i) tail.offsets.push_back(i);
    for (std::uint32_t id : plan.live_at_end) tail.ops.push_back({sizes[id], id, 0, trace::kRelease, 0, 0});
    tail_threads_ = tail.threads;
    if (tail_threads_ > 0) {
      tail_offsets_ = upload(tail.offsets);
      tail_ops_ = upload(tail.ops);
    }
    // The floor's arena, its base aligned to the largest alignment the trace asked for.
    measures_floor_ = plan.floor;
    if (measures_floor_) floor_arena_ = DeviceBuffer<unsigned char>(plan.floor_bytes + plan.floor_align);
    const auto base = reinterpret_cast<std::uintptr_t>(floor_arena_.get());
    floor_.base = reinterpret_cast<unsigned char*>((base + plan.floor_align - 1) / plan.floor_align * plan.floor_align);
    for (std::size_t i = 0; i < launches_.size(); ++i) {
      timers_.push_back(std::make_unique<EventTimer>());
      floor_timers_.push_back(std::make_unique<EventTimer>());
      empty_timers_.push_back(std::make_unique<EventTimer>());
    }
  }
  void begin() override {
    owner_.reset();
    HB_CUDA_CHECK(cudaMemsetAsync(table_.get(), 0xff, allocations_ * sizeof(void*)));  // HB_REPLAY_PENDING
    counters_.begin(budget_ns_);
  }
  void allocate() override {
    const Api a = owner_.handle();
    for (std::size_t i = 0; i < launches_.size(); ++i) {
      const DeviceLaunch& l = launches_[i];
      if (i == 0) note_kernel();
      timers_[i]->start();
      replay_launch<Api><<<l.grid, l.block>>>(a, l.threads, l.offsets.get(), l.ops.get(), table_.get(),
                                              counters_.counts(), counters_.stats());
      HB_CUDA_CHECK_LAUNCH();
      timers_[i]->stop();
    }
  }
  // The blocks the recording kept, freed (untimed); then the floor: the same
  // launches walked with no allocator, each timed the same way.
  void use() override {
    if (tail_threads_ > 0) {
      const Api a = owner_.handle();
      const unsigned grid = static_cast<unsigned>((tail_threads_ + kThreadsPerBlock - 1) / kThreadsPerBlock);
      replay_launch<Api><<<grid, kThreadsPerBlock>>>(a, tail_threads_, tail_offsets_.get(), tail_ops_.get(),
                                                     table_.get(), counters_.counts(), counters_.stats());
      HB_CUDA_CHECK_LAUNCH();
    }
    if (!measures_floor_) return;
    HB_CUDA_CHECK(cudaMemsetAsync(table_.get(), 0xff, allocations_ * sizeof(void*)));
    floor_counters_.begin(budget_ns_);
    for (std::size_t i = 0; i < launches_.size(); ++i) {
      const DeviceLaunch& l = launches_[i];
      floor_timers_[i]->start();
      replay_launch<trace::FloorAddresses><<<l.grid, l.block>>>(floor_, l.threads, l.offsets.get(), l.ops.get(),
                                                                table_.get(), floor_counters_.counts(),
                                                                floor_counters_.stats());
      HB_CUDA_CHECK_LAUNCH();
      floor_timers_[i]->stop();
    }
    // What a launch of each shape costs with nothing in it: the part of the floor no walk can remove.
    for (std::size_t i = 0; i < launches_.size(); ++i) {
      const DeviceLaunch& l = launches_[i];
      empty_timers_[i]->start();
      replay_empty_launch<<<l.grid, l.block>>>();
      HB_CUDA_CHECK_LAUNCH();
      empty_timers_[i]->stop();
    }
  }
  bool has_free_phase() const override { return false; }
  IterationResult collect() override {
    HB_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<double> seconds, floor_seconds, empty_seconds;
    for (const auto& t : timers_) seconds.push_back(t->seconds());
    for (const auto& t : empty_timers_) empty_seconds.push_back(t->seconds());
    ReplayCounts floor{};
    if (measures_floor_) {
      for (const auto& t : floor_timers_) floor_seconds.push_back(t->seconds());
      floor = floor_counters_.read();
    }
    return replay_result(counters_.read(), floor, shape_, seconds, floor_seconds, empty_seconds);
  }
  std::unique_ptr<Reducer> reducer() const override { return replay_reducer(); }
  // A trace has the launches it has: no smaller warm-up round of it.
  bool small_warmup() const override { return false; }
  double reset_seconds() override { return timed_reset(owner_); }

 private:
  alloc::Owner<Api> owner_;
  RoundCounters<ReplayCounts> counters_, floor_counters_;
  DeviceBuffer<void*> table_;
  DeviceBuffer<std::uint64_t> tail_offsets_;
  DeviceBuffer<trace::ReplayOp> tail_ops_;
  DeviceBuffer<unsigned char> floor_arena_;
  trace::FloorAddresses floor_{};
  bool measures_floor_ = true;
  std::vector<DeviceLaunch> launches_;
  std::vector<std::unique_ptr<EventTimer>> timers_, floor_timers_, empty_timers_;
  std::uint64_t allocations_ = 0, tail_threads_ = 0;
  ReplayShape shape_;
  std::uint64_t budget_ns_;

  // The plan's buffers must fit in what the device has free now (the heap
  // and the allocator's owner already hold theirs): one line, the case an
  // error, before any of them is allocated. The parent checked the plan and
  // heap against the device's whole memory (src/orchestrate/run_plan.cpp); this sees what
  // other processes and the context hold.
  static void refuse_what_does_not_fit(const Case& c, const trace::ReplayPlan& plan) {
    const std::uint64_t need = trace::replay_device_bytes(plan);
    std::size_t free_bytes = 0, total_bytes = 0;
    HB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (need > free_bytes) {
      throw std::runtime_error(trace::device_memory_refusal(
          input_path(c), need, c.limit_bytes, fmt::format("the {} MiB free on the device now", free_bytes / kMiB)));
    }
  }
  template <class T>
  static DeviceBuffer<T> upload(const std::vector<T>& v) {
    DeviceBuffer<T> d(v.size());
    if (!v.empty()) HB_CUDA_CHECK(cudaMemcpy(d.get(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
  }
  static DeviceLaunch upload_launch(const trace::ReplayLaunch& l) {
    return {dim3(l.grid[0], l.grid[1], l.grid[2]), dim3(l.block[0], l.block[1], l.block[2]), l.threads,
            upload(l.offsets), upload(l.ops)};
  }
  static void note_kernel() {
    if (g_kernel_watch != nullptr) note_kernel_cost(reinterpret_cast<const void*>(&replay_launch<Api>), *g_kernel_watch);
  }
};

std::unique_ptr<Round> make_replay(const PatternTraits&, const Case& c, double budget_s) {
  return make_for_api<ReplayRound>(c, budget_s);
}

}  // namespace heapbench::detail
#endif  // HEAPBENCH_PATTERN_TRAITS_ONLY
