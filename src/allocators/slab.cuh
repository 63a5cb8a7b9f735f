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
// constexpr C++ above the `#ifdef __CUDACC__`, tested on the host by
// tests/host/slab_test.cpp.
#include <cstdint>

#include "heapbench/api_traits.hpp"

namespace heapbench_user {

inline constexpr heapbench::ApiTraits slab_traits{
    "slab",                        // the name in case names, JSON and plots
    heapbench::Source::own_arena,  // a cudaMalloc arena as large as the case's heap
    false,                         // 16-byte alignment only; the align argument is ignored
};

}  // namespace heapbench_user

#if defined(__CUDACC__)
#define HEAPBENCH_SLAB_HD __host__ __device__
#else
#define HEAPBENCH_SLAB_HD
#endif

namespace heapbench_user::slab_math {

inline constexpr std::uint64_t kPageBytes = 64 * 1024;
inline constexpr unsigned kPageShift = 16;
inline constexpr unsigned kMinShift = 4;            // the smallest class: 16 B
inline constexpr std::uint64_t kMinBlock = 1u << kMinShift;
inline constexpr unsigned kClasses = 13;            // 16 B, 32 B, ..., 64 KiB
inline constexpr unsigned kLarge = kClasses;        // class_of's answer past the largest class
inline constexpr unsigned kBitmapWords = 128;       // per page: 4096 bits, one per 16 B block
inline constexpr unsigned kSlotsPerClass = 64;      // pages being filled at once, per class
inline constexpr unsigned kCountBits = 24;          // a page header: tag << 24 | count
inline constexpr std::uint32_t kCountMask = (1u << kCountBits) - 1;
inline constexpr std::uint32_t kFreeTag = 0;        // a page in no class (free, or inside a large run)
inline constexpr std::uint32_t kLargeTag = 0xff;    // the first page of a large run
inline constexpr std::uint32_t kSlotEmpty = 0;      // slots hold page + 1
inline constexpr std::uint32_t kSlotLocked = 0xffffffffu;  // a warp is fetching the slot a new page
inline constexpr std::uint32_t kNone = 0xffffffffu;         // no page found

HEAPBENCH_SLAB_HD constexpr unsigned bit_width(std::uint64_t x) {
  unsigned n = 0;
  for (; x != 0; x >>= 1) ++n;
  return n;
}

// The class of a request: 0 for up to 16 B, c for up to 16 << c, kLarge past 64 KiB.
HEAPBENCH_SLAB_HD constexpr unsigned class_of(std::uint64_t size) {
  if (size > kPageBytes) return kLarge;
  if (size <= kMinBlock) return 0;
  return bit_width(size - 1) - kMinShift;
}
HEAPBENCH_SLAB_HD constexpr unsigned class_shift(unsigned c) { return kMinShift + c; }
HEAPBENCH_SLAB_HD constexpr std::uint64_t class_bytes(unsigned c) { return kMinBlock << c; }
HEAPBENCH_SLAB_HD constexpr std::uint32_t blocks_per_page(unsigned c) {
  return static_cast<std::uint32_t>(kPageBytes >> class_shift(c));
}
HEAPBENCH_SLAB_HD constexpr std::uint32_t class_words(unsigned c) { return (blocks_per_page(c) + 31) / 32; }
// The bits of bitmap word w that stand for blocks of a class-c page.
HEAPBENCH_SLAB_HD constexpr std::uint32_t word_valid_mask(unsigned c, std::uint32_t w) {
  const std::uint32_t blocks = blocks_per_page(c);
  if (blocks >= 32 * (w + 1)) return 0xffffffffu;
  if (blocks <= 32 * w) return 0;
  return (1u << (blocks - 32 * w)) - 1;
}
// Pages a large request takes.
HEAPBENCH_SLAB_HD constexpr std::uint64_t pages_for(std::uint64_t size) { return (size + kPageBytes - 1) / kPageBytes; }

HEAPBENCH_SLAB_HD constexpr std::uint32_t tag_of_class(unsigned c) { return c + 1; }
HEAPBENCH_SLAB_HD constexpr std::uint32_t make_header(std::uint32_t tag, std::uint32_t count) {
  return tag << kCountBits | count;
}
HEAPBENCH_SLAB_HD constexpr std::uint32_t header_tag(std::uint32_t h) { return h >> kCountBits; }
HEAPBENCH_SLAB_HD constexpr std::uint32_t header_count(std::uint32_t h) { return h & kCountMask; }

HEAPBENCH_SLAB_HD constexpr unsigned popcount(std::uint32_t m) {
  unsigned n = 0;
  for (; m != 0; m &= m - 1) ++n;
  return n;
}
// The n lowest set bits of m (all of them if it has fewer).
HEAPBENCH_SLAB_HD constexpr std::uint32_t lowest_bits(std::uint32_t m, unsigned n) {
  if (n >= 32) return m;
  std::uint32_t out = 0;
  for (; m != 0 && n != 0; --n) {
    const std::uint32_t low = m & (~m + 1);
    out |= low;
    m &= m - 1;
  }
  return out;
}
// Up to `need` of the bits set in `free`, those at or above `start` first:
// concurrent claimers that start at their own reservation's place in the page
// seldom want the same bits.
HEAPBENCH_SLAB_HD constexpr std::uint32_t pick_bits(std::uint32_t free, unsigned need, unsigned start) {
  if (need >= 32 || need >= popcount(free)) return free;
  const std::uint32_t high = start >= 32 ? 0 : free & (0xffffffffu << start);
  std::uint32_t got = lowest_bits(high, need);
  const unsigned n = popcount(got);
  if (n < need) got |= lowest_bits(free & ~high, need - n);
  return got;
}
// The index of the n-th (from 0) set bit of m; 32 if m has n or fewer.
HEAPBENCH_SLAB_HD constexpr unsigned nth_set_bit(std::uint32_t m, unsigned n) {
  for (; n != 0 && m != 0; --n) m &= m - 1;
  if (m == 0) return 32;
  unsigned i = 0;
  while (((m >> i) & 1u) == 0) ++i;
  return i;
}
// The bits of page-bitmap word w that the run [first, first + n) covers.
HEAPBENCH_SLAB_HD constexpr std::uint32_t range_mask(std::uint32_t first, std::uint32_t n, std::uint32_t w) {
  const std::uint64_t lo = first, hi = static_cast<std::uint64_t>(first) + n;  // [lo, hi)
  const std::uint64_t wlo = 32ull * w, whi = wlo + 32;
  const std::uint64_t a = lo > wlo ? lo : wlo, b = hi < whi ? hi : whi;
  if (a >= b) return 0;
  const unsigned width = static_cast<unsigned>(b - a), shift = static_cast<unsigned>(a - wlo);
  return (width == 32 ? 0xffffffffu : ((1u << width) - 1)) << shift;
}

// Where everything lives in an arena of `heap` bytes: `pages` pages from its
// start, then the metadata, all byte offsets from the arena's start.
struct Layout {
  std::uint64_t pages = 0;
  std::uint64_t bitmap = 0;     // pages x kBitmapWords words: a set bit is a block in use
  std::uint64_t header = 0;     // pages words: tag << 24 | blocks reserved
  std::uint64_t run = 0;        // pages words: the length of the large run that starts there
  std::uint64_t page_bits = 0;  // page_words(pages) words: a set bit is a page in use
  std::uint64_t slots = 0;      // kClasses x kSlotsPerClass words: the page each slot fills
  std::uint64_t used = 0;       // one word: pages in use
  std::uint64_t meta_begin = 0, meta_bytes = 0;
};
HEAPBENCH_SLAB_HD constexpr std::uint64_t page_words(std::uint64_t pages) { return (pages + 31) / 32; }
HEAPBENCH_SLAB_HD constexpr Layout layout_for_pages(std::uint64_t pages) {
  Layout l;
  l.pages = pages;
  l.meta_begin = pages * kPageBytes;
  l.bitmap = l.meta_begin;
  l.header = l.bitmap + pages * kBitmapWords * 4;
  l.run = l.header + pages * 4;
  l.page_bits = l.run + pages * 4;
  l.slots = l.page_bits + page_words(pages) * 4;
  l.used = l.slots + kClasses * kSlotsPerClass * 4;
  const std::uint64_t end = (l.used + 4 + 15) / 16 * 16;
  l.meta_bytes = end - l.meta_begin;
  return l;
}
// The most pages that fit in `heap` bytes with their metadata (page indices fit in 31 bits).
HEAPBENCH_SLAB_HD constexpr Layout layout(std::uint64_t heap) {
  const std::uint64_t per_page = kPageBytes + kBitmapWords * 4 + 8;
  std::uint64_t pages = heap / per_page;
  if (pages > (1ull << 31)) pages = 1ull << 31;
  while (pages > 0) {
    const Layout l = layout_for_pages(pages);
    if (l.meta_begin + l.meta_bytes <= heap) return l;
    --pages;
  }
  return layout_for_pages(0);
}

// Room for more blocks in a page of class c whose header is h: 0 for a page of
// another class, free, the head of a large run, or full.
HEAPBENCH_SLAB_HD constexpr std::uint32_t room_in(std::uint32_t h, unsigned c) {
  if (header_tag(h) != tag_of_class(c)) return 0;
  const std::uint32_t n = header_count(h), cap = blocks_per_page(c);
  return n < cap ? cap - n : 0;
}

// Headers read at once by find_room: 64 bytes, four 16-byte loads (the header
// array starts 16-byte aligned: layout_for_pages puts it after 512 B per page).
inline constexpr std::uint32_t kRoomChunk = 16;

// A page of class c with room, for when no page is free: the headers of `pages`
// pages are read by chunks of kRoomChunk from the chunk that holds `start`
// (wrapping), at most `scan` of them; the roomiest page of the first chunk
// that has one with room for `want` blocks, else the roomiest page read, else
// kNone. load(first, h) fills h with headers first ... first + 15 (first is a
// multiple of kRoomChunk; those at or past `pages` are ignored).
template <class Load>
HEAPBENCH_SLAB_HD constexpr std::uint32_t find_room(Load load, std::uint32_t pages, std::uint32_t start, std::uint32_t scan,
                                                    unsigned c, std::uint32_t want) {
  if (pages == 0) return kNone;
  const std::uint32_t chunks = (pages + kRoomChunk - 1) / kRoomChunk;
  std::uint32_t reads = (scan + kRoomChunk - 1) / kRoomChunk;
  if (reads > chunks) reads = chunks;
  std::uint32_t k = (start % pages) / kRoomChunk, best = kNone, best_room = 0;
  for (std::uint32_t i = 0; i < reads; ++i) {
    std::uint32_t h[kRoomChunk] = {};
    load(k * kRoomChunk, h);
    for (std::uint32_t j = 0; j < kRoomChunk && k * kRoomChunk + j < pages; ++j) {
      const std::uint32_t r = room_in(h[j], c);
      if (r > best_room) {
        best = k * kRoomChunk + j;
        best_room = r;
      }
    }
    if (best_room >= want) return best;
    k = k + 1 < chunks ? k + 1 : 0;
  }
  return best;
}

// The first page of a run of n clear bits in [from, to) of a page bitmap that
// load(word) reads, or kNone. Whole words in use or free are stepped over at once.
template <class Load>
HEAPBENCH_SLAB_HD constexpr std::uint32_t find_run_in(Load load, std::uint32_t from, std::uint32_t to, std::uint32_t n) {
  std::uint32_t run = 0;
  for (std::uint32_t p = from; p < to;) {
    const std::uint32_t w = load(p >> 5);
    const unsigned b = p & 31;
    if (b == 0 && to - p >= 32 && w == 0) {
      run += 32;
      p += 32;
      if (run >= n) return p - run;
      continue;
    }
    if (b == 0 && w == 0xffffffffu) {
      run = 0;
      p += 32;
      continue;
    }
    if ((w >> b) & 1u) {
      run = 0;
    } else if (++run >= n) {
      return p + 1 - run;
    }
    ++p;
  }
  return kNone;
}
// The same over the whole bitmap of `pages` pages, from `start` on and then from 0.
template <class Load>
HEAPBENCH_SLAB_HD constexpr std::uint32_t find_run(Load load, std::uint32_t pages, std::uint32_t start, std::uint32_t n) {
  if (n == 0 || n > pages) return kNone;
  if (start >= pages) start = 0;
  const std::uint32_t r = find_run_in(load, start, pages, n);
  if (r != kNone) return r;
  const std::uint32_t to = start + n - 1 < pages ? start + n - 1 : pages;
  return find_run_in(load, 0, to, n);
}

}  // namespace heapbench_user::slab_math

#ifdef __CUDACC__
#include <cstddef>
#include <string>

#include "heapbench/case.hpp"
#include "heapbench/device.hpp"  // heapbench::CudaError

namespace heapbench_user {

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
  std::uint32_t pages = 0;

  // Bounds on every loop: never spin forever (docs/allocators.md).
  static constexpr int kMaxRounds = 40;       // reservations per call; a 64 KiB class page holds one block
  static constexpr int kMaxClaims = 64;       // bitmap atomics per reservation
  static constexpr int kMaxReserveTries = 8;
  static constexpr int kMaxLockWaits = 2000;  // x 256 ns: a slot locked longer gets a page of its own
  static constexpr int kMaxRunTries = 8;
  // Once no page is free: headers read for a page of the class with room, and
  // pages tried (a reservation can lose the room found to another warp).
  static constexpr std::uint32_t kRoomScan = 1024;
  static constexpr int kMaxRoomTries = 4;

  __device__ void* allocate(std::size_t size, std::size_t) const {
    using namespace slab_math;
    const unsigned cls = class_of(size);
    if (cls == kLarge) return allocate_large(size);
    const unsigned active = __activemask();
    const unsigned group = __match_any_sync(active, cls);
    const unsigned lane = lane_id();
    const unsigned leader = __ffs(group) - 1;
    const unsigned below = (1u << lane) - 1;
    std::uint32_t* slot = slots + cls * kSlotsPerClass + slot_of_warp();
    const unsigned shift = class_shift(cls);
    void* result = nullptr;
    unsigned need = group;  // the lanes still without a block
    for (int round = 0; round < kMaxRounds && need != 0; ++round) {
      std::uint32_t page = 0, first = 0, reserved = 0;
      if (lane == leader) reserved = reserve(cls, slot, __popc(need), page, first);
      reserved = __shfl_sync(group, reserved, leader);
      if (reserved == 0) break;  // the arena is full: NULL for the lanes left
      page = __shfl_sync(group, page, leader);
      // The leader claims `reserved` bits (the reservation guarantees they
      // exist), one atomicOr per word; each claim serves the next lanes in order.
      std::uint32_t left = reserved, word = (first / 32) % class_words(cls), start = first % 32;
      for (int t = 0; t < kMaxClaims && left != 0; ++t) {
        std::uint32_t got = 0, at = 0;
        if (lane == leader) got = claim(cls, page, left, word, start, at);
        got = __shfl_sync(group, got, leader);
        at = __shfl_sync(group, at, leader);
        const unsigned n = __popc(got);
        const bool mine = (need >> lane) & 1u;
        const unsigned rank = __popc(need & below);
        if (mine && rank < n) {
          const std::uint64_t block = at * 32ull + nth_set_bit(got, rank);
          result = base + (static_cast<std::uint64_t>(page) << kPageShift) + (block << shift);
        }
        need &= ~__ballot_sync(group, mine && rank < n);
        left -= n;
      }
      if (left != 0 && lane == leader) release_count(page, left);
    }
    return result;
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
  // The slot a warp fills, one of kSlotsPerClass: warps of every SM spread over all of them.
  __device__ static unsigned slot_of_warp() {
    unsigned sm, warp;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    asm volatile("mov.u32 %0, %%warpid;" : "=r"(warp));
    return ((sm * 64u + warp) * 0x9E3779B1u) >> 26;  // top 6 bits: 0 .. 63
  }
  static_assert(slab_math::kSlotsPerClass == 64, "slot_of_warp takes the top 6 bits of a hash");

  // Metadata is read from L2 (other SMs change it with atomics; L1 is not coherent).
  __device__ static std::uint32_t load(const std::uint32_t* p) { return __ldcg(p); }
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

  struct L2Chunk {  // find_room's reader of the page headers: four 16-byte loads
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

  // Reserves up to `want` blocks (at most a page's) in the slot's page, or in
  // a new page when it is full or gone; returns how many (0: no page left).
  // `first` is the page's count before the reservation: where free bits likely are.
  // When no page is free, the new page is one of the class that has room
  // (reserve_room): blocks freed from pages that left their slots full.
  __device__ std::uint32_t reserve(unsigned cls, std::uint32_t* slot, std::uint32_t want, std::uint32_t& page,
                                   std::uint32_t& first) const {
    using namespace slab_math;
    const std::uint32_t tag = tag_of_class(cls), cap = blocks_per_page(cls);
    // A request that fills a page (all of a 64 KiB page, or 16 lanes of 4 KiB)
    // takes one of its own: queueing for the slot would only serialise it.
    const bool whole_page = want >= cap;
    if (want > cap) want = cap;
    for (int i = 0; i < kMaxReserveTries && !whole_page; ++i) {
      std::uint32_t s = load(slot);
      if (s == kSlotLocked) s = wait_unlocked(slot);
      if (s == kSlotLocked) break;  // the slot's refill took too long
      if (s != kSlotEmpty) {
        page = s - 1;
        // Reserve first, look afterwards: one atomicAdd per warp. A page of
        // another class (or free) or full is given back what was added.
        const std::uint32_t old = atomicAdd(header + page, want);
        if (header_tag(old) == tag && header_count(old) < cap) {
          const std::uint32_t got = cap - header_count(old) < want ? cap - header_count(old) : want;
          if (got < want) atomicSub(header + page, want - got);
          first = header_count(old);
          return got;
        }
        release_count(page, want);
      }
      if (atomicCAS(slot, s, kSlotLocked) == s) {
        std::uint32_t got = want;
        page = acquire(1, hint(cls, slot));
        if (page != kNone) {
          atomicAdd(header + page, make_header(tag, want));  // an add: keeps what stale reservers added meanwhile
          first = 0;
        } else {
          got = reserve_room(cls, want, room_start(cls, slot), page, first);
          if (got == 0) {
            atomicExch(slot, s);
            return 0;
          }
        }
        __threadfence();
        atomicExch(slot, page + 1);
        return got;
      }
    }
    // A page of this warp's own, in no slot: for a request that fills it, or
    // after losing every race for the slot (NULL only when no page is free).
    page = acquire(1, hint(cls, slot));
    if (page == kNone) return reserve_room(cls, want, room_start(cls, slot), page, first);
    atomicAdd(header + page, make_header(tag, want));
    first = 0;
    return want;
  }

  // With no page free: up to `want` blocks in a page of class cls that has
  // room, found by find_room from `start` (the roomiest of the first 16
  // headers that include one with room for all, else the roomiest of
  // kRoomScan headers), reserved as in a
  // slot's page; 0 when none has room. Without it a page that left its slot
  // full came back only once empty (docs/slab.md, "Stranded room").
  __device__ std::uint32_t reserve_room(unsigned cls, std::uint32_t want, std::uint32_t start, std::uint32_t& page,
                                        std::uint32_t& first) const {
    using namespace slab_math;
    const std::uint32_t tag = tag_of_class(cls), cap = blocks_per_page(cls);
    for (int t = 0; t < kMaxRoomTries; ++t) {
      const std::uint32_t p = find_room(L2Chunk{header}, pages, start, kRoomScan, cls, want);
      if (p == kNone) return 0;
      const std::uint32_t old = atomicAdd(header + p, want);
      if (header_tag(old) == tag && header_count(old) < cap) {
        const std::uint32_t got = cap - header_count(old) < want ? cap - header_count(old) : want;
        if (got < want) atomicSub(header + p, want - got);
        page = p;
        first = header_count(old);
        return got;
      }
      release_count(p, want);  // filled (or emptied and retired) since it was read
      start = p + 1 < pages ? p + 1 : 0;
    }
    return 0;
  }

  // Where a slot's search for room starts: its hint, moved on by the clock so
  // that its refills one after another do not read the same full pages first.
  __device__ std::uint32_t room_start(unsigned cls, const std::uint32_t* slot) const {
    const auto tick = static_cast<std::uint32_t>(clock()) * 0x9E3779B1u;
    return pages == 0 ? 0 : static_cast<std::uint32_t>((hint(cls, slot) + static_cast<std::uint64_t>(tick)) % pages);
  }

  __device__ static std::uint32_t wait_unlocked(const std::uint32_t* slot) {
    std::uint32_t s = slab_math::kSlotLocked;
    for (int i = 0; i < kMaxLockWaits && s == slab_math::kSlotLocked; ++i) {
      __nanosleep(256);
      s = load(slot);
    }
    return s;
  }

  __device__ std::uint32_t hint(unsigned cls, const std::uint32_t* slot) const {
    const auto k = static_cast<std::uint32_t>(slot - slots) + cls;
    return pages == 0 ? 0 : static_cast<std::uint32_t>((k * 2654435761ull) % pages);
  }

  // One atomicOr on the first bitmap word from `word` on with a free bit;
  // returns the bits it got and their word (`at`); moves `word` on when full.
  __device__ std::uint32_t claim(unsigned cls, std::uint32_t page, std::uint32_t left, std::uint32_t& word,
                                 std::uint32_t& start, std::uint32_t& at) const {
    using namespace slab_math;
    const std::uint32_t words = class_words(cls);
    std::uint32_t* row = bitmap + static_cast<std::uint64_t>(page) * kBitmapWords;
    for (std::uint32_t k = 0; k < words; ++k) {
      const std::uint32_t valid = word_valid_mask(cls, word);
      const std::uint32_t free = ~load(row + word) & valid;
      if (free != 0) {
        const std::uint32_t want = pick_bits(free, left, start);
        const std::uint32_t old = atomicOr(row + word, want);
        at = word;
        if ((~(old | want) & valid) == 0) {
          word = (word + 1) % words;
          start = 0;
        }
        return want & ~old;
      }
      word = (word + 1) % words;
      start = 0;
    }
    at = 0;
    return 0;
  }

  // Takes n from a page's count; whoever brings it to 0 retires the page (the
  // count is 0 only when no block is live and no reservation is pending).
  __device__ void release_count(std::uint32_t page, std::uint32_t n) const {
    using namespace slab_math;
    const std::uint32_t old = atomicSub(header + page, n);
    const std::uint32_t tag = header_tag(old);
    if (tag != kFreeTag && header_count(old) == n) retire(page, tag);
  }

  // An empty page (or large run) back to the pool. The CAS loses to a
  // reservation made since the count reached 0: then the page stays.
  __device__ void retire(std::uint32_t page, std::uint32_t tag) const {
    using namespace slab_math;
    if (atomicCAS(header + page, make_header(tag, 0), 0u) != make_header(tag, 0)) return;
    release_pages(page, tag == kLargeTag ? load(run + page) : 1);
  }

  // Claims n contiguous free pages and counts them used; kNone if none.
  __device__ std::uint32_t acquire(std::uint32_t n, std::uint32_t start) const {
    using namespace slab_math;
    if (n == 0 || n > pages) return kNone;
    // The count first: past it, a free page exists, so a search for one page
    // ends soon (each lost race is another caller's page).
    if (atomicAdd(used, n) + n > pages) {
      atomicSub(used, n);
      return kNone;
    }
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
  __device__ void* allocate_large(std::size_t size) const {
    using namespace slab_math;
    if (size > (static_cast<std::uint64_t>(pages) << kPageShift)) return nullptr;
    const auto n = static_cast<std::uint32_t>(pages_for(size));
    const std::uint64_t me = (static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * 2654435761ull;
    const std::uint32_t p = acquire(n, pages == 0 ? 0 : static_cast<std::uint32_t>(me % pages));
    if (p == kNone) return nullptr;
    run[p] = n;
    __threadfence();  // the run's length before the header that makes it freeable
    atomicAdd(header + p, make_header(kLargeTag, 1));
    return base + (static_cast<std::uint64_t>(p) << kPageShift);
  }

  // The host side: the arena, reset to empty (metadata only) before every round.
  struct Owner {
    explicit Owner(const heapbench::Case& c) : layout_(slab_math::layout(c.arena_bytes())) {
      check(cudaMalloc(&arena_, c.arena_bytes()), "cudaMalloc");
      reset();
    }
    ~Owner() {
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
      h.pages = static_cast<std::uint32_t>(layout_.pages);
      return h;
    }
    // Every page free, every bitmap clear, every slot empty: a memset of the
    // metadata (0.8 % of the arena), not of the pages.
    void reset() {
      check(cudaMemsetAsync(arena_ + layout_.meta_begin, 0, layout_.meta_bytes), "cudaMemsetAsync");
    }
    const slab_math::Layout& layout() const { return layout_; }

   private:
    std::uint32_t* word_at(std::uint64_t offset) const { return reinterpret_cast<std::uint32_t*>(arena_ + offset); }
    static void check(cudaError_t e, const char* call) {
      if (e != cudaSuccess) throw heapbench::CudaError(std::string("slab: ") + call + ": " + cudaGetErrorString(e));
    }
    slab_math::Layout layout_;
    unsigned char* arena_ = nullptr;
  };
};

}  // namespace heapbench_user
#endif
