// The slab allocator (src/allocators/slab.cuh) on the GPU, beyond what every
// API gets from patterns_gpu_test.cpp: its handle driven directly with no reset
// between launches (so a page that is not given back shows as a smaller fill),
// and its capacity figures, which its layout predicts exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

// slab.cuh directly (it includes heapbench/api_traits.hpp itself, for its traits).
#include "heapbench/api_traits.hpp"
#include "cases/case_naming.hpp"
#include "../../src/allocators/slab.cuh"
#include "cases/catalog.hpp"
#include "device/device.hpp"
#include "measure/metrics.hpp"
#include "measure/round_phases.hpp"

namespace heapbench {
namespace {

using heapbench_user::slab;
namespace sm = heapbench_user::slab_math;

constexpr double kBudget = 10.0;
constexpr unsigned kThreadsPerBlock = 256;

void check(cudaError_t e) { ASSERT_EQ(e, cudaSuccess) << cudaGetErrorString(e); }

template <class T>
struct DeviceArray {
  explicit DeviceArray(std::uint64_t n) : n(n) {
    if (cudaMalloc(&p, n * sizeof(T)) != cudaSuccess) p = nullptr;
    if (p != nullptr) cudaMemset(p, 0, n * sizeof(T));
  }
  ~DeviceArray() { cudaFree(p); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  std::vector<T> host() const {
    std::vector<T> out(n);
    cudaMemcpy(out.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost);
    return out;
  }
  T* p = nullptr;
  std::uint64_t n;
};

unsigned grid(std::uint64_t threads) { return static_cast<unsigned>((threads + kThreadsPerBlock - 1) / kThreadsPerBlock); }

// `rounds` rounds of `c` through the harness (one round object, as a case runs
// them), on a heap session of their own; each round's problem must be none.
std::vector<IterationResult> harness_rounds(const Case& c, int rounds) {
  HeapSession session(0);
  session.ensure_heap(c.malloc_heap());
  auto r = make_cuda_round(c, kBudget);
  std::vector<IterationResult> out;
  for (int round = 0; round < rounds; ++round) {
    out.push_back(run_round(*r, round));
    EXPECT_EQ(out.back().problem(kBudget), "") << case_name(c) << ", round " << round;
  }
  return out;
}

__host__ __device__ constexpr std::uint64_t last_word(std::uint64_t size) { return size >= 8 ? size / 4 - 1 : 0; }

// Each thread allocates `size` until NULL (at most `per_thread` blocks), writes
// its index into the block's first and last words, and lists the block.
__global__ void fill(slab s, std::uint64_t threads, std::uint64_t size, unsigned per_thread, void** out,
                     unsigned long long* count, unsigned long long* misaligned) {
  const std::uint64_t tid = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (tid >= threads) return;
  for (unsigned k = 0; k < per_thread; ++k) {
    void* p = s.allocate(size, 0);
    if (p == nullptr) return;
    if (reinterpret_cast<std::uintptr_t>(p) % 16 != 0) atomicAdd(misaligned, 1ull);
    auto* words = static_cast<unsigned*>(p);
    words[0] = static_cast<unsigned>(tid);
    words[last_word(size)] = static_cast<unsigned>(tid);
    out[atomicAdd(count, 1ull)] = p;
  }
}

// Checks every listed block still holds what its writer put there (overlap
// shows as another writer's index), then frees it: block i by thread i.
__global__ void check_and_free(slab s, void* const* blocks, std::uint64_t n, std::uint64_t size,
                               unsigned long long* bad) {
  const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const auto* words = static_cast<const unsigned*>(blocks[i]);
  if (words[0] != words[last_word(size)]) atomicAdd(bad, 1ull);
  s.deallocate(blocks[i]);
}

// Mixed sizes, random frees and reuse in one launch (as churn). Every 16th byte
// of every block and its last byte are written with the owner's mark and checked
// before it is freed: blocks are 16-byte aligned, so any two that overlap share
// a byte at a multiple of 16 from both starts.
__device__ bool marked(const unsigned char* p, std::uint64_t len, unsigned char mark) {
  bool ok = p[len - 1] == mark;
  for (std::uint64_t i = 0; i < len; i += 16) ok &= p[i] == mark;
  return ok;
}

__global__ void churn(slab s, std::uint64_t threads, std::uint64_t max_size, std::uint64_t seed,
                      unsigned long long* failed, unsigned long long* bad, unsigned long long* done) {
  const std::uint64_t tid = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (tid >= threads) return;
  constexpr int kSlots = 8;
  unsigned char* slot[kSlots] = {};
  std::uint64_t len[kSlots] = {};
  std::uint64_t state = seed ^ (tid * 0x9E3779B97F4A7C15ull);
  unsigned long long fails = 0, wrong = 0, ops = 0;
  for (int step = 0; step < 64; ++step) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const int k = static_cast<int>((state >> 33) % kSlots);
    const auto mark = static_cast<unsigned char>(tid * kSlots + k + 1);
    if (slot[k] != nullptr) {
      wrong += !marked(slot[k], len[k], mark);
      s.deallocate(slot[k]);
      slot[k] = nullptr;
    } else {
      // Sizes over every class and into the large path (up to max_size).
      len[k] = 1 + (state >> 40) % max_size;
      slot[k] = static_cast<unsigned char*>(s.allocate(len[k], 0));
      if (slot[k] == nullptr) {
        ++fails;
        continue;
      }
      for (std::uint64_t i = 0; i < len[k]; i += 16) slot[k][i] = mark;
      slot[k][len[k] - 1] = mark;
    }
    ++ops;
  }
  for (int k = 0; k < kSlots; ++k) {
    if (slot[k] == nullptr) continue;
    const auto mark = static_cast<unsigned char>(tid * kSlots + k + 1);
    wrong += !marked(slot[k], len[k], mark);
    s.deallocate(slot[k]);
  }
  atomicAdd(failed, fails);
  atomicAdd(bad, wrong);
  atomicAdd(done, ops);
}

// One owner, no reset between launches: fills, frees and refills.
class SlabArena {
 public:
  explicit SlabArena(std::uint64_t heap)
      : owner_(make_case("per_thread", "slab", 64, 0, 1024, heap)), blocks_(heap / 16), count_(1), misaligned_(1), bad_(1) {}

  // Blocks of `size` that `threads` threads get until NULL (at most `per_thread`
  // each); the blocks stay allocated.
  std::uint64_t fill(std::uint64_t size, std::uint64_t threads = 1024, unsigned per_thread = ~0u) {
    cudaMemset(count_.p, 0, sizeof(unsigned long long));
    heapbench::fill<<<grid(threads), kThreadsPerBlock>>>(owner_.handle(), threads, size, per_thread, blocks_.p, count_.p, misaligned_.p);
    check(cudaDeviceSynchronize());
    last_size_ = size;
    return count_.host()[0];
  }
  // Frees what the last fill got (after checking it), by as many threads as blocks.
  void free_all() {
    const std::uint64_t n = count_.host()[0];
    if (n == 0) return;
    check_and_free<<<grid(n), kThreadsPerBlock>>>(owner_.handle(), blocks_.p, n, last_size_, bad_.p);
    check(cudaDeviceSynchronize());
  }
  // The blocks the last fill got, and a list of blocks checked and freed (as free_all).
  std::vector<void*> blocks() const {
    std::vector<void*> all = blocks_.host();
    all.resize(count_.host()[0]);
    return all;
  }
  void free_list(const std::vector<void*>& list) {
    if (list.empty()) return;
    DeviceArray<void*> d(list.size());
    check(cudaMemcpy(d.p, list.data(), list.size() * sizeof(void*), cudaMemcpyHostToDevice));
    check_and_free<<<grid(list.size()), kThreadsPerBlock>>>(owner_.handle(), d.p, list.size(), last_size_, bad_.p);
    check(cudaDeviceSynchronize());
  }
  // The harness's reset between rounds, and the pages counted in use after it.
  void reset() {
    owner_.reset();
    check(cudaDeviceSynchronize());
  }
  std::uint32_t pages_in_use() const {
    std::uint32_t n = 0;
    check(cudaMemcpy(&n, owner_.handle().used, sizeof n, cudaMemcpyDeviceToHost));
    return n;
  }
  // With no block live: every page's header and bits at rest, else the first pages that are not
  // (a count that no bit stands for is room lost for good; bits no count stands for, blocks given
  // twice), and the pages counted in use against the page bits set. "" when all agree.
  std::string idle_metadata_problems() const {
    const slab h = owner_.handle();
    std::vector<std::uint32_t> header(h.pages), bits(static_cast<std::size_t>(h.pages) * sm::kBitmapWords),
        page_bits(sm::page_words(h.pages));
    std::uint32_t used = 0;
    check(cudaMemcpy(header.data(), h.header, header.size() * 4, cudaMemcpyDeviceToHost));
    check(cudaMemcpy(bits.data(), h.bitmap, bits.size() * 4, cudaMemcpyDeviceToHost));
    check(cudaMemcpy(page_bits.data(), h.page_bits, page_bits.size() * 4, cudaMemcpyDeviceToHost));
    check(cudaMemcpy(&used, h.used, 4, cudaMemcpyDeviceToHost));
    std::string out;
    int shown = 0;
    std::uint32_t taken = 0, stuck = 0;
    for (std::uint32_t p = 0; p < h.pages; ++p) {
      const std::uint32_t hd = header[p], tag = sm::header_tag(hd), count = sm::header_count(hd);
      std::uint32_t set = 0;
      for (unsigned w = 0; w < sm::kBitmapWords; ++w) set += sm::popcount(bits[static_cast<std::size_t>(p) * sm::kBitmapWords + w]);
      const bool in_use = (page_bits[p / 32] >> (p % 32)) & 1u;
      taken += in_use;
      const bool bad = count != 0 || set != 0 || (tag != sm::kFreeTag && !in_use) || tag == sm::kLargeTag ||
                       (tag == sm::kFreeTag && (sm::header_slotted(hd) || in_use));
      if (!bad) continue;
      ++stuck;
      if (shown++ < 8) {
        out += "page " + std::to_string(p) + ": tag " + std::to_string(tag) + ", count " + std::to_string(count) +
               (sm::header_slotted(hd) ? " (slotted)" : "") + ", bits set " + std::to_string(set) +
               (in_use ? ", in use; " : ", not in use; ");
      }
    }
    if (stuck != 0) out += std::to_string(stuck) + " pages not at rest; ";
    if (used != taken) out += "pages counted in use " + std::to_string(used) + ", page bits set " + std::to_string(taken);
    return out;
  }
  std::uint64_t misaligned() const { return misaligned_.host()[0]; }
  std::uint64_t bad() const { return bad_.host()[0]; }
  const sm::Layout& layout() const { return owner_.layout(); }
  slab handle() const { return owner_.handle(); }

 private:
  slab::Owner owner_;
  DeviceArray<void*> blocks_;
  DeviceArray<unsigned long long> count_, misaligned_, bad_;
  std::uint64_t last_size_ = 16;
};

// The bit helpers of slab_math take one instruction on the device (__popc,
// __fns) and loops on the host: both must give the same answers.
struct BitAnswers {
  std::uint32_t popcount, lowest, nth, pick;
};
__global__ void bit_answers(const std::uint32_t* masks, std::uint32_t n, BitAnswers* out) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::uint32_t m = masks[i], k = i % 34, start = (i / 34) % 33;
  out[i] = {sm::popcount(m), sm::lowest_bits(m, k), sm::nth_set_bit(m, k), sm::pick_bits(m, k, start)};
}

TEST(SlabGpu, TheDeviceBitHelpersGiveTheHostsAnswers) {
  std::vector<std::uint32_t> masks = {0u, 1u, 0x80000000u, 0xffffffffu, 0xaaaaaaaau, 0x0000ffffu, 0xffff0000u};
  std::uint64_t state = 12345;
  while (masks.size() < 34 * 33 * 4) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const auto r = static_cast<std::uint32_t>(state >> 32);
    masks.push_back(masks.size() % 3 == 0 ? r & static_cast<std::uint32_t>(state) : r);  // sparse and dense words
  }
  const auto n = static_cast<std::uint32_t>(masks.size());
  DeviceArray<std::uint32_t> d_masks(n);
  DeviceArray<BitAnswers> d_out(n);
  check(cudaMemcpy(d_masks.p, masks.data(), n * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
  bit_answers<<<grid(n), kThreadsPerBlock>>>(d_masks.p, n, d_out.p);
  check(cudaDeviceSynchronize());
  const std::vector<BitAnswers> got = d_out.host();
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t m = masks[i], k = i % 34, start = (i / 34) % 33;
    ASSERT_EQ(got[i].popcount, sm::popcount(m)) << std::hex << m;
    ASSERT_EQ(got[i].lowest, sm::lowest_bits(m, k)) << std::hex << m << std::dec << " n " << k;
    ASSERT_EQ(got[i].nth, sm::nth_set_bit(m, k)) << std::hex << m << std::dec << " n " << k;
    ASSERT_EQ(got[i].pick, sm::pick_bits(m, k, start)) << std::hex << m << std::dec << " n " << k << " start " << start;
  }
}

TEST(SlabGpu, FillsEveryPageAndFreeingGivesEveryPageBackToAnyClass) {
  HeapSession session(0);
  SlabArena a(8 * kMiB);
  const std::uint64_t pages = a.layout().pages;
  ASSERT_EQ(pages, 126u);
  // Every page full, in each class in turn, then in the large path: each fill
  // can only be whole if the fills before it gave every page back.
  for (int pass = 0; pass < 2; ++pass) {
    for (std::uint64_t size : {16u, 64u, 100u, 4096u, 65536u, 16u}) {
      const std::uint64_t expected = pages * sm::blocks_per_page(sm::class_of(size));
      EXPECT_EQ(a.fill(size), expected) << "size " << size << " pass " << pass;
      a.free_all();
    }
    // Runs of 16 pages: at least one fits; freeing them gives the pages back.
    EXPECT_GE(a.fill(1 * kMiB, 64), 1u);
    a.free_all();
  }
  EXPECT_EQ(a.fill(16), pages * 4096);
  EXPECT_EQ(a.fill(16), 0u) << "a full arena returns NULL";
  a.free_all();
  EXPECT_EQ(a.misaligned(), 0u);
  EXPECT_EQ(a.bad(), 0u) << "two live blocks overlapped";
}

TEST(SlabGpu, BlocksFreedFromFullPagesAreHandedOutAgainWhenNoPageIsFree) {
  HeapSession session(0);
  SlabArena a(8 * kMiB);
  const std::uint64_t pages = a.layout().pages;
  for (std::uint64_t size : {4096u, 64u, 16u}) {
    // Every page full: then every other block freed, so pages that left their
    // slots full have room and (almost) none is empty.
    ASSERT_EQ(a.fill(size), pages * sm::blocks_per_page(sm::class_of(size))) << size;
    const std::vector<void*> first = a.blocks();
    std::vector<void*> kept, freed;
    for (std::size_t i = 0; i < first.size(); ++i) (i % 2 == 0 ? kept : freed).push_back(first[i]);
    a.free_list(freed);
    // The room comes back: a page is reused as soon as it has room once none
    // is free, not only once it is empty. A reservation can hide a block for
    // a moment, so a few may be missed; without the reuse most are.
    const std::uint64_t again = a.fill(size);
    EXPECT_LE(again, freed.size()) << size;
    EXPECT_GE(again, freed.size() - freed.size() / 100) << size;
    // Blocks of one class sit at multiples of their size in a page: two that
    // overlap start at the same address.
    std::vector<void*> live = kept;
    for (void* p : a.blocks()) live.push_back(p);
    std::sort(live.begin(), live.end());
    EXPECT_EQ(std::adjacent_find(live.begin(), live.end()), live.end()) << "a block handed out twice, size " << size;
    a.free_all();
    a.free_list(kept);
    EXPECT_EQ(a.bad(), 0u) << "a block handed out again overlapped a kept one, size " << size;
  }
  EXPECT_EQ(a.fill(16), pages * 4096) << "every page came back";
  a.free_all();
  EXPECT_EQ(a.misaligned(), 0u);
}

TEST(SlabGpu, TheResetKeepsTheSlotsEmptyPagesOnlyWhenNoBlockIsLive) {
  HeapSession session(0);
  SlabArena a(8 * kMiB);
  const std::uint64_t pages = a.layout().pages;
  // A round that frees every block: the pages its slots held stay in use,
  // empty, for the next round (a warm start), and at most a slot's page each.
  ASSERT_EQ(a.fill(64, 4096, 1), 4096u);
  a.free_all();
  a.reset();
  const std::uint32_t kept = a.pages_in_use();
  EXPECT_GE(kept, 1u);
  EXPECT_LE(kept, sm::kSlotsPerClass);
  // ... which another class takes when it needs them: the whole arena.
  EXPECT_EQ(a.fill(4096), pages * sm::blocks_per_page(sm::class_of(4096)));
  a.free_all();
  // A round that leaves a block live: the reset clears everything, as before.
  ASSERT_EQ(a.fill(64, 4096, 1), 4096u);
  a.reset();
  EXPECT_EQ(a.pages_in_use(), 0u);
  EXPECT_EQ(a.fill(16), pages * 4096) << "after the clear every page is free again";
  a.reset();
  EXPECT_EQ(a.misaligned(), 0u);
  EXPECT_EQ(a.bad(), 0u);
}

TEST(SlabGpu, OversizedAndZeroRequests) {
  HeapSession session(0);
  SlabArena a(8 * kMiB);
  const std::uint64_t heap = 8 * kMiB;
  EXPECT_EQ(a.fill(heap + 1, 32), 0u) << "a request past the arena is NULL";
  EXPECT_EQ(a.fill(0, 32), a.layout().pages * 4096) << "0 bytes is a 16 B block";
  a.free_all();
  EXPECT_EQ(a.fill(heap / 2, 1), 1u) << "half the arena is one run of pages, once";
  a.free_all();
  EXPECT_EQ(a.fill(16), a.layout().pages * 4096);
  a.free_all();
}

TEST(SlabGpu, AnArenaTooSmallForItsMetadataIsRefusedBeforeAnythingIsWritten) {
  if (!is_api("slab")) GTEST_SKIP() << "built with HEAPBENCH_BUNDLED_ALLOCATORS=OFF";
  Case c = make_case("per_thread", "slab", 64, 0, 32, 8 * kMiB);
  c.limit_bytes = 4096;  // app::Heap takes any byte count; the sweep's heaps are whole MiB
  try {
    const slab::Owner owner(c);
    ADD_FAILURE() << "an arena of 4,096 B was taken; its metadata needs " << sm::bytes_taken(sm::layout(4096)) << " B";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("cannot hold its metadata"), std::string::npos) << e.what();
  }
  SlabArena a(1 * kMiB);  // the smallest heap of the sweep still works
  EXPECT_GT(a.fill(64, 32), 0u);
  a.free_all();
}

TEST(SlabGpu, ChurnInOneLaunchNeverOverlapsAndLeavesNothingBehind) {
  HeapSession session(0);
  SlabArena a(256 * kMiB);
  const std::uint64_t full = a.layout().pages * 4096;
  DeviceArray<unsigned long long> failed(1), bad(1), done(1);
  // Live bytes stay far under half the arena: 8 K threads x 8 blocks x at most
  // 2 KiB = 128 MiB at the very worst, about 4 x 1 KiB each (32 MiB) on average.
  for (int launch = 0; launch < 10; ++launch) {
    churn<<<grid(8192), kThreadsPerBlock>>>(a.handle(), 8192, 2048, 1000 + launch, failed.p, bad.p, done.p);
    check(cudaDeviceSynchronize());
  }
  EXPECT_EQ(bad.host()[0], 0u) << "a block read back another owner's bytes";
  EXPECT_EQ(failed.host()[0], 0u);
  EXPECT_EQ(done.host()[0], 8192u * 10 * 64);
  // Into the large path too (up to 256 KiB: 4 pages), on a smaller scale:
  // 64 threads x 8 x 256 KiB = 128 MiB at the very worst.
  for (int launch = 0; launch < 5; ++launch) {
    churn<<<grid(64), kThreadsPerBlock>>>(a.handle(), 64, 256 * 1024, 2000 + launch, failed.p, bad.p, done.p);
    check(cudaDeviceSynchronize());
  }
  EXPECT_EQ(bad.host()[0], 0u);
  EXPECT_EQ(failed.host()[0], 0u);
  // Every block freed: each page's count and bits at rest (a page kept empty by its slot is).
  EXPECT_EQ(a.idle_metadata_problems(), "");
  EXPECT_EQ(a.fill(16, 65536), full) << "the churn left pages behind";
  a.free_all();
}

TEST(SlabGpu, RemoteFreesInALaterLaunchGiveEveryPageBack) {
  if (!is_api("slab")) GTEST_SKIP() << "built with HEAPBENCH_BUNDLED_ALLOCATORS=OFF";
  const Case c = make_case("cross_kernel_remote_free", "slab", 64, 0, 65536, 64 * kMiB);
  for (const IterationResult& res : harness_rounds(c, 3)) {
    EXPECT_EQ(res.tally.successes, c.threads);
    EXPECT_EQ(res.tally.frees, c.threads);
  }
}

TEST(SlabGpu, CapacityFiguresAreWhatTheLayoutPredicts) {
  if (!is_api("slab")) GTEST_SKIP() << "built with HEAPBENCH_BUNDLED_ALLOCATORS=OFF";
  for (std::uint64_t size : {16u, 64u, 4096u, 65536u}) {
    HeapSession session(0);
    const Case c = make_case("capacity", "slab", size, 0, 1024, 8 * kMiB);
    session.ensure_heap(c.malloc_heap());
    auto r = make_cuda_round(c, kBudget);
    const IterationResult res = run_round(*r, 0);
    ASSERT_EQ(res.problem(kBudget), "") << size;
    const CapacityRaw* raw = res.observed.find<CapacityRaw>();
    ASSERT_NE(raw, nullptr);
    const CapacityFigures f = capacity_figures(*raw);
    const sm::Layout l = sm::layout(c.arena_bytes());
    const std::uint64_t blocks = l.pages * sm::blocks_per_page(sm::class_of(size));
    EXPECT_EQ(raw->heap_bytes, c.arena_bytes());
    EXPECT_EQ(raw->addresses.size(), blocks) << size;
    EXPECT_DOUBLE_EQ(f.utilization, static_cast<double>(l.pages * sm::kPageBytes) / c.arena_bytes()) << size;
    EXPECT_DOUBLE_EQ(f.overhead_bytes, 0.0) << size;
    EXPECT_EQ(raw->recovery_blocks, blocks) << size;
    EXPECT_DOUBLE_EQ(f.recovery, 1.0) << size;
    // Every other block freed leaves every page half full (or, for one block
    // a page, no two free pages side by side): nothing for 2x blocks.
    EXPECT_DOUBLE_EQ(f.ext_frag[0], 1.0) << size;
  }
}

// halloc's add-strings (docs/findings/apps.md): a million threads at once take
// two 32-byte blocks each, then one of 64 bytes, about 128 MB live in 512 MiB.
// When each warp that lost the race for its slot's new page kept that page
// with its own blocks in it, the 32-byte blocks spread over nearly every page
// and 787,008 of the 64-byte calls returned NULL. The first size must stay on
// about the pages it fills, and every call be served.
TEST(SlabGpu, AMillionThreadsAtOnceKeepAClassOnAboutTheFewPagesItFills) {
  HeapSession session(0);
  SlabArena a(512 * kMiB);
  constexpr std::uint64_t kThreads = 1000000;
  ASSERT_EQ(a.fill(32, kThreads, 2), 2 * kThreads);
  const std::uint64_t packed = (2 * kThreads + sm::blocks_per_page(sm::class_of(32)) - 1) / sm::blocks_per_page(sm::class_of(32));
  EXPECT_LE(a.pages_in_use(), 2 * packed + 256) << "of " << a.layout().pages << " pages; " << packed << " hold them all";
  EXPECT_EQ(a.fill(64, kThreads, 1), kThreads) << "the second size found too few pages";
  a.free_all();
  EXPECT_EQ(a.misaligned(), 0u);
  EXPECT_EQ(a.bad(), 0u) << "two live blocks overlapped";
}

// A heap of 1 GiB gives the classes 1,024 slots each (slab_math::many_slots, slots_log2):
// rounds of 100,000 threads get every block, twice (the second from the pages the slots
// kept), free them all, and leave the metadata at rest; then one class takes every page,
// the kept ones included. The 512 B and 1 KiB rounds go through the slots; full warps of
// 8 KiB and 16 KiB take whole pages, beside the pages the slots keep.
TEST(SlabGpu, TheLargerClassesManySlotsServeRoundsAndGiveEveryPageBack) {
  HeapSession session(0);
  SlabArena a(1024 * kMiB);
  const std::uint64_t pages = a.layout().pages;
  ASSERT_TRUE(sm::many_slots(pages)) << pages << " pages";
  for (const auto& [size, threads] : {std::pair{512ull, 100000ull}, std::pair{1024ull, 100000ull},
                                      std::pair{8192ull, 100000ull}, std::pair{16384ull, 30000ull}}) {
    for (int round = 0; round < 2; ++round) {
      EXPECT_EQ(a.fill(size, threads, 1), threads) << "size " << size << " round " << round;
      a.free_all();
    }
    EXPECT_EQ(a.idle_metadata_problems(), "") << "size " << size;
  }
  a.reset();
  EXPECT_EQ(a.fill(65536), pages) << "every page, the slots' kept ones too";
  a.free_all();
  EXPECT_EQ(a.misaligned(), 0u);
  EXPECT_EQ(a.bad(), 0u) << "two live blocks overlapped";
}

// One lane's call for its group (per_warp, per_block) is a slot's reservation of one block in
// the larger classes: per_warp of 256 B asks for 8 KiB, of 1 KiB for 32 KiB; per_block of 64 B
// for 16 KiB. On 1 GiB those classes have 1,024 slots. per_block of 256 B asks for 64 KiB, a
// page of its own beside them. Every call of every round gets its block, and the harness's
// write and read-back of every slice passes.
TEST(SlabGpu, OneLaneCallsOfTheLargerClassesOn1GiBAllSucceed) {
  if (!is_api("slab")) GTEST_SKIP() << "built with HEAPBENCH_BUNDLED_ALLOCATORS=OFF";
  for (const auto& [pattern, size] : {std::pair{"per_warp", 256u}, std::pair{"per_warp", 1024u},
                                      std::pair{"per_block", 64u}, std::pair{"per_block", 256u}}) {
    const Case c = make_case(pattern, "slab", size, 0, 100000, 1024 * kMiB);
    int round = 0;
    for (const IterationResult& res : harness_rounds(c, 3)) {
      ASSERT_GT(res.tally.attempts, 0u);
      EXPECT_EQ(res.tally.successes, res.tally.attempts) << pattern << " " << size << " round " << round;
      EXPECT_EQ(res.tally.frees, res.tally.successes) << pattern << " " << size << " round " << round;
      ++round;
    }
  }
}

TEST(SlabGpu, ChurnRoundsThroughTheHarnessNeverFail) {
  if (!is_api("slab")) GTEST_SKIP() << "built with HEAPBENCH_BUNDLED_ALLOCATORS=OFF";
  // At most 65,536 x 8 x 64 B = 32 MiB live of 1 GiB.
  const Case c = make_case("churn", "slab", 64, 0, 65536, 1024 * kMiB);
  int round = 0;
  for (const IterationResult& res : harness_rounds(c, 5)) {
    EXPECT_EQ(res.tally.successes, res.tally.attempts) << "round " << round++;
    EXPECT_EQ(res.tally.frees, res.tally.successes);
  }
}

TEST(SlabGpu, ChurnOfUpTo4KiBOn1GiBFailsAtMostOnePercent) {
  if (!is_api("slab")) GTEST_SKIP() << "built with HEAPBENCH_BUNDLED_ALLOCATORS=OFF";
  // About 4 blocks live a thread, 2.7 KiB each once rounded: some 720 MB of
  // 1 GiB, but about 1.2 M allocations a launch. Before pages with room were
  // reused once none was free, 46 % of them failed on the H200.
  const Case c = make_case("churn", "slab", 4096, 0, 65536, 1024 * kMiB);
  int round = 0;
  for (const IterationResult& res : harness_rounds(c, 3)) {
    ASSERT_GT(res.tally.attempts, 0u);
    EXPECT_LE(static_cast<double>(res.tally.attempts - res.tally.successes), 0.01 * res.tally.attempts)
        << "round " << round << ": " << res.tally.successes << " of " << res.tally.attempts;
    EXPECT_EQ(res.tally.frees, res.tally.successes);
    ++round;
  }
}

}  // namespace
}  // namespace heapbench
