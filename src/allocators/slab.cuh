#pragma once
// slab: a size-class allocator that frees, heapbench's reference between CUDA's
// malloc and the bump ceiling (docs/slab.md says how it works and where the
// design comes from; docs/allocators.md is the adapter contract it follows).
//
// One cudaMalloc arena of the case's heap holds everything: 64 KiB pages from
// its start, and the metadata (a bitmap per page, a header per page, a bitmap
// of pages in use, the per-class slots) at its end, so utilisation counts the
// allocator's own bookkeeping against it. Sizes of 16 B ... 64 KiB are rounded
// up to a power of two (13 classes); a page serves one class at a time and
// goes back to the pool of free pages when its last block is freed. Larger
// sizes take a run of whole pages.
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
#include <string>

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

struct slab {
  static constexpr const heapbench::ApiTraits& traits = slab_traits;
  static constexpr std::size_t min_alignment = 16;  // pages start at the arena (cudaMalloc: 256 B aligned), blocks at multiples of 16 B

  unsigned char* base = nullptr;
  std::uint32_t* bitmap = nullptr;
  std::uint32_t* header = nullptr;
  std::uint32_t* run = nullptr;
  std::uint32_t* owner = nullptr;
  std::uint32_t* page_bits = nullptr;
  unsigned long long* slots = nullptr;
  std::uint32_t* used = nullptr;
  std::uint32_t* emptied = nullptr;
  std::uint32_t* missed = nullptr;
  std::uint32_t pages = 0;

  // The paths past a slot's page (a new page, the search for room, the large
  // runs) are not inlined: the path every call takes stays short in registers
  // and instructions (a round of 1,024 threads is a few microseconds, most of
  // them waits on memory and on fetching the kernel's code).

  // Bounds on every loop: never spin forever (docs/allocators.md).
  static constexpr int kMaxRounds = 40;       // reservations per call; a 64 KiB class page holds one block
  static constexpr int kMaxClaims = 64;       // bitmap atomics per reservation
  static constexpr int kMaxRunTries = 8;
  // Once no page is free: headers read for a page of the class with room, and
  // pages tried (a reservation can lose the room found to another warp).
  static constexpr std::uint32_t kRoomScan = 1024;
  static constexpr int kMaxRoomTries = 4;
  static constexpr int kMaxSlotTries = 16;  // CAS of a slot's word, which every failed reservation moves
  static constexpr int kMaxLargeSteals = 256;  // idle slots' pages a large request gives back before NULL
  // A reservation's answer: how many blocks, and whether they are an armed
  // page's places (kFresh: the bits are set already) or a count reserved in a
  // page whose free bits the leader claims.
  static constexpr std::uint32_t kFresh = 1u << 31;

  __device__ void* allocate(std::size_t size, std::size_t) const {
    using namespace slab_math;
    const unsigned cls = class_of(size);
    if (cls == kLarge) return allocate_large(size);
    const unsigned active = __activemask();
    const unsigned group = __match_any_sync(active, cls);
    const unsigned lane = lane_id();
    const unsigned leader = __ffs(group) - 1;
    const unsigned below = (1u << lane) - 1;
    unsigned long long* slot = slots + slot_of_warp() * kSlotStride + cls;
    const unsigned shift = class_shift(cls);
    void* result = nullptr;
    unsigned need = group;  // the lanes still without a block
    if (__popc(group) >= blocks_per_page(cls)) need &= ~take_whole_pages(cls, group, slot, result);
    for (int round = 0; round < kMaxRounds && need != 0; ++round) {
      std::uint32_t page = 0, first = 0, reserved = 0;
      if (lane == leader) reserved = reserve_or_last_try(cls, slot, __popc(need), page, first);
      reserved = __shfl_sync(group, reserved, leader);
      if (reserved == 0) break;  // the arena is full: NULL for the lanes left
      page = __shfl_sync(group, page, leader);
      first = __shfl_sync(group, first, leader);
      if (reserved & kFresh) {  // an armed page's places first, first + 1, ...: the next lanes' blocks
        const unsigned rank = __popc(need & below);
        const bool served = ((need >> lane) & 1u) && rank < (reserved & ~kFresh);
        if (served) result = base + (static_cast<std::uint64_t>(page) << kPageShift) + (static_cast<std::uint64_t>(first + rank) << shift);
        need &= ~__ballot_sync(group, served);
        continue;
      }
      // The leader claims `reserved` bits (the reservation guarantees they
      // exist), one atomicOr per word; each claim serves the next lanes in order.
      std::uint32_t left = reserved, word = (first / 32) & (class_words(cls) - 1), start = first % 32;
      for (int t = 0; t < kMaxClaims && left != 0; ++t) {
        std::uint32_t got = 0, at = 0;
        if (lane == leader) got = claim(cls, page, left, word, start, at, t == 0);
        got = __shfl_sync(group, got, leader);
        at = __shfl_sync(group, at, leader);
        const unsigned n = __popc(got);
        const bool mine = (need >> lane) & 1u;
        const unsigned rank = __popc(need & below);
        if (mine && rank < n) {
          const std::uint64_t block = at * 32ull + nth_of_run(got, rank);
          result = base + (static_cast<std::uint64_t>(page) << kPageShift) + (block << shift);
        }
        need &= ~__ballot_sync(group, mine && rank < n);
        left -= n;
      }
      if (left != 0 && lane == leader) release_count(page, left);
    }
    return result;
  }

  // Lanes of one class that fill whole pages (a page of 2 KiB blocks or
  // larger holds at most 32): each full group of a page's worth of lanes gets
  // a free page of its own, their leaders taking them at the same time (one
  // count of pages in use for the warp), where reserve would take them one
  // after another. The page's count and bits are set without waiting on them;
  // a fence makes them visible before any lane has its block. Returns the
  // lanes served; the others (a partial group, no free page) go on to reserve.
  __device__ __noinline__ unsigned take_whole_pages(unsigned cls, unsigned group, const unsigned long long* slot,
                                                    void*& result) const {
    using namespace slab_math;
    const std::uint32_t cap = blocks_per_page(cls), full = __popc(group) / cap;
    const unsigned lane = lane_id(), leader = __ffs(group) - 1;
    const unsigned rank = __popc(group & ((1u << lane) - 1)), sub = rank / cap;
    std::uint32_t granted = 0;
    if (lane == leader) granted = grant_pages(full);
    granted = __shfl_sync(group, granted, leader);
    if (granted == 0) return 0;
    std::uint32_t page = kNone;
    if (sub < granted && rank % cap == 0) {
      page = find_one((hint(cls, slot) + sub * 97u) % pages);
      if (page == kNone) {
        atomicSub(used, 1u);
      } else {
        atomicAdd(header + page, make_header(tag_of_class(cls), cap));
        atomicOr(bitmap + static_cast<std::uint64_t>(page) * kBitmapWords, word_valid_mask(cls, 0));
        __threadfence();
      }
    }
    page = __shfl_sync(group, page, __fns(group, 0, static_cast<int>(sub * cap + 1)));
    const bool got = sub < granted && page != kNone;
    if (got) {
      const std::uint64_t block = static_cast<std::uint64_t>(rank % cap) << class_shift(cls);
      result = base + (static_cast<std::uint64_t>(page) << kPageShift) + block;
    }
    return __ballot_sync(group, got);
  }

  __device__ void deallocate(void* p) const {
    using namespace slab_math;
    const std::uint64_t off = static_cast<std::uint64_t>(static_cast<unsigned char*>(p) - base);
    if (off >= static_cast<std::uint64_t>(pages) << kPageShift) return;  // not a block of this arena
    const auto page = static_cast<std::uint32_t>(off >> kPageShift);
    const std::uint32_t tag = header_tag(load(header + page));  // fixed while the block lives
    if (tag == kLargeTag) {
      __threadfence();  // this thread's use of the run before the run is given back
      release_count(page, 1);
      return;
    }
    if (tag == kFreeTag || tag > kClasses) return;  // not a live block
    const unsigned active = __activemask();
    const unsigned lane = lane_id();
    const auto index = static_cast<std::uint32_t>((off & (kPageBytes - 1)) >> class_shift(tag - 1));
    const std::uint32_t word = page * kBitmapWords + index / 32;
    // Bits first, then the count: a count of 0 means every bit is clear, so the
    // page can go back to the pool. Lanes freeing into one word share one atomic.
    const unsigned same_word = __match_any_sync(active, word);
    const std::uint32_t bits = __reduce_or_sync(same_word, 1u << (index % 32));
    __syncwarp(active);  // the lanes' last reads and writes of their blocks ...
    if (lane == static_cast<unsigned>(__ffs(same_word) - 1)) {
      __threadfence();  // ... before the bits that give the blocks to another thread
      atomicAnd(bitmap + word, ~bits);
      __threadfence();  // and the bits before the count that gives the page back
    }
    __syncwarp(active);
    const unsigned same_page = __match_any_sync(active, page);
    if (lane == static_cast<unsigned>(__ffs(same_page) - 1)) release_count(page, __popc(same_page));
  }

  // ---- the handle's own parts (public: the handle stays a plain aggregate of pointers) ----

  __device__ static unsigned lane_id() {
    unsigned lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
  }
  // The slot a warp fills, one of kSlotsPerClass: warps of every SM spread over
  // all of them (a hash of the SM and the warp's slot in it).
  __device__ static unsigned slot_of_warp() {
    unsigned sm, warp;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    asm volatile("mov.u32 %0, %%warpid;" : "=r"(warp));
    return ((sm * 64u + warp) * 0x9E3779B1u) >> (32 - slab_math::kSlotsLog2);
  }

  // Metadata is read from L2 (other SMs change it with atomics; L1 is not coherent).
  __device__ static std::uint32_t load(const std::uint32_t* p) { return __ldcg(p); }
  __device__ static unsigned long long load(const unsigned long long* p) { return __ldcg(p); }
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

  // steal_empty's visitor of scan_headers: stops at the first idle slot's
  // page. It calls nothing and writes nothing: with a chunk of headers live, a
  // call or an inline close here cost every slab kernel registers.
  struct FindIdle {
    const slab* s;
    std::uint32_t* found;
    __host__ __device__ bool operator()(std::uint32_t first, const std::uint32_t* h, std::uint32_t n) const {
#ifdef __CUDA_ARCH__
#pragma unroll 1
      for (std::uint32_t j = 0; j < n; ++j) {
        if (!s->idle_slot_page(first + j, h[j])) continue;
        *found = first + j;
        return true;
      }
#endif
      return false;
    }
  };

  // The leader's reservation (reserve), and before a NULL one more search for a
  // free page, room or an idle slot's page, that reads every header, not only
  // kRoomScan of them, and then the places the class's other slots have left:
  // without it a call failed with room elsewhere in the arena, and (in an arena
  // of fewer pages than that) when every free page was just taken by warps
  // whose pages did not yet show as their class's (docs/slab.md, "Searches that end").
  // Like reserve, it asks for a page's worth at most.
  __device__ std::uint32_t reserve_or_last_try(unsigned cls, unsigned long long* slot, std::uint32_t want,
                                               std::uint32_t& page, std::uint32_t& first) const {
    const std::uint32_t got = reserve(cls, slot, want, page, first);
    if (got != 0) return got;
    const std::uint32_t cap = slab_math::blocks_per_page(cls);
    const std::uint32_t again = take_page<true>(cls, slot, want < cap ? want : cap, false, page, first);
    return again != 0 ? again : from_other_slots(cls, slot, want < cap ? want : cap, page, first);
  }

  // Reserves up to `want` blocks (at most a page's): places in the slot's
  // armed page, one atomicAdd on the slot's word (kFresh), or when it has none
  // left a new page (refill). A request that fills a page takes one of its own.
  // `first`: the first place, or (not kFresh) the page's count before the
  // reservation, where free bits likely are.
  __device__ std::uint32_t reserve(unsigned cls, unsigned long long* slot, std::uint32_t want, std::uint32_t& page,
                                   std::uint32_t& first) const {
    using namespace slab_math;
    const std::uint32_t cap = blocks_per_page(cls);
    // A request that fills a page (all of a 64 KiB page, or 16 lanes of 4 KiB)
    // takes one of its own: it would only use up the slot's page.
    if (want >= cap) return take_page(cls, slot, cap, false, page, first);
    const unsigned long long s = atomicAdd(slot, static_cast<unsigned long long>(want));
    const std::uint32_t left = slot_left(s, cls);
    if (left != 0) {
      page = slot_page(s);
      first = slot_given(s);
      return (left < want ? left : want) | kFresh;
    }
    return refill(cls, slot, s + want, want, page, first);
  }

  // Up to `want` blocks of a page of class cls with room: its count reserved
  // (the caller claims the bits), or 0 (another class's now, or full).
  __device__ std::uint32_t reserve_in(std::uint32_t page, unsigned cls, std::uint32_t want, std::uint32_t& first) const {
    using namespace slab_math;
    const std::uint32_t cap = blocks_per_page(cls);
    const std::uint32_t old = atomicAdd(header + page, want);
    if (header_tag(old) == tag_of_class(cls) && header_count(old) < cap) {
      const std::uint32_t got = cap - header_count(old) < want ? cap - header_count(old) : want;
      if (got < want) atomicSub(header + page, want - got);
      first = header_count(old);
      return got;
    }
    release_count(page, want);
    return 0;
  }

  // The slot's page has no places left, or the slot none: this warp arms a new
  // page, takes its first places and offers it to the slot, without a lock.
  // Warps that find the slot used up at the same time each arm one and none
  // waits; the first to swap its page in makes it the slot's (the page it
  // replaced leaves the slot). Each of the others takes its places in the
  // winner's page where they fit (join_winner), and else keeps its own page
  // out of any slot with its blocks in it. `seen`: the slot's word after this
  // warp's add. With no page free: room in a page of the class (not kFresh),
  // which the slot then names in room mode, and its next calls reserve there
  // first (else each would search again).
  __device__ __noinline__ std::uint32_t refill(unsigned cls, unsigned long long* slot, unsigned long long seen,
                                               std::uint32_t want, std::uint32_t& page, std::uint32_t& first) const {
    using namespace slab_math;
    if (slot_room_mode(seen)) {  // the slot's page is one with room: reserve in its count
      if (slot_given(seen) > (1u << 30)) atomicCAS(slot, seen, room_word(slot_page(seen)));  // its adds mean nothing
      const std::uint32_t got = reserve_in(slot_page(seen), cls, want, first);
      if (got != 0) {
        page = slot_page(seen);
        return got;
      }
    }
    const std::uint32_t got = take_page(cls, slot, want, true, page, first);
    if (got == 0) {
      // Failed adds move the slot's count on; far past any page's places, bring it back.
      if (slot_given(seen) > (1u << 30)) atomicCAS(slot, seen, (seen >> 32 << 32) | blocks_per_page(cls));
      return 0;
    }
    if ((got & kFresh) == 0) {
      // No page free, room in one of the class: the slot takes it in room mode
      // (one try), so the next calls reserve there before looking again.
      if (slot_page(seen) != page && atomicCAS(slot, seen, room_word(page)) == seen && slot_armed_page(seen) != kNone) {
        unslot(slot_armed_page(seen), tag_of_class(cls));
      }
      return got;
    }
    __threadfence();  // the page armed (count, bits, owner) before the slot names it
    unsigned long long s = seen;
    for (int t = 0; t < kMaxSlotTries; ++t) {
      const unsigned long long was = atomicCAS(slot, s, slot_word(page, want));
      if (was == s) {
        if (slot_armed_page(s) != kNone) unslot(slot_armed_page(s), tag_of_class(cls));
        return want | kFresh;
      }
      if (slot_page(was) != slot_page(s) || slot_left(was, cls) != 0) return join_winner(cls, slot, was, want, page, first);
      s = was;  // the same page, used up: more failed adds came in meanwhile
    }
    disarm(page, cls, want);  // never the slot's: the page keeps this warp's blocks and no other place
    return want | kFresh;
  }

  // This warp lost the slot to another page (`was`, the slot's word) after
  // arming a page of its own and taking its first `want` places. Under
  // contention (a million threads at once) every loser kept its page with one
  // warp's blocks in it, so one class spread over nearly every page of the
  // arena and another class found none (docs/slab.md, "Pages spread by
  // contention"). Instead it takes its places in the slot's page where they
  // all fit and gives its own page back; else it keeps its own page, out of
  // any slot, with only its blocks in it.
  __device__ __noinline__ std::uint32_t join_winner(unsigned cls, unsigned long long* slot, unsigned long long was,
                                                    std::uint32_t want, std::uint32_t& page, std::uint32_t& first) const {
    using namespace slab_math;
    if (slot_left(was, cls) >= want) {
      const unsigned long long s = atomicAdd(slot, static_cast<unsigned long long>(want));
      const std::uint32_t left = slot_left(s, cls);
      if (left >= want) {
        disarm(page, cls, 0);
        page = slot_page(s);
        first = slot_given(s);
        return want | kFresh;
      }
      if (left != 0) give_back(slot_page(s), cls, slot_given(s), left);  // a few places, taken by the add: unused
    }
    disarm(page, cls, want);
    first = 0;
    return want | kFresh;
  }

  // A new page for `want` blocks of class cls: a free page; once none is free,
  // room in a page of the class (reserve_room); once none has room, a free
  // page again after closing an idle slot (steal_empty). 0 when none of them
  // is found. `arm` (a slot's refill): a free page is armed for the slot, its
  // first `want` places the caller's (kFresh); else the page's count
  // is reserved and the caller claims bits. Those two searches read kRoomScan
  // headers from a start of the slot's, or with kEvery (allocate's last try
  // before a NULL) every header. A template, not a loop over both or an
  // argument: either kept one more value live across the calls below, and
  // every slab kernel went from 72-74 registers to 82-84 and from 37.5 %
  // occupancy to 25 % (docs/slab.md, "Searches that end").
  template <bool kEvery = false>
  __device__ __noinline__ std::uint32_t take_page(unsigned cls, const unsigned long long* slot, std::uint32_t want,
                                                  bool arm, std::uint32_t& page, std::uint32_t& first) const {
    using namespace slab_math;
    page = acquire(1, hint(cls, slot));
    if (page == kNone) {
      // No page free: room in a page of the class, else an idle slot's page.
      const std::uint32_t got = reserve_room(cls, want, room_start(cls, slot), kEvery ? pages : kRoomScan, page, first);
      if (got != 0) return got;
      if (!steal_empty(room_start(cls, slot), kEvery ? pages : kRoomScan)) return 0;
      page = acquire(1, hint(cls, slot));
      if (page == kNone) return 0;  // another caller took the page given back
    }
    first = 0;
    if (!arm) {
      // An add: keeps what stale reservers added meanwhile.
      atomicAdd(header + page, make_header(tag_of_class(cls), want));
      return want;
    }
    arm_page(page, cls, static_cast<std::uint32_t>(slot - slots));
    return want | kFresh;
  }

  // A page becomes a slot's: its count holds every place, its bits are set,
  // and it names the slot (owner). The caller fences before the slot names it.
  __device__ void arm_page(std::uint32_t page, unsigned cls, std::uint32_t slot_index) const {
    using namespace slab_math;
    atomicAdd(header + page, make_header(tag_of_class(cls), blocks_per_page(cls)) | kSlotted);
    set_bits(page, cls, 0, blocks_per_page(cls), true);
    owner[page] = slot_index;
    atomicAdd(emptied, 1u);  // an armed page: one that steal_empty may close once idle
  }

  // The bits of places [from, from + n) of a class-c page, set or cleared, a word at a time.
  __device__ void set_bits(std::uint32_t page, unsigned cls, std::uint32_t from, std::uint32_t n, bool set) const {
    using namespace slab_math;
    std::uint32_t* row = bitmap + static_cast<std::uint64_t>(page) * kBitmapWords;
    for (std::uint32_t w = from / 32; w < class_words(cls) && 32 * w < from + n; ++w) {
      const std::uint32_t m = range_mask(from, n, w) & word_valid_mask(cls, w);
      if (set) {
        atomicOr(row + w, m);
      } else {
        atomicAnd(row + w, ~m);
      }
    }
  }

  // Places [from, from + n) of a page that were reserved and never handed to a
  // lane go back as if their blocks were freed.
  __device__ __noinline__ void give_back(std::uint32_t page, unsigned cls, std::uint32_t from, std::uint32_t n) const {
    set_bits(page, cls, from, n, false);
    __threadfence();  // the bits before the count, as a free
    release_count(page, n);
  }

  // An armed page stops being a slot's: its places from `from` on, never
  // handed out, go back, and the page retires once its blocks are freed.
  __device__ __noinline__ void disarm(std::uint32_t page, unsigned cls, std::uint32_t from) const {
    using namespace slab_math;
    const std::uint32_t cap = blocks_per_page(cls);
    if (from < cap) {
      set_bits(page, cls, from, cap - from, false);
      __threadfence();
    }
    // No slot's now: the page retires when its count comes to 0, here or at its last free.
    // (Not release_count, which can rearm: a call cycle costs every kernel registers.)
    std::uint32_t old = atomicAnd(header + page, ~kSlotted);
    const std::uint32_t back = from < cap ? cap - from : 0;
    if (back != 0) old = atomicSub(header + page, back);
    if (header_count(old) == back && header_tag(old) == tag_of_class(cls)) retire(page, tag_of_class(cls));
  }

  // A slot's page whose every place was handed out and whose every block was
  // freed (its count came to 0): armed again in its slot, places from 0, where
  // the slot still names it; else it retires. Keeps a class's pages from round
  // to round, as CUDA's heap keeps its state from launch to launch.
  __device__ __noinline__ void rearm(std::uint32_t page, std::uint32_t tag) const {
    using namespace slab_math;
    const unsigned cls = tag - 1;
    const std::uint32_t idle = make_header(tag, 0) | kSlotted;
    if (atomicCAS(header + page, idle, make_header(tag, blocks_per_page(cls)) | kSlotted) != idle) return;
    set_bits(page, cls, 0, blocks_per_page(cls), true);
    __threadfence();  // count and bits before the slot hands out places
    unsigned long long* slot = slots + load(owner + page);
    unsigned long long s = load(slot);
    for (int t = 0; t < kMaxSlotTries && slot_armed_page(s) == page; ++t) {
      const unsigned long long was = atomicCAS(slot, s, slot_word(page, 0));
      if (was == s) {
        atomicAdd(emptied, 1u);
        return;
      }
      s = was;
    }
    disarm(page, cls, 0);
  }

  // An idle slot's page (every block freed; places it has not handed out may
  // remain): the slot is closed (its word names no page, so none of the places
  // is handed out any more), the places go back and the page retires. False
  // when the slot does not name the page or a block is live.
  __device__ __noinline__ bool close_if_idle(std::uint32_t page, std::uint32_t h) const {
    using namespace slab_math;
    if (!idle_slot_page(page, h)) return false;
    const unsigned cls = header_tag(h) - 1;
    unsigned long long* slot = slots + load(owner + page);
    const unsigned long long s = load(slot);
    const std::uint32_t left = slot_left(s, cls);
    if (slot_armed_page(s) != page || header_count(h) != left || atomicCAS(slot, s, 0ull) != s) return false;
    disarm(page, cls, blocks_per_page(cls) - left);  // the places left go back; the page retires
    return true;
  }
  // Whether a page whose header is h is a slot's armed page with no block live
  // (its count is the places the slot has not handed out).
  __device__ bool idle_slot_page(std::uint32_t page, std::uint32_t h) const {
    using namespace slab_math;
    const std::uint32_t tag = header_tag(h);
    if (!header_slotted(h) || tag == kFreeTag || tag > kClasses) return false;
    const std::uint32_t at = load(owner + page);
    if (at >= kSlotStride * kSlotsPerClass) return false;
    const unsigned long long s = load(slots + at);
    return slot_armed_page(s) == page && header_count(h) == slot_left(s, tag - 1);
  }

  // allocate's last try: the places the class's other slots have left, each
  // slot's word read and added to where some remain.
  __device__ __noinline__ std::uint32_t from_other_slots(unsigned cls, const unsigned long long* slot, std::uint32_t want,
                                                         std::uint32_t& page, std::uint32_t& first) const {
    using namespace slab_math;
    const auto own = static_cast<std::uint32_t>(slot - slots) / kSlotStride;
    for (std::uint32_t k = 1; k < kSlotsPerClass; ++k) {
      unsigned long long* other = slots + ((own + k) & (kSlotsPerClass - 1)) * kSlotStride + cls;
      if (slot_left(load(other), cls) == 0) continue;
      const unsigned long long s = atomicAdd(other, static_cast<unsigned long long>(want));
      const std::uint32_t left = slot_left(s, cls);
      if (left == 0) continue;
      page = slot_page(s);
      first = slot_given(s);
      return (left < want ? left : want) | kFresh;
    }
    return 0;
  }

  // A page leaves its slot (the slot has another now, after handing out all
  // its places): it is no slot's any more, and if it is empty it goes back to
  // the pool (else its last free does).
  __device__ __noinline__ void unslot(std::uint32_t page, std::uint32_t tag) const {
    using namespace slab_math;
    if (header_tag(load(header + page)) != tag) return;  // another class's page by now: its slotted bit is not ours
    const std::uint32_t old = atomicAnd(header + page, ~kSlotted);
    if (header_tag(old) == tag && header_slotted(old) && header_count(old) == 0) retire(page, tag);
  }

  // An idle slot's page of any class (armed, no block live) back to the pool,
  // once none is free: the first one found from `start`, `scan` headers at
  // most. Whether one was. The CAS on the slot's word makes one taker of each
  // (close_if_idle). A search that read every page and found none is not made
  // again until a page is armed or retires (`emptied` moves on): a full
  // arena's failing calls would otherwise each read every header once more.
  __device__ __noinline__ bool steal_empty(std::uint32_t start, std::uint32_t scan) const {
    using namespace slab_math;
    if (pages == 0) return false;
    const std::uint32_t clock = load(emptied);
    if (load(missed) == clock + 1) return false;
    std::uint32_t found = kNone;
    if (!scan_headers(L2Chunk{header}, pages, start, scan, FindIdle{this, &found})) {
      if (scan_covers(pages, scan)) atomicCAS(missed, load(missed), clock + 1);
      return false;
    }
    return close_if_idle(found, load(header + found));
  }

  // With no page free: up to `want` blocks in a page of class cls that has
  // room, found by find_room from `start` (the roomiest of the first 16
  // headers that include one with room for all, else the roomiest of
  // `scan` headers), reserved as in a slot's page; 0 when none has room. Without it a page that left its slot
  // full came back only once empty (docs/slab.md, "Stranded room").
  __device__ __noinline__ std::uint32_t reserve_room(unsigned cls, std::uint32_t want, std::uint32_t start, std::uint32_t scan,
                                                     std::uint32_t& page, std::uint32_t& first) const {
    using namespace slab_math;
    for (int t = 0; t < kMaxRoomTries; ++t) {
      const std::uint32_t p = find_room(L2Chunk{header}, pages, start, scan, cls, want);
      if (p == kNone) return 0;
      const std::uint32_t got = reserve_in(p, cls, want, first);
      if (got != 0) {
        page = p;
        return got;
      }
      start = p + 1 < pages ? p + 1 : 0;  // filled (or emptied and retired) since it was read
    }
    return 0;
  }

  // Where a slot's search for room starts: its hint, moved on by the clock so
  // that its refills one after another do not read the same full pages first.
  __device__ std::uint32_t room_start(unsigned cls, const unsigned long long* slot) const {
    const auto tick = static_cast<std::uint32_t>(clock()) * 0x9E3779B1u;
    return pages == 0 ? 0 : static_cast<std::uint32_t>((hint(cls, slot) + static_cast<std::uint64_t>(tick)) % pages);
  }

  __device__ std::uint32_t hint(unsigned cls, const unsigned long long* slot) const {
    const auto k = static_cast<std::uint32_t>(slot - slots) + cls;
    return pages == 0 ? 0 : static_cast<std::uint32_t>((k * 2654435761ull) % pages);
  }

  // One atomicOr on the first bitmap word from `word` on with a free bit;
  // returns the bits it got and their word (`at`); moves `word` on when full.
  // `blind`: the reservation's first claim, made without reading the word: the
  // page's count hands out places in order, so the bits from `start` on are
  // free unless blocks were freed out of order or a claimer strayed there; a
  // bit already set stays as it was (an atomicOr) and is not counted as got,
  // and the next claim reads the word.
  __device__ std::uint32_t claim(unsigned cls, std::uint32_t page, std::uint32_t left, std::uint32_t& word,
                                 std::uint32_t& start, std::uint32_t& at, bool blind) const {
    using namespace slab_math;
    const std::uint32_t words = class_words(cls);
    std::uint32_t* row = bitmap + static_cast<std::uint64_t>(page) * kBitmapWords;
    for (std::uint32_t k = 0; k < words; ++k) {
      const std::uint32_t valid = word_valid_mask(cls, word);
      std::uint32_t free = blind && k == 0 ? valid & (0xffffffffu << start) : 0u;  // start < 32
      if (free == 0) free = ~load(row + word) & valid;
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
      word = (word + 1) & (words - 1);
      start = 0;
    }
    at = 0;
    return 0;
  }

  // Takes n from a page's count; whoever brings it to 0 retires the page (the
  // count is 0 only when no block is live, no reservation is pending and, in
  // a slot's page, every place was handed out), unless a slot holds it: that
  // page is armed again in its slot (rearm), until the slot moves on (unslot)
  // or another class needs it (steal_empty).
  __device__ void release_count(std::uint32_t page, std::uint32_t n) const {
    using namespace slab_math;
    const std::uint32_t old = atomicSub(header + page, n);
    const std::uint32_t tag = header_tag(old);
    if (tag == kFreeTag || header_count(old) != n) return;
    if (!header_slotted(old)) {
      retire(page, tag);
    } else {
      rearm(page, tag);
    }
  }

  // An empty page (or large run) back to the pool. The CAS loses to a
  // reservation made since the count reached 0, or to a slot that took the
  // page meanwhile: then the page stays.
  __device__ __noinline__ void retire(std::uint32_t page, std::uint32_t tag) const {
    using namespace slab_math;
    if (atomicCAS(header + page, make_header(tag, 0), 0u) != make_header(tag, 0)) return;
    release_pages(page, tag == kLargeTag ? load(run + page) : 1);
    atomicAdd(emptied, 1u);  // a page free again: a search that found no idle slot may find one now
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
  // Counts up to n pages used, as many as are free (0 .. n): a warp asking for
  // several does not make a lone page look taken while it gives its excess back.
  __device__ std::uint32_t grant_pages(std::uint32_t n) const {
    const std::uint32_t old = atomicAdd(used, n);
    const std::uint32_t k = old >= pages ? 0 : (pages - old < n ? pages - old : n);
    if (k < n) atomicSub(used, n - k);
    return k;
  }

  // Claims n contiguous free pages and counts them used; kNone if none.
  __device__ std::uint32_t acquire(std::uint32_t n, std::uint32_t start) const {
    using namespace slab_math;
    if (!count_pages(n)) return kNone;
    const std::uint32_t p = n == 1 ? find_one(start) : find_and_claim_run(n, start);
    if (p == kNone) atomicSub(used, n);
    return p;
  }

  // One free page, by words from `start`'s: a set bit of the first word with
  // one, taken by atomicOr; callers that meet in a word pick different bits.
  __device__ std::uint32_t find_one(std::uint32_t start) const {
    using namespace slab_math;
    const auto words = static_cast<std::uint32_t>(page_words(pages));
    std::uint32_t w = start / 32;
    const unsigned salt = static_cast<unsigned>(clock()) ^ (lane_id() * 7u);
    for (std::uint32_t k = 0; k < 4 * words + 64; ++k) {
      const std::uint32_t free = ~load(page_bits + w) & range_mask(0, pages, w);
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
    __threadfence();  // the bits clear before the count says they are
    atomicSub(used, n);
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
    // The idle pages the slots keep can stand between free ones: give them
    // back one at a time, looking for the run after each.
    for (int t = 0; p == kNone && t < kMaxLargeSteals && steal_empty(start, pages); ++t) p = acquire(n, start);
    if (p == kNone) return nullptr;
    run[p] = n;
    __threadfence();  // the run's length before the header that makes it freeable
    atomicAdd(header + p, make_header(kLargeTag, 1));
    return base + (static_cast<std::uint64_t>(p) << kPageShift);
  }

  // The host side: the arena, and the reset before every round, which keeps
  // the slots' empty pages when no block is live (see Owner::reset).
  struct Owner {
    explicit Owner(const heapbench::Case& c) : layout_(slab_math::layout(c.arena_bytes())) {
      check(cudaMalloc(&arena_, c.arena_bytes()), "cudaMalloc");
      check(cudaMalloc(&live_, sizeof *live_), "cudaMalloc");
      check(cudaMemsetAsync(arena_ + layout_.meta_begin, 0, layout_.meta_bytes), "cudaMemsetAsync");
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
      h.owner = word_at(layout_.owner);
      h.page_bits = word_at(layout_.page_bits);
      h.slots = reinterpret_cast<unsigned long long*>(arena_ + layout_.slots);
      h.used = word_at(layout_.used);
      h.emptied = word_at(layout_.emptied);
      h.missed = word_at(layout_.missed);
      h.pages = static_cast<std::uint32_t>(layout_.pages);
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

// Owner::reset's two kernels (templates: defined in a header that several
// translation units include). Any page with a block or a large run live sets
// *live: a count past the places its slot has not handed out.
template <int>
__global__ void slab_note_live(slab h, std::uint32_t* live) {
  using namespace slab_math;
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= h.pages) return;
  const std::uint32_t hd = h.header[i], tag = header_tag(hd);
  std::uint32_t left = 0;
  if (header_slotted(hd) && tag != kFreeTag && tag <= kClasses) {
    const unsigned long long s = h.slots[h.owner[i]];
    if (slot_armed_page(s) == i) left = slot_left(s, tag - 1);
  }
  if (header_count(hd) != left || tag == kLargeTag) *live = 1;
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
