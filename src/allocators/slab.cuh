#pragma once
// slab: a size-class allocator that frees, heapbench's reference between CUDA's
// malloc and the bump ceiling (docs/slab.md says how it works and where the
// design comes from; docs/allocators.md is the adapter contract it follows).
//
// One cudaMalloc arena of the case's heap holds everything: 64 KiB pages from
// its start, and the metadata (a bitmap per page, a header per page, a bitmap
// of pages in use, the per-class slots, a copy of the handle) at its end, so
// utilisation counts the allocator's own bookkeeping against it. Sizes of
// 16 B ... 64 KiB are rounded up to a power of two (13 classes); a page
// serves one class at a time and goes back to the pool of free pages when its
// last block is freed. Larger sizes take a run of whole pages.
//
// The arithmetic (classes, bit picking, the layout, the run search) is plain
// constexpr C++ in slab_math.hpp beside this file, tested on the host by
// tests/host/slab_test.cpp. It is included below the `#ifdef __CUDACC__`: the
// host catalog includes this header for slab_traits alone.
#include <cstdint>

#include "heapbench/api_traits.hpp"

namespace heapbench_user {

inline constexpr heapbench::ApiTraits slab_traits{
    "slab",                        // the name in case names, JSON and plots
    heapbench::Source::own_arena,  // a cudaMalloc arena as large as the case's heap
    false,                         // 16-byte alignment only; the align argument is ignored
};

}  // namespace heapbench_user

#ifdef __CUDACC__
#include <cstddef>
#include <stdexcept>
#include <string>

#include <cuda/atomic>

#include "heapbench/case.hpp"
#include "heapbench/cuda_check.cuh"  // heapbench::check_cuda
#include "slab_math.hpp"

namespace heapbench_user {

struct slab;
// Owner::reset's two kernels, defined below.
template <int = 0>
__global__ void slab_note_live(slab h, std::uint32_t* live);
template <int = 0>
__global__ void slab_clear_if_live(uint4* meta, std::uint64_t vectors, const std::uint32_t* live);

// allocate's group leader, and in bit 5 (a shuffle reads its source lane
// modulo 32) whether the lanes that called ask for several classes. Such
// lanes are mixed sizes, as in churn, and blocks of such pages are freed out
// of order: the places a page's count hands out are then often still taken,
// so there a reservation of fewer than 4 blocks claims with a grab from its
// first claim (HEAPBENCH_SLAB_BLIND: whether claim t is blind; claim says
// what each costs). Bit 5, not a flag of its own: one more register took
// output's kernel to 82, and 37.5 % occupancy to 25 %. Macros, not functions:
// as inlined functions nvcc ordered the code otherwise than the build that was
// measured (docs/slab.md, step 21), and allocate stays within the project's
// bar of complexity.
#define HEAPBENCH_SLAB_LEADER(group, active) ((__ffs(group) - 1) | ((group) != (active) ? 32u : 0u))
#define HEAPBENCH_SLAB_BLIND(t, leader, left) ((t) == 0 && ((leader) < 32 || (left) >= 4))

struct slab {
  static constexpr const heapbench::ApiTraits& traits = slab_traits;
  static constexpr std::size_t min_alignment = 16;  // pages start at the arena (cudaMalloc: 256 B aligned), blocks at multiples of 16 B

  unsigned char* base = nullptr;
  std::uint32_t* bitmap = nullptr;
  std::uint32_t* header = nullptr;
  std::uint32_t* run = nullptr;
  std::uint32_t* page_bits = nullptr;
  std::uint32_t* slots = nullptr;
  std::uint32_t* used = nullptr;
  std::uint32_t* emptied = nullptr;
  std::uint32_t* missed = nullptr;
  std::uint32_t pages = 0;
  // This handle's copy in the arena (Owner writes it): the calls that are not
  // inlined are made on it (self->), not on the kernel's own copy. A member
  // function's `this` must be an address, and the handle a kernel is given is
  // a parameter: every slab kernel copied it (88 B) to its local memory at its
  // start, for calls most threads never make (issue 55, step 11h).
  const slab* self = nullptr;

  // The paths past a slot's page (a new page, the search for room, the large
  // runs) are not inlined: the path every call takes stays short in registers
  // and instructions (a round of 1,024 threads is a few microseconds, most of
  // them waits on memory and on fetching the kernel's code).

  // A reservation: `got` blocks (0: none) in `page`, whose count before it was
  // `first` (where free bits likely are); `marked`: the reservation set the
  // page's slotted bit (take_page with a mark). The calls that are not inlined
  // return it by value: a reference argument put the caller's variables in
  // local memory.
  struct Grant {
    std::uint32_t got, page, first, marked;
  };

  // Bounds on every loop: never spin forever (docs/allocators.md).
  static constexpr int kMaxRounds = 40;       // reservations per call; a 64 KiB class page holds one block
  static constexpr int kMaxClaims = 64;       // bitmap atomics per reservation
  static constexpr int kMaxRunTries = 8;
  // Once no page is free: headers read for a page of the class with room, and
  // pages tried (a reservation can lose the room found to another warp).
  static constexpr std::uint32_t kRoomScan = 1024;
  static constexpr int kMaxRoomTries = 4;

  __device__ void* allocate(std::size_t size, std::size_t) const {
    using namespace slab_math;
    const unsigned cls = class_of(size);
    if (cls == kLarge) return self->allocate_large(size);
    const unsigned active = __activemask();
    const unsigned group = __match_any_sync(active, cls);
    const unsigned lane = lane_id();
    const unsigned leader = HEAPBENCH_SLAB_LEADER(group, active);
    const bool many = many_slots(pages);
    std::uint32_t* slot = slots + slot_offset(cls, many) + slot_of_warp(slots_log2(many));
    const unsigned shift = class_shift(cls);
    void* result = nullptr;
    unsigned need = group;  // the lanes still without a block
    if (__popc(group) >= blocks_per_page(cls)) {
      const Whole w = self->take_whole_pages(cls, group);
      need &= ~w.served;
      result = w.result;
    }
    for (int round = 0; round < kMaxRounds && need != 0; ++round) {
      std::uint32_t page = 0, first = 0, reserved = 0;
      if (lane == (leader & 31u)) {
        const Grant g = reserve_or_last_try(cls, slot, __popc(need));
        reserved = g.got;
        page = g.page;
        first = g.first;
      }
      reserved = __shfl_sync(group, reserved, leader);
      if (reserved == 0) break;  // the arena is full: NULL for the lanes left
      page = __shfl_sync(group, page, leader);
      // The leader claims `reserved` bits (the reservation guarantees they
      // exist), one atomicOr per word; each claim serves the next lanes in order.
      std::uint32_t left = reserved, word = (first / 32) & (class_words(cls) - 1), start = first % 32;
      for (int t = 0; t < kMaxClaims && left != 0; ++t) {
        std::uint32_t got = 0, at = 0;
        if (lane == (leader & 31u)) got = claim(cls, page, left, word, start, at, HEAPBENCH_SLAB_BLIND(t, leader, left));
        got = __shfl_sync(group, got, leader);
        at = __shfl_sync(group, at, leader);
        const unsigned n = __popc(got);
        const bool mine = (need >> lane) & 1u;
        const unsigned rank = __popc(need & lanes_below());
        if (mine && rank < n) {
          const std::uint64_t block = at * 32ull + nth_of_run(got, rank);
          result = base + (static_cast<std::uint64_t>(page) << kPageShift) + (block << shift);
        }
        need &= ~__ballot_sync(group, mine && rank < n);
        left -= n;
      }
      if (left != 0 && lane == (leader & 31u)) release_count(page, left);
    }
    return result;
  }

  // Lanes of one class that fill whole pages (a page of 2 KiB blocks or
  // larger holds at most 32): each full group of a page's worth of lanes gets
  // a free page of its own, their leaders taking them at the same time.
  // Each leader claims its page blind: one atomicOr on the page bitmap for
  // the page at its start (slab_math::whole_page_start: a hash of the group's
  // index in the launch, so the page the same group of its warp had in the
  // round before), without reading the word or counting the page first;
  // the pages got so are counted afterwards, once for the warp. A page
  // counted before it is found (acquire) guarantees its search an end; one
  // claimed before it is counted needs no search, and a search that another
  // page's blind claim left without a page gives its count back, as one that
  // lost a race does. Only a leader whose page was taken searches, from the
  // word its atomicOr returned. The page's count and bits are set without
  // waiting on them; a __syncwarp orders them before any lane's use of its
  // block (a fence did: MEMBAR.SC.GPU, and an invalidation of the SM's L1).
  // Returns the lanes served; the others (a partial group, no free page) go
  // on to reserve. Returned by value, as every result of a call that is not
  // inlined: a reference argument puts the caller's variable in local memory.
  struct Whole {
    unsigned served;  // the lanes served
    void* result;     // this lane's block, or nullptr
  };
  __device__ __noinline__ Whole take_whole_pages(unsigned cls, unsigned group) const {
    using namespace slab_math;
    const std::uint32_t cap = blocks_per_page(cls), full = __popc(group) / cap;
    const unsigned lane = lane_id(), leader = __ffs(group) - 1;
    const unsigned rank = __popc(group & ((1u << lane) - 1)), sub = rank / cap;
    std::uint32_t page = kNone;
    bool blind = false;
    if (rank % cap == 0 && sub < full && pages != 0) {
      const std::uint32_t start = whole_page_start(warp_of_launch(), cls, sub, pages), bit = 1u << (start % 32);
      const std::uint32_t old = atomicOr(page_bits + start / 32, bit);
      if ((old & bit) == 0) {
        page = start;
        blind = true;
      } else if (count_pages(1)) {
        page = find_one(start, old);
        if (page == kNone) atomicSub(used, 1u);
      }
      if (page != kNone) {
        atomicAdd(header + page, make_header(tag_of_class(cls), cap));
        atomicOr(bitmap + static_cast<std::uint64_t>(page) * kBitmapWords, word_valid_mask(cls, 0));
      }
    }
    const unsigned counted = __ballot_sync(group, blind);
    if (lane == leader && counted != 0) atomicAdd(used, static_cast<std::uint32_t>(__popc(counted)));
    __syncwarp(group);  // orders the leaders' count and bits before any use of a block by the group
    page = __shfl_sync(group, page, __fns(group, 0, static_cast<int>(sub * cap + 1)));
    const bool got = sub < full && page != kNone;
    void* result = nullptr;
    if (got) {
      const std::uint64_t block = static_cast<std::uint64_t>(rank % cap) << class_shift(cls);
      result = base + (static_cast<std::uint64_t>(page) << kPageShift) + block;
    }
    return {__ballot_sync(group, got), result};
  }

  // A free by fewer lanes than this works lane by lane (deallocate).
  static constexpr int kShareLanes = 8;

  // A free orders the caller's use of its block before its bit is cleared (a
  // release: another warp may claim the block as soon as it sees the bit
  // clear). The count it then takes the block off is a relaxed atomic, not
  // ordered after the bit (a second fence cost churn of 64 B 1.06x-1.07x):
  // a count, even of 0, can be seen before the bit is cleared. So a page goes
  // back to the pool only once its bits read clear (give_back_class_page),
  // and within a page a claim keeps only the bits its atomicOr found clear: a
  // bit still set is a block no one gets until its free lands (a reservation
  // short of bits claims on, or gives its count back and tries again).
  __device__ void deallocate(void* p) const {
    using namespace slab_math;
    const std::uint64_t off = static_cast<std::uint64_t>(static_cast<unsigned char*>(p) - base);
    if (off >= static_cast<std::uint64_t>(pages) << kPageShift) return;  // not a block of this arena
    const auto page = static_cast<std::uint32_t>(off >> kPageShift);
    const unsigned active = __activemask();
    if (__popc(active) < kShareLanes) {
      free_alone(page, off);
      return;
    }
    const std::uint32_t tag = header_tag(load(header + page));  // fixed while the block lives
    if (tag == kLargeTag) {
      release_count<true>(page, 1);  // this thread's use of the run before the run is given back
      return;
    }
    if (tag == kFreeTag || tag > kClasses) return;  // not a live block
    const unsigned lane = lane_id();
    const auto index = static_cast<std::uint32_t>((off & (kPageBytes - 1)) >> class_shift(tag - 1));
    const std::uint32_t word = page * kBitmapWords + index / 32;
    // Lanes freeing into one word share one release atomic, their page one count.
    const unsigned same_word = __match_any_sync(active, word);
    const std::uint32_t bits = __reduce_or_sync(same_word, 1u << (index % 32));
    __syncwarp(active);  // the lanes' last reads and writes of their blocks before the bits
    if (lane == static_cast<unsigned>(__ffs(same_word) - 1)) and_release(bitmap + word, ~bits);
    const unsigned same_page = __match_any_sync(active, page);
    if (lane == static_cast<unsigned>(__ffs(same_page) - 1)) release_count(page, __popc(same_page));
  }

  // Fewer than kShareLanes lanes free alone: each clears its own bit and takes
  // its own block off the page's count, with no match, reduction or warp
  // barrier (in churn a warp's lanes reach a free in groups of about five,
  // spread over several words, and those collectives ran in the compiler's
  // loop for a split warp). The release is a fence made while the page's
  // header is read, so the two waits overlap; the clear after it is then a
  // release (PTX: a release fence, then a relaxed atomic).
  __device__ void free_alone(std::uint32_t page, std::uint64_t off) const {
    using namespace slab_math;
    const std::uint32_t h = load(header + page);  // in flight during the fence
    fence_release();
    const std::uint32_t tag = header_tag(h);  // fixed while the block lives
    if (tag == kLargeTag) {
      release_count(page, 1);  // after the fence: this thread's use of the run before the run is given back
      return;
    }
    if (tag == kFreeTag || tag > kClasses) return;  // not a live block
    const auto index = static_cast<std::uint32_t>((off & (kPageBytes - 1)) >> class_shift(tag - 1));
    atomicAnd(bitmap + page * kBitmapWords + index / 32, ~(1u << (index % 32)));
    release_count(page, 1);
  }

  // A release fence at the device's scope: fence.release (PTX 8.6, sm_90) is
  // MEMBAR.ALL.GPU alone; fence.acq_rel also invalidates the SM's L1.
  __device__ static void fence_release() {
#if __CUDA_ARCH__ >= 900
    asm volatile("fence.release.gpu;" ::: "memory");
#else
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
#endif
  }

  // ---- the handle's own parts (public: the handle stays a plain aggregate of pointers) ----

  // The bits of the lanes below this one, read where used (a special
  // register), not held across allocate's rounds as (1 << lane) - 1 was.
  __device__ static unsigned lanes_below() {
    unsigned m;
    asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
    return m;
  }
  __device__ static unsigned lane_id() {
    unsigned lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
  }
  // The slot a warp fills, one of its class's 2^slots_log2: a hash of the warp's index in
  // its launch (slab_math::slot_of_warp_index), which spreads the warps that
  // run at once evenly over the slots.
  __device__ static unsigned slot_of_warp(unsigned slots_log2) {
    return slab_math::slot_of_warp_index(warp_of_launch(), slots_log2);
  }
  // The calling warp's index in its launch, block-major, as the warps are numbered.
  __device__ static std::uint64_t warp_of_launch() {
    const unsigned in_block = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const unsigned warps_per_block = (blockDim.x * blockDim.y * blockDim.z + 31) / 32;
    const std::uint64_t block = blockIdx.x + static_cast<std::uint64_t>(gridDim.x) * (blockIdx.y + static_cast<std::uint64_t>(gridDim.y) * blockIdx.z);
    return block * warps_per_block + in_block / 32;
  }

  // Metadata is read from L2 (other SMs change it with atomics; L1 is not coherent).
  __device__ static std::uint32_t load(const std::uint32_t* p) { return __ldcg(p); }
  // Atomics with release semantics (PTX atom.release.gpu): what this thread wrote
  // before, and through __syncwarp what its warp wrote, is visible before the
  // atomic is. Where a __threadfence() stood before a relaxed atomic: that is
  // fence.sc.gpu, which on sm_90 is MEMBAR.SC.GPU and also invalidates the SM's
  // L1 (CCTL.IVALL); a release is MEMBAR.ALL.GPU alone. Nothing here needs the
  // sequential consistency of the one or the acquire of the other.
  using DeviceAtomic = cuda::atomic_ref<std::uint32_t, cuda::thread_scope_device>;
  __device__ static std::uint32_t and_release(std::uint32_t* p, std::uint32_t v) {
    return DeviceAtomic(*p).fetch_and(v, cuda::memory_order_release);
  }
  __device__ static std::uint32_t sub_release(std::uint32_t* p, std::uint32_t v) {
    return DeviceAtomic(*p).fetch_sub(v, cuda::memory_order_release);
  }
  __device__ static std::uint32_t add_release(std::uint32_t* p, std::uint32_t v) {
    return DeviceAtomic(*p).fetch_add(v, cuda::memory_order_release);
  }
  __device__ static std::uint32_t cas_release(std::uint32_t* p, std::uint32_t expected, std::uint32_t desired) {
    DeviceAtomic(*p).compare_exchange_strong(expected, desired, cuda::memory_order_release, cuda::memory_order_relaxed);
    return expected;  // the value found, as atomicCAS returns it
  }
  struct L2Words {  // find_run's reader of the page bitmap
    const std::uint32_t* words;
    __host__ __device__ std::uint32_t operator()(std::uint32_t w) const {
#ifdef __CUDA_ARCH__
      return __ldcg(words + w);
#else
      return words[w];
#endif
    }
  };

  struct L2Chunk {  // scan_headers' reader of the page headers: four 16-byte loads
    const std::uint32_t* words;
    __host__ __device__ void operator()(std::uint32_t first, std::uint32_t (&h)[slab_math::kRoomChunk]) const {
      static_assert(slab_math::kRoomChunk == 16, "four uint4 loads");
#ifdef __CUDA_ARCH__
      const auto* v = reinterpret_cast<const uint4*>(words + first);
      for (int i = 0; i < 4; ++i) {
        const uint4 x = __ldcg(v + i);
        h[4 * i] = x.x;
        h[4 * i + 1] = x.y;
        h[4 * i + 2] = x.z;
        h[4 * i + 3] = x.w;
      }
#else
      for (std::uint32_t j = 0; j < slab_math::kRoomChunk; ++j) h[j] = words[first + j];
#endif
    }
  };

  struct TakeEmpty {  // steal_empty's visitor of scan_headers: takes back the empty pages it reads
    const slab* s;
    bool all;
    bool* stole;
    __host__ __device__ bool operator()(std::uint32_t first, const std::uint32_t* h, std::uint32_t n) const {
#ifdef __CUDA_ARCH__
      bool any = false;
      for (std::uint32_t j = 0; j < n; ++j) any |= slab_math::empty_class_page(h[j]);
      // Taken in a call of its own, which reads the chunk's headers again: a
      // call here with the 16 headers live across it took 94 registers.
      if (any && s->take_empties(first, n, all)) {
        *stole = true;
        if (!all) return true;
      }
#endif
      return false;
    }
  };

  // The leader's reservation (reserve), and before a NULL one more search for a
  // free page, room or an empty page, that reads every header, not only
  // kRoomScan of them: without it a call failed with room elsewhere in the
  // arena, and (in an arena of fewer pages than that) when every free page was
  // just taken by warps whose pages did not yet show as their class's
  // (docs/slab.md, "Searches that end").
  // Like reserve, it asks for a page's worth at most.
  __device__ Grant reserve_or_last_try(unsigned cls, std::uint32_t* slot, std::uint32_t want) const {
    const Grant g = reserve(cls, slot, want);
    if (g.got != 0) return g;
    const std::uint32_t cap = slab_math::blocks_per_page(cls);
    return self->take_page<true>(cls, slot, want < cap ? want : cap, 0);
  }

  // Reserves up to `want` blocks (at most a page's) in the slot's page, or in
  // a new page when it is full or gone; returns how many (0: no page left).
  // `first` is the page's count before the reservation: where free bits likely are.
  // A new page comes from take_page: a free one, else one of the class that has
  // room, else an empty page of another class.
  __device__ Grant reserve(unsigned cls, std::uint32_t* slot, std::uint32_t want) const {
    using namespace slab_math;
    const std::uint32_t tag = tag_of_class(cls), cap = blocks_per_page(cls);
    // A request that fills a page (all of a 64 KiB page, or 16 lanes of 4 KiB)
    // takes one of its own: it would only hold the slot's page up.
    if (want >= cap) return self->take_page(cls, slot, cap, 0);
    const std::uint32_t s = load(slot);
    if (s != kSlotEmpty) {
      const std::uint32_t page = s - 1;
      // Reserve first, look afterwards: one atomicAdd per warp. A page of
      // another class (or free) or full is given back what was added.
      const std::uint32_t old = atomicAdd(header + page, want);
      if (header_tag(old) == tag && header_count(old) < cap) {
        const std::uint32_t got = cap - header_count(old) < want ? cap - header_count(old) : want;
        if (got < want) atomicSub(header + page, want - got);
        return {got, page, header_count(old), 0};
      }
      release_count(page, want);
    }
    return self->refill(cls, slot, s, want);
  }

  // The slot's page is full or gone: this warp takes a new page and offers it
  // to the slot, without a lock. Warps that find the page full at the same
  // time each take one and none waits; the first to swap its page in makes it
  // the slot's (the page it replaced leaves the slot). Each of the others
  // moves its blocks into the winner's page where they fit (join_winner), and
  // else keeps its page out of any slot, so it goes back to the pool once emptied.
  __device__ __noinline__ Grant refill(unsigned cls, std::uint32_t* slot, std::uint32_t s, std::uint32_t want) const {
    using namespace slab_math;
    const Grant g = take_page(cls, slot, want, kSlotted);
    if (g.got == 0) return g;
    const std::uint32_t tag = tag_of_class(cls);
    const std::uint32_t was = cas_release(slot, s, g.page + 1);  // the page's header (slotted) before the slot names it
    if (was == s) {
      if (s != kSlotEmpty && s - 1 != g.page) unslot(s - 1, tag);
    } else if (was != g.page + 1) {
      if (was != kSlotEmpty) {
        const Grant joined = join_winner(cls, was - 1, want, g);
        if (joined.got != 0) return joined;
      }
      if (g.marked) unslot(g.page, tag);  // another warp's page is the slot's now; this one is no slot's
    }
    return g;
  }

  // This warp lost the slot to another warp's page (`winner`) after taking a
  // page of its own with `got` blocks reserved. Under contention (a million
  // threads at once) every loser kept its page with one warp's blocks in it,
  // so one class spread over nearly every page of the arena and another class
  // found none (docs/slab.md, "Pages spread by contention"). Instead it
  // reserves all `want` blocks in the winner's page, as reserve does, and
  // gives its own reservation back: the page retires once nothing else is in
  // it. False (nothing changed) when the winner's page cannot take them all.
  // Returns the reservation in the winner's page (got 0: nothing changed).
  __device__ __noinline__ Grant join_winner(unsigned cls, std::uint32_t winner, std::uint32_t want, Grant own) const {
    using namespace slab_math;
    const std::uint32_t old = atomicAdd(header + winner, want);
    if (header_tag(old) != tag_of_class(cls) || header_count(old) + want > blocks_per_page(cls)) {
      release_count(winner, want);
      return {0, 0, 0, 0};
    }
    if (own.marked) atomicAnd(header + own.page, ~kSlotted);  // no slot's: the release below may retire it
    release_count(own.page, own.got);
    return {want, winner, header_count(old), 0};
  }

  // A new page for `want` blocks of class cls, marked `mark` (kSlotted for a
  // slot's): a free page; once none is free, room in a page of the class
  // (reserve_room); once none has room, a free page again after taking an empty
  // page of another class (steal_empty). 0 when none of them is found. Those
  // two searches read kRoomScan headers from a start of the slot's, or with
  // kEvery (allocate's last try before a NULL) every header. A template, not a
  // loop over both or an argument: either kept one more value live across the
  // calls below, and every slab kernel went from 72-74 registers to 82-84 and
  // from 37.5 % occupancy to 25 % (docs/slab.md, "Searches that end").
  template <bool kEvery = false>
  __device__ __noinline__ Grant take_page(unsigned cls, const std::uint32_t* slot, std::uint32_t want, std::uint32_t mark) const {
    using namespace slab_math;
    std::uint32_t page = acquire(1, room_start(cls, slot));
    if (page == kNone) {
      // No page free: room in a page of the class, else an empty page of another class.
      Grant g = reserve_room(cls, want, room_start(cls, slot), kEvery ? pages : kRoomScan);
      if (g.got != 0) {
        // A page with room may be a slot's already: its mark is that slot's, not this caller's.
        g.marked = mark != 0 && (atomicOr(header + g.page, mark) & mark) == 0;
        return g;
      }
      if (!steal_empty(room_start(cls, slot), false, kEvery ? pages : kRoomScan)) return {0, 0, 0, 0};
      page = acquire(1, hint(cls, slot));
      if (page == kNone) return {0, 0, 0, 0};  // another caller took the page given back
    }
    // An add: keeps what stale reservers added meanwhile (a free page never has the slotted bit).
    atomicAdd(header + page, make_header(tag_of_class(cls), want) | mark);
    return {want, page, 0, mark != 0};
  }

  // A page leaves its slot (the slot has another now): it is no slot's any
  // more, and if it is empty it goes back to the pool (else its last free does).
  __device__ __noinline__ void unslot(std::uint32_t page, std::uint32_t tag) const {
    using namespace slab_math;
    if (header_tag(load(header + page)) != tag) return;  // another class's page by now: its slotted bit is not ours
    const std::uint32_t old = atomicAnd(header + page, ~kSlotted);
    if (header_tag(old) == tag && header_slotted(old) && header_count(old) == 0) retire(page, tag);
  }

  // Empty pages of any class (kept by the slots they were in) back to the pool,
  // once none is free: from `start`, `scan` headers at most; the first one
  // taken (`all`: every one read). Whether any was. The CAS makes one taker of
  // each; a slot still naming the page sees its tag change and takes another.
  // A search that read every page and found none is not made again until a
  // slot's page empties (`emptied` moves on): a full arena's failing calls
  // would otherwise each read every header once more.
  __device__ __noinline__ bool steal_empty(std::uint32_t start, bool all, std::uint32_t scan) const {
    using namespace slab_math;
    if (pages == 0) return false;
    const std::uint32_t clock = load(emptied);
    if (load(missed) == clock + 1) return false;
    bool stole = false;
    scan_headers(L2Chunk{header}, pages, start, scan, TakeEmpty{this, all, &stole});
    if (!stole && scan_covers(pages, scan)) atomicCAS(missed, load(missed), clock + 1);
    return stole;
  }

  // With no page free: up to `want` blocks in a page of class cls that has
  // room, found by find_room from `start` (the roomiest of the first 16
  // headers that include one with room for all, else the roomiest of
  // `scan` headers), reserved as in a slot's page; 0 when none has room. Without it a page that left its slot
  // full came back only once empty (docs/slab.md, "Stranded room").
  __device__ __noinline__ Grant reserve_room(unsigned cls, std::uint32_t want, std::uint32_t start, std::uint32_t scan) const {
    using namespace slab_math;
    const std::uint32_t tag = tag_of_class(cls), cap = blocks_per_page(cls);
    for (int t = 0; t < kMaxRoomTries; ++t) {
      const std::uint32_t p = find_room(L2Chunk{header}, pages, start, scan, cls, want);
      if (p == kNone) return {0, 0, 0, 0};
      const std::uint32_t old = atomicAdd(header + p, want);
      if (header_tag(old) == tag && header_count(old) < cap) {
        const std::uint32_t got = cap - header_count(old) < want ? cap - header_count(old) : want;
        if (got < want) atomicSub(header + p, want - got);
        return {got, p, header_count(old), 0};
      }
      release_count(p, want);  // filled (or emptied and retired) since it was read
      start = p + 1 < pages ? p + 1 : 0;
    }
    return {0, 0, 0, 0};
  }

  // Where a slot's search for room starts: its hint, moved on by the clock so
  // that its refills one after another do not read the same full pages first.
  __device__ std::uint32_t room_start(unsigned cls, const std::uint32_t* slot) const {
    const auto tick = static_cast<std::uint32_t>(clock()) * 0x9E3779B1u;
    return pages == 0 ? 0 : static_cast<std::uint32_t>((hint(cls, slot) + static_cast<std::uint64_t>(tick)) % pages);
  }

  __device__ std::uint32_t hint(unsigned cls, const std::uint32_t* slot) const {
    const auto k = static_cast<std::uint32_t>(slot - slots) + cls;
    return pages == 0 ? 0 : static_cast<std::uint32_t>((k * 2654435761ull) % pages);
  }

  // One atomicOr on the first bitmap word from `word` on with a free bit;
  // returns the bits it got and their word (`at`); moves `word` on when full.
  // `blind`: the reservation's first claim (allocate makes it a grab instead
  // for fewer than 4 blocks in a warp of several classes), made without reading the word: the
  // page's count hands out places in order, so the bits from `start` on are
  // free unless blocks were freed out of order or a claimer strayed there; a
  // bit already set stays as it was (an atomicOr) and is not counted as got.
  // Every other claim takes all of a word's free bits, also without reading
  // it, and gives back the ones it does not need with an atomicAnd it does
  // not wait for: one round trip where a read and an atomicOr were two (blocks
  // freed out of order, as in churn, made about 2.4 reads a reservation). A
  // bit given back reads as taken until then: a concurrent claim moves on.
  // Those bits were never anyone's block, so the atomicAnd orders nothing; it
  // may land after the page's count reaches 0, as a free's may (deallocate).
  __device__ std::uint32_t claim(unsigned cls, std::uint32_t page, std::uint32_t left, std::uint32_t& word,
                                 std::uint32_t& start, std::uint32_t& at, bool blind) const {
    using namespace slab_math;
    const std::uint32_t words = class_words(cls);
    std::uint32_t* row = bitmap + static_cast<std::uint64_t>(page) * kBitmapWords;
    for (std::uint32_t k = 0; k < words; ++k) {
      const std::uint32_t valid = word_valid_mask(cls, word);
      const std::uint32_t free = blind && k == 0 ? valid & (0xffffffffu << start) : 0u;  // start < 32
      if (free != 0) {
        const std::uint32_t want = pick_bits(free, left, start);
        const std::uint32_t old = atomicOr(row + word, want);
        at = word;
        if ((~(old | want) & valid) == 0) {
          word = (word + 1) & (words - 1);
          start = 0;
        }
        return want & ~old;
      }
      const std::uint32_t got = valid & ~atomicOr(row + word, valid);
      if (got != 0) {
        const std::uint32_t keep = pick_bits(got, left, 0);
        if (keep != got) atomicAnd(row + word, ~(got & ~keep));
        at = word;
        if (keep == got) {
          word = (word + 1) & (words - 1);
          start = 0;
        }
        return keep;
      }
      word = (word + 1) & (words - 1);
      start = 0;
    }
    at = 0;
    return 0;
  }

  // Takes n from a page's count; whoever brings it to 0 retires the page (the
  // count is 0 only when no block is live and no reservation is pending),
  // unless a slot holds it: that page stays in its class, ready for the
  // slot's next warp, until the slot moves on (unslot) or another class
  // needs it (steal_empty). `Release`: a large run's free by a lane that made
  // no fence before (deallocate), which orders the run's use before the count
  // that gives it back (a reservation given back has nothing to order).
  template <bool Release = false>
  __device__ void release_count(std::uint32_t page, std::uint32_t n) const {
    using namespace slab_math;
    const std::uint32_t old = Release ? sub_release(header + page, n) : atomicSub(header + page, n);
    const std::uint32_t tag = header_tag(old);
    if (tag == kFreeTag || header_count(old) != n) return;
    if (!header_slotted(old)) {
      self->retire(page, tag);
    } else {
      atomicAdd(emptied, 1u);  // an empty page another class may take (steal_empty)
    }
  }

  // An empty page (or large run) back to the pool. The CAS loses to a
  // reservation made since the count reached 0, or to a slot that took the
  // page meanwhile: then the page stays.
  __device__ __noinline__ void retire(std::uint32_t page, std::uint32_t tag) const {
    using namespace slab_math;
    if (atomicCAS(header + page, make_header(tag, 0), 0u) != make_header(tag, 0)) return;
    if (tag == kLargeTag) {
      release_pages(page, load(run + page));
    } else {
      give_back_class_page(page, tag - 1);
    }
  }

  // steal_empty's taker: the empty class pages among headers [first, first + n),
  // each made free by an atomicCAS (one taker) and given back; the first one
  // (`all`: every one). Whether any was.
  __device__ __noinline__ bool take_empties(std::uint32_t first, std::uint32_t n, bool all) const {
    using namespace slab_math;
    bool took = false;
    for (std::uint32_t j = 0; j < n; ++j) {
      const std::uint32_t h = load(header + first + j);
      if (!empty_class_page(h) || atomicCAS(header + first + j, h, 0u) != h) continue;
      give_back_class_page(first + j, header_tag(h) - 1);
      took = true;
      if (!all) break;
    }
    return took;
  }

  // A class page whose header this thread has just made free (count 0: no
  // block and no reservation in it) back to the pool, once every word of its
  // class's bits reads 0. A free's count is not ordered after its bit
  // (deallocate), nor a claim's bits given back after anything, so a count of
  // 0 can be seen before the last bits clear; and take_whole_pages sets a
  // free page's bits without looking. No one can reserve in the page
  // meanwhile (its header is a free page's), so a word read as 0 stays 0, and
  // the page's bit in the pool is cleared only once the reads returned 0 (a
  // dependency, as the pool's hand-over relied on before: docs/slab.md; a
  // fence here cost per_thread of 1 KiB at 100,000 threads 1 %-3 %). A page
  // whose bits do not clear within kMaxBitWaits reads stays out of the pool
  // rather than be handed out so (a free's or a claim's atomic lands within
  // microseconds, well inside the reads; no run has counted how often, if ever,
  // the reads run out).
  static constexpr int kMaxBitWaits = 64;
  __device__ void give_back_class_page(std::uint32_t page, unsigned cls) const {
    using namespace slab_math;
    const auto* row = reinterpret_cast<const uint4*>(bitmap + static_cast<std::uint64_t>(page) * kBitmapWords);
    // Rows are 512-byte aligned; a row's words past its class's are 0.
    const std::uint32_t vectors = (class_words(cls) + 3) / 4;
    for (int t = 0; t < kMaxBitWaits; ++t) {
      std::uint32_t any = 0;
#pragma unroll 1
      for (std::uint32_t i = 0; i < vectors; ++i) {
        const uint4 v = __ldcg(row + i);
        any |= v.x | v.y | v.z | v.w;
      }
      if (any == 0) {
        release_pages(page, 1);
        return;
      }
      __nanosleep(128);
    }
  }

  // Counts n pages used if that many are free: past the count, they exist,
  // so a search for one page ends soon (each lost race is another caller's page).
  __device__ bool count_pages(std::uint32_t n) const {
    if (n == 0 || n > pages) return false;
    if (atomicAdd(used, n) + n > pages) {
      atomicSub(used, n);
      return false;
    }
    return true;
  }
  // Claims n contiguous free pages and counts them used; kNone if none. One
  // page is claimed blind first: an atomicOr of its bit at `start`, without
  // reading the word or counting the page, counted once got; only when that
  // page was taken is one counted and searched for, from the word the atomicOr
  // returned (take_whole_pages says why a search counted first still ends).
  __device__ std::uint32_t acquire(std::uint32_t n, std::uint32_t start) const {
    using namespace slab_math;
    if (n == 1 && pages != 0) {
      const std::uint32_t bit = 1u << (start % 32);
      const std::uint32_t old = atomicOr(page_bits + start / 32, bit);
      if ((old & bit) == 0) {
        atomicAdd(used, 1u);
        return start;
      }
      if (!count_pages(1)) return kNone;
      const std::uint32_t p = find_one(start, old);
      if (p == kNone) atomicSub(used, 1u);
      return p;
    }
    if (!count_pages(n)) return kNone;
    const std::uint32_t p = find_and_claim_run(n, start);
    if (p == kNone) atomicSub(used, n);
    return p;
  }

  // One free page, by words from `start`'s: a set bit of the first word with
  // one, taken by atomicOr; callers that meet in a word pick different bits.
  // `seen`: start's word as the caller read it (maybe stale: a lost race
  // reads the word again).
  __device__ std::uint32_t find_one(std::uint32_t start, std::uint32_t seen) const {
    using namespace slab_math;
    const auto words = static_cast<std::uint32_t>(page_words(pages));
    std::uint32_t w = start / 32;
    const unsigned salt = static_cast<unsigned>(clock()) ^ (lane_id() * 7u);
    for (std::uint32_t k = 0; k < 4 * words + 64; ++k) {
      const std::uint32_t free = ~(k == 0 ? seen : load(page_bits + w)) & range_mask(0, pages, w);
      if (free == 0) {
        w = w + 1 < words ? w + 1 : 0;
        continue;
      }
      const std::uint32_t bit = 1u << nth_set_bit(free, salt % popcount(free));
      if ((atomicOr(page_bits + w, bit) & bit) == 0) return w * 32 + (31 - __clz(bit));
    }
    return slab_math::kNone;
  }

  __device__ std::uint32_t find_and_claim_run(std::uint32_t n, std::uint32_t start) const {
    using namespace slab_math;
    for (int t = 0; t < kMaxRunTries; ++t) {
      const std::uint32_t p = find_run(L2Words{page_bits}, pages, start, n);
      if (p == kNone) return kNone;
      if (claim_pages(p, n)) return p;
      start = p + 1 < pages ? p + 1 : 0;
    }
    return kNone;
  }

  // Sets the bits of [p, p + n) word by word; on a bit someone else holds, undoes its own and fails.
  __device__ bool claim_pages(std::uint32_t p, std::uint32_t n) const {
    using namespace slab_math;
    const std::uint32_t w0 = p / 32, w1 = (p + n - 1) / 32;
    for (std::uint32_t w = w0; w <= w1; ++w) {
      const std::uint32_t m = range_mask(p, n, w);
      const std::uint32_t old = atomicOr(page_bits + w, m);
      if ((old & m) != 0) {
        atomicAnd(page_bits + w, ~(m & ~old));
        for (std::uint32_t v = w0; v < w; ++v) atomicAnd(page_bits + v, ~range_mask(p, n, v));
        return false;
      }
    }
    return true;
  }

  __device__ void release_pages(std::uint32_t p, std::uint32_t n) const {
    using namespace slab_math;
    for (std::uint32_t w = p / 32; w <= (p + n - 1) / 32; ++w) atomicAnd(page_bits + w, ~range_mask(p, n, w));
    sub_release(used, n);  // the bits clear before the count says they are
  }

  // Past 64 KiB: a run of whole pages, first fit from a hashed start, one
  // thread at a time (no warp aggregation); freed back as a run.
  __device__ __noinline__ void* allocate_large(std::size_t size) const {
    using namespace slab_math;
    if (size > (static_cast<std::uint64_t>(pages) << kPageShift)) return nullptr;
    const auto n = static_cast<std::uint32_t>(pages_for(size));
    const std::uint64_t me = (static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * 2654435761ull;
    const std::uint32_t start = pages == 0 ? 0 : static_cast<std::uint32_t>(me % pages);
    std::uint32_t p = acquire(n, start);
    // The empty pages the slots keep can stand between free ones: give back
    // every one in reach, then look for the run once more.
    if (p == kNone && steal_empty(start, true, pages)) p = acquire(n, start);
    if (p == kNone) return nullptr;
    run[p] = n;
    add_release(header + p, make_header(kLargeTag, 1));  // the run's length before the header that makes it freeable
    return base + (static_cast<std::uint64_t>(p) << kPageShift);
  }

  // The host side: the arena, and the reset before every round, which keeps
  // the slots' empty pages when no block is live (see Owner::reset).
  struct Owner {
    // An arena too small for the metadata of no page at all (about 13 KB; a
    // heap of whole MiB never is, app::Heap's bytes can be) is refused before
    // anything is written past its end.
    explicit Owner(const heapbench::Case& c) : layout_(slab_math::layout(c.arena_bytes())) {
      const std::uint64_t need = slab_math::bytes_taken(layout_);
      if (need > c.arena_bytes()) {
        throw std::invalid_argument("slab: an arena of " + std::to_string(c.arena_bytes()) +
                                    " B cannot hold its metadata (" + std::to_string(need) + " B)");
      }
      check(cudaMalloc(&arena_, c.arena_bytes()), "cudaMalloc");
      check(cudaMalloc(&live_, sizeof *live_), "cudaMalloc");
      check(cudaMemsetAsync(arena_ + layout_.meta_begin, 0, layout_.meta_bytes), "cudaMemsetAsync");
      const slab h = handle();  // its copy in the arena, which its calls that are not inlined are made on (self)
      check(cudaMemcpy(arena_ + layout_.handle, &h, sizeof h, cudaMemcpyHostToDevice), "cudaMemcpy");
    }
    ~Owner() {
      cudaFree(live_);
      cudaFree(arena_);
      (void)cudaGetLastError();  // a destructor must not throw; leave no error for the next case
    }
    Owner(const Owner&) = delete;
    Owner& operator=(const Owner&) = delete;

    slab handle() const {
      slab h;
      h.base = arena_;
      h.bitmap = word_at(layout_.bitmap);
      h.header = word_at(layout_.header);
      h.run = word_at(layout_.run);
      h.page_bits = word_at(layout_.page_bits);
      h.slots = word_at(layout_.slots);
      h.used = word_at(layout_.used);
      h.emptied = word_at(layout_.emptied);
      h.missed = word_at(layout_.missed);
      h.pages = static_cast<std::uint32_t>(layout_.pages);
      h.self = reinterpret_cast<const slab*>(arena_ + layout_.handle);
      return h;
    }
    // No block live: every page free, every bitmap clear. When the last round
    // freed every block it made, that is already so, and the pages the slots
    // hold (empty, in their classes) are kept, as CUDA's heap keeps its state
    // from launch to launch: the next round does not begin by taking a page
    // for every slot. Otherwise (a block still live, a large run) the metadata
    // is cleared (0.8 % of the arena, not the pages).
    // All on the device, in stream order: a memset and two small kernels.
    void reset() {
      check(cudaMemsetAsync(live_, 0, sizeof *live_), "cudaMemsetAsync");
      const slab h = handle();
      if (h.pages == 0) return;  // an arena too small for a page holds nothing to keep or clear
      slab_note_live<<<(h.pages + 255) / 256, 256>>>(h, live_);
      check(cudaGetLastError(), "slab_note_live");
      const std::uint64_t vectors = layout_.meta_bytes / 16;
      slab_clear_if_live<<<static_cast<unsigned>((vectors + 255) / 256 < 1024 ? (vectors + 255) / 256 : 1024), 256>>>(
          reinterpret_cast<uint4*>(arena_ + layout_.meta_begin), vectors, live_);
      check(cudaGetLastError(), "slab_clear_if_live");
    }
    const slab_math::Layout& layout() const { return layout_; }

   private:
    std::uint32_t* word_at(std::uint64_t offset) const { return reinterpret_cast<std::uint32_t*>(arena_ + offset); }
    static void check(cudaError_t e, const char* call) { heapbench::check_cuda(e, "slab", call); }
    slab_math::Layout layout_;
    unsigned char* arena_ = nullptr;
    std::uint32_t* live_ = nullptr;  // set by slab_note_live: the metadata must be cleared
  };
};
#undef HEAPBENCH_SLAB_BLIND
#undef HEAPBENCH_SLAB_LEADER

static_assert(sizeof(slab) <= slab_math::kHandleBytes, "the arena keeps kHandleBytes for the handle's copy");

// Owner::reset's two kernels (templates: defined in a header that several
// translation units include). Any page with a count (a block or a large run
// live) sets *live.
template <int>
__global__ void slab_note_live(slab h, std::uint32_t* live) {
  using namespace slab_math;
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < h.pages && (header_count(h.header[i]) != 0 || header_tag(h.header[i]) == kLargeTag)) *live = 1;
}
template <int>
__global__ void slab_clear_if_live(uint4* meta, std::uint64_t vectors, const std::uint32_t* live) {
  if (*live == 0) return;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < vectors;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    meta[i] = make_uint4(0, 0, 0, 0);
}

}  // namespace heapbench_user
#endif
