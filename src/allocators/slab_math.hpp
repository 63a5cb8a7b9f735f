#pragma once
// The slab allocator's arithmetic (src/allocators/slab.cuh): size classes,
// page bitmaps, bit picking, the arena layout and the search for runs of free
// pages. Plain constexpr C++, callable on the host and the device: the device
// code calls these functions and tests/host/slab_test.cpp tests them on the
// host. A .hpp, not a .cuh: CMake takes every *.cuh in src/allocators for an
// adapter.
#include <cstdint>

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
// Pages being filled at once, per class: 256 (64 made the 16 B class refill its
// slots' pages four times a round at 2^20 threads; docs/slab.md).
inline constexpr unsigned kSlotsLog2 = 8;
inline constexpr unsigned kSlotsPerClass = 1u << kSlotsLog2;
inline constexpr unsigned kCountBits = 24;          // a page header: tag << 24 | slotted << 23 | count
inline constexpr std::uint32_t kSlotted = 1u << 23;  // the page is some slot's: it stays in its class when it empties
inline constexpr std::uint32_t kCountMask = kSlotted - 1;
inline constexpr std::uint32_t kFreeTag = 0;        // a page in no class (free, or inside a large run)
inline constexpr std::uint32_t kLargeTag = 0xff;    // the first page of a large run
inline constexpr std::uint32_t kSlotEmpty = 0;      // slots hold page + 1
inline constexpr std::uint32_t kNone = 0xffffffffu;         // no page found

// The slot of the warp with this index in its launch (block-major, as the
// warps are numbered): Fibonacci hashing, whose top bits spread consecutive
// indices (and evenly strided ones, as per_block's one calling warp a block)
// nearly evenly over the slots (the three-gap theorem): 313 consecutive warps
// (10,000 threads) put at most 2 in a slot. The hash of the SM and the warp's
// place in it that it replaces put 3 or 4 in 20-33 slots for 40 blocks of 8
// warps on SMs drawn at random (a model: a launch's SMs are the hardware's pick).
HEAPBENCH_SLAB_HD constexpr unsigned slot_of_warp_index(std::uint64_t warp, unsigned slots_log2 = kSlotsLog2) {
  return static_cast<unsigned>((static_cast<std::uint32_t>(warp) * 0x9E3779B1u) >> (32 - slots_log2));
}

// Slots per class: 256, but in an arena of kManySlotsPages pages (a heap of
// about 517 MiB) or more 1,024 for every class. A slot keeps its page from round to
// round, so where a launch asks a class for more than its slots' pages hold,
// every launch refills slots: 100,000 threads of 512 B are 3,125 warps' worth,
// 781 pages, against 256 kept; per_warp's 3,125 one-lane calls of 8 KiB (32 x
// 256 B), 391 pages; a million threads of 16 B, 256 pages, as many as 256 slots
// keep, so one slot's extra warp refills it. Smaller arenas keep 256 (more slots
// would spread a class over more of their pages).
inline constexpr unsigned kManySlotsLog2 = 10;
inline constexpr std::uint64_t kManySlotsPages = 8192;
HEAPBENCH_SLAB_HD constexpr bool many_slots(std::uint64_t pages) { return pages >= kManySlotsPages; }
// Every class has 2^slots_log2(many) slots.
HEAPBENCH_SLAB_HD constexpr unsigned slots_log2(bool many) { return many ? kManySlotsLog2 : kSlotsLog2; }
// Where class cls's slots begin, in words from the first slot; slot_offset(kClasses, many): all of them.
HEAPBENCH_SLAB_HD constexpr std::uint32_t slot_offset(unsigned cls, bool many) { return cls << slots_log2(many); }

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
// Where group `sub` of a warp's lanes of class cls that fill whole pages
// (slab::take_whole_pages; classes of 2 KiB and up, whose page holds at most 32
// blocks) makes its blind claim, in an arena of `pages`: the group's index in
// its launch (32 / blocks_per_page groups a warp), Fibonacci-hashed over the
// pages. The same warp's group starts at the page it had the round before (given
// back when emptied), and the groups of warps that run at once start on distinct
// pages until they are about half as many as the pages. A hash of the warp's slot
// named one page for every warp of the slot: at 100,000 threads about three warps
// share each of 1,024 slots, and all but the first paid a failed atomicOr, a
// count and a search. cls must be a class of 2 KiB or more (the shift below
// is the log of the groups a warp: 0 for 2 KiB).
HEAPBENCH_SLAB_HD constexpr std::uint32_t whole_page_start(std::uint64_t warp, unsigned cls, unsigned sub, std::uint64_t pages) {
  const auto group = static_cast<std::uint32_t>((warp << (class_shift(cls) - (kPageShift - 5))) + sub);
  const std::uint32_t h = group * 0x9E3779B9u + cls * 0x7F4A7C15u;
  return static_cast<std::uint32_t>((static_cast<std::uint64_t>(h) * pages) >> 32);
}
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
HEAPBENCH_SLAB_HD constexpr bool header_slotted(std::uint32_t h) { return (h & kSlotted) != 0; }
// A page of a class with no block and no reservation in it (in a slot or not):
// one another class may take when no page is free.
HEAPBENCH_SLAB_HD constexpr bool empty_class_page(std::uint32_t h) {
  return header_tag(h) != kFreeTag && header_tag(h) != kLargeTag && header_count(h) == 0;
}

HEAPBENCH_SLAB_HD constexpr unsigned popcount(std::uint32_t m) {
#ifdef __CUDA_ARCH__
  return static_cast<unsigned>(__popc(m));
#else
  unsigned n = 0;
  for (; m != 0; m &= m - 1) ++n;
  return n;
#endif
}
// m's lowest set bit, as a mask (0 for 0).
HEAPBENCH_SLAB_HD constexpr std::uint32_t lowest_bit(std::uint32_t m) { return m & (~m + 1); }
// The index of m's lowest set bit; m is not 0.
HEAPBENCH_SLAB_HD constexpr unsigned lowest_index(std::uint32_t m) {
#ifdef __CUDA_ARCH__
  return static_cast<unsigned>(__ffs(static_cast<int>(m)) - 1);
#else
  unsigned i = 0;
  while (((m >> i) & 1u) == 0) ++i;
  return i;
#endif
}
// Whether m's set bits are one run (or none): what a blind claim's free bits,
// and the bits it gets, usually are.
HEAPBENCH_SLAB_HD constexpr bool one_run(std::uint32_t m) { return ((m + lowest_bit(m)) & m) == 0; }
// The n lowest set bits of m (all of them if it has fewer). On the device, one
// instruction finds the n-th set bit (the loops below would run once a bit).
HEAPBENCH_SLAB_HD constexpr std::uint32_t lowest_bits(std::uint32_t m, unsigned n) {
  if (n >= 32) return m;
  // One run: its lowest n bits, without __fns.
  if (one_run(m)) return m & (lowest_bit(m) * ((1u << n) - 1));
#ifdef __CUDA_ARCH__
  const unsigned at = __fns(m, 0, static_cast<int>(n) + 1);  // 0xffffffff: m has n or fewer
  return at >= 32 ? m : m & ((1u << at) - 1);
#else
  std::uint32_t out = 0;
  for (; m != 0 && n != 0; --n) {
    out |= lowest_bit(m);
    m &= m - 1;
  }
  return out;
#endif
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
#ifdef __CUDA_ARCH__
  if (n >= 32) return 32;
  const unsigned at = __fns(m, 0, static_cast<int>(n) + 1);
  return at >= 32 ? 32 : at;
#else
  for (; n != 0 && m != 0; --n) m &= m - 1;
  return m == 0 ? 32 : lowest_index(m);
#endif
}
// nth_set_bit, cheaper where m is one run of set bits (a blind claim's usual
// answer): its lowest bit plus n.
HEAPBENCH_SLAB_HD constexpr unsigned nth_of_run(std::uint32_t m, unsigned n) {
  if (m == 0) return 32;
  if (one_run(m) && n < popcount(m)) return lowest_index(m) + n;
  return nth_set_bit(m, n);
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

// Bytes kept for the copy of slab's device handle after the metadata (slab.cuh
// asserts that the handle fits).
inline constexpr std::uint64_t kHandleBytes = 128;
// Where everything lives in an arena of `heap` bytes: `pages` pages from its
// start, then the metadata, then the handle's copy, all byte offsets from the
// arena's start.
struct Layout {
  std::uint64_t pages = 0;
  std::uint64_t bitmap = 0;     // pages x kBitmapWords words: a set bit is a block in use
  std::uint64_t header = 0;     // pages words: tag << 24 | blocks reserved
  std::uint64_t run = 0;        // pages words: the length of the large run that starts there
  std::uint64_t page_bits = 0;  // page_words(pages) words: a set bit is a page in use
  std::uint64_t slots = 0;      // slot_offset(kClasses, many_slots(pages)) words: the page each slot fills
  std::uint64_t used = 0;       // one word: pages in use
  std::uint64_t emptied = 0;    // one word: how many times a slot's page has emptied (steal_empty's clock)
  std::uint64_t missed = 0;     // one word: emptied + 1 as it was when a search of every page found none empty
  std::uint64_t meta_begin = 0, meta_bytes = 0;  // what a reset clears: everything above
  std::uint64_t handle = 0;  // kHandleBytes: a copy of the device handle, which its calls that are not inlined read
  std::uint64_t end = 0;     // the arena's bytes in use, handle included
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
  l.used = l.slots + static_cast<std::uint64_t>(slot_offset(kClasses, many_slots(pages))) * 4;
  l.emptied = l.used + 4;
  l.missed = l.emptied + 4;
  const std::uint64_t end = (l.missed + 4 + 15) / 16 * 16;
  l.meta_bytes = end - l.meta_begin;
  l.handle = end;
  l.end = l.handle + kHandleBytes;
  return l;
}
// The arena's bytes the layout takes from its start, pages, metadata and the
// handle's copy: what a heap must hold (layout's test, and slab::Owner's
// refusal of a smaller arena).
HEAPBENCH_SLAB_HD constexpr std::uint64_t bytes_taken(const Layout& l) { return l.end; }
// The most pages that fit in `heap` bytes with their metadata (page indices fit in 31 bits).
HEAPBENCH_SLAB_HD constexpr Layout layout(std::uint64_t heap) {
  const std::uint64_t per_page = kPageBytes + kBitmapWords * 4 + 8;
  std::uint64_t pages = heap / per_page;
  if (pages > (1ull << 31)) pages = 1ull << 31;
  while (pages > 0) {
    const Layout l = layout_for_pages(pages);
    if (bytes_taken(l) <= heap) return l;
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

// Reads the headers of `pages` pages by chunks of kRoomChunk from the chunk that
// holds `start` (wrapping), at most `scan` of them (whole chunks, every page at
// most once): load(first, h) fills h with headers first ... first + 15 (first a
// multiple of kRoomChunk), and visit(first, h, n) sees the chunk's n headers
// that are pages (those at or past `pages` are not) and returns true to stop.
// Whether a visit stopped it. find_room's search and slab.cuh's search for empty
// pages.
template <class Load, class Visit>
HEAPBENCH_SLAB_HD constexpr bool scan_headers(Load load, std::uint32_t pages, std::uint32_t start, std::uint32_t scan,
                                              Visit visit) {
  if (pages == 0) return false;
  const std::uint32_t chunks = (pages + kRoomChunk - 1) / kRoomChunk;
  std::uint32_t reads = (scan + kRoomChunk - 1) / kRoomChunk;
  if (reads > chunks) reads = chunks;
  std::uint32_t k = (start % pages) / kRoomChunk;
  for (std::uint32_t i = 0; i < reads; ++i) {
    std::uint32_t h[kRoomChunk] = {};
    load(k * kRoomChunk, h);
    const std::uint32_t first = k * kRoomChunk;
    if (visit(first, h, pages - first < kRoomChunk ? pages - first : kRoomChunk)) return true;
    k = k + 1 < chunks ? k + 1 : 0;
  }
  return false;
}
// Whether scan_headers with `scan` reads every one of `pages` headers.
HEAPBENCH_SLAB_HD constexpr bool scan_covers(std::uint32_t pages, std::uint32_t scan) {
  return (pages + kRoomChunk - 1) / kRoomChunk <= (scan + kRoomChunk - 1) / kRoomChunk;
}

// A page of class c with room, for when no page is free: from `start`, at most
// `scan` headers read (scan_headers); the roomiest page of the first chunk
// that has one with room for `want` blocks, else the roomiest page read, else
// kNone.
template <class Load>
HEAPBENCH_SLAB_HD constexpr std::uint32_t find_room(Load load, std::uint32_t pages, std::uint32_t start, std::uint32_t scan,
                                                    unsigned c, std::uint32_t want) {
  std::uint32_t best = kNone, best_room = 0;
  scan_headers(load, pages, start, scan, [&](std::uint32_t first, const std::uint32_t* h, std::uint32_t n) {
    for (std::uint32_t j = 0; j < n; ++j) {
      const std::uint32_t r = room_in(h[j], c);
      if (r > best_room) {
        best = first + j;
        best_room = r;
      }
    }
    return best_room >= want;
  });
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
