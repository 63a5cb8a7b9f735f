// The slab allocator's arithmetic (src/allocators/slab_math.hpp), on the host: size
// classes, page bitmaps, bit picking, the arena layout and the search for runs
// of free pages. The device code calls these same functions.
#include "../../src/allocators/slab_math.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace heapbench_user::slab_math {
namespace {

TEST(SlabClasses, EverySizeGetsTheSmallestPowerOfTwoThatHoldsIt) {
  EXPECT_EQ(class_of(0), 0u);
  EXPECT_EQ(class_of(1), 0u);
  EXPECT_EQ(class_of(16), 0u);
  EXPECT_EQ(class_of(17), 1u);
  EXPECT_EQ(class_of(32), 1u);
  EXPECT_EQ(class_of(33), 2u);
  EXPECT_EQ(class_of(64), 2u);
  EXPECT_EQ(class_of(100), 3u);
  EXPECT_EQ(class_of(4096), 8u);
  EXPECT_EQ(class_of(65535), 12u);
  EXPECT_EQ(class_of(65536), 12u);
  EXPECT_EQ(class_of(65537), kLarge);
  EXPECT_EQ(class_of(~0ull), kLarge);
  for (std::uint64_t size = 1; size <= kPageBytes; ++size) {
    const unsigned c = class_of(size);
    ASSERT_LT(c, kClasses) << size;
    ASSERT_GE(class_bytes(c), size) << size;
    if (c > 0) {
      ASSERT_LT(class_bytes(c - 1), size) << size;
    }
  }
}

TEST(SlabClasses, PagesHoldWholeBlocksAndTheBitmapCoversThem) {
  EXPECT_EQ(class_bytes(0), 16u);
  EXPECT_EQ(class_bytes(kClasses - 1), kPageBytes);
  EXPECT_EQ(blocks_per_page(0), 4096u);
  EXPECT_EQ(blocks_per_page(2), 1024u);
  EXPECT_EQ(blocks_per_page(kClasses - 1), 1u);
  for (unsigned c = 0; c < kClasses; ++c) {
    EXPECT_EQ(blocks_per_page(c) * class_bytes(c), kPageBytes) << c;
    EXPECT_LE(class_words(c), kBitmapWords) << c;
    unsigned bits = 0;
    for (std::uint32_t w = 0; w < kBitmapWords; ++w) bits += popcount(word_valid_mask(c, w));
    EXPECT_EQ(bits, blocks_per_page(c)) << c;
    // Only the first class_words(c) words carry blocks.
    for (std::uint32_t w = class_words(c); w < kBitmapWords; ++w) EXPECT_EQ(word_valid_mask(c, w), 0u) << c;
  }
  EXPECT_EQ(word_valid_mask(8, 0), 0xffffu);  // 4 KiB: 16 blocks
  EXPECT_EQ(word_valid_mask(12, 0), 1u);      // 64 KiB: 1 block
  EXPECT_EQ(word_valid_mask(7, 0), 0xffffffffu);
}

TEST(SlabClasses, LargeRequestsTakeWholePages) {
  EXPECT_EQ(pages_for(65537), 2u);
  EXPECT_EQ(pages_for(131072), 2u);
  EXPECT_EQ(pages_for(1u << 20), 16u);
  EXPECT_EQ(pages_for(16 * 1024 * 1024 + 1), 257u);
}

TEST(SlabHeader, TagAndCountRoundTrip) {
  const std::uint32_t h = make_header(tag_of_class(5), 1234);
  EXPECT_EQ(header_tag(h), 6u);
  EXPECT_EQ(header_count(h), 1234u);
  EXPECT_EQ(header_tag(make_header(kLargeTag, 1)), kLargeTag);
  EXPECT_NE(tag_of_class(0), kFreeTag);
  EXPECT_LT(tag_of_class(kClasses - 1), kLargeTag);
  // Counts (reservations, even transient ones) never reach the tag.
  EXPECT_GE(kCountMask, 1u << 22);
  EXPECT_EQ(header_tag(make_header(3, 0) + 4096), 3u);
}

TEST(SlabHeader, TheSlottedBitIsNeitherCountNorTag) {
  // A slot's page: the bit that keeps it in its class when it empties.
  const std::uint32_t h = make_header(tag_of_class(2), 0) | kSlotted;
  EXPECT_TRUE(header_slotted(h));
  EXPECT_EQ(header_count(h), 0u);
  EXPECT_EQ(header_tag(h), tag_of_class(2));
  // Reservations come and go under it; the largest page count (4,096) and a
  // warp's worth from every stale reserver stay below it.
  EXPECT_EQ(header_count(h + 4096 + 32 * 1024), 4096u + 32 * 1024);
  EXPECT_TRUE(header_slotted(h + 4096 + 32 * 1024));
  EXPECT_FALSE(header_slotted(make_header(tag_of_class(2), 4096)));
  // What another class may take once no page is free: an empty page of a
  // class, in a slot or not; never a free page, a large run or a page with a block.
  EXPECT_TRUE(empty_class_page(h));
  EXPECT_TRUE(empty_class_page(make_header(tag_of_class(12), 0)));
  EXPECT_FALSE(empty_class_page(make_header(tag_of_class(2), 1) | kSlotted));
  EXPECT_FALSE(empty_class_page(0));
  EXPECT_FALSE(empty_class_page(make_header(kLargeTag, 0)));
}

TEST(SlabBits, PickPrefersBitsFromTheStartThenWrapsBelowIt) {
  EXPECT_EQ(pick_bits(0xffffffffu, 32, 0), 0xffffffffu);
  EXPECT_EQ(pick_bits(0xffffffffu, 4, 0), 0xfu);
  EXPECT_EQ(pick_bits(0xffffffffu, 4, 8), 0xf00u);
  EXPECT_EQ(pick_bits(0xffffffffu, 4, 30), 0xc0000003u);
  EXPECT_EQ(pick_bits(0x0f0f0f0fu, 40, 3), 0x0f0f0f0fu);  // fewer free than wanted: all of them
  EXPECT_EQ(pick_bits(0x00000101u, 1, 4), 0x100u);
  EXPECT_EQ(pick_bits(0x00000101u, 1, 9), 0x1u);
  EXPECT_EQ(pick_bits(0, 3, 0), 0u);
  // Whatever it picks is free, and as many as asked when there are enough.
  for (std::uint32_t free : {0x1u, 0x80000001u, 0xdeadbeefu, 0x55555555u, 0xffff0000u}) {
    for (unsigned need = 0; need <= 32; ++need) {
      for (unsigned start = 0; start < 32; start += 5) {
        const std::uint32_t got = pick_bits(free, need, start);
        ASSERT_EQ(got & ~free, 0u);
        ASSERT_EQ(popcount(got), need < popcount(free) ? need : popcount(free));
      }
    }
  }
}

TEST(SlabBits, NthSetBitIndexesTheLanesShare) {
  EXPECT_EQ(nth_set_bit(0xf0u, 0), 4u);
  EXPECT_EQ(nth_set_bit(0xf0u, 3), 7u);
  EXPECT_EQ(nth_set_bit(0xf0u, 4), 32u);
  EXPECT_EQ(nth_set_bit(0x80000001u, 1), 31u);
  EXPECT_EQ(nth_set_bit(0, 0), 32u);
  EXPECT_EQ(lowest_bits(0xf0f0u, 5), 0x10f0u);
  EXPECT_EQ(popcount(0xffffffffu), 32u);
}

// Every mask whose set bits are one run: 528 of them.
std::vector<std::uint32_t> every_run() {
  std::vector<std::uint32_t> out;
  for (unsigned lo = 0; lo < 32; ++lo) {
    for (unsigned len = 1; lo + len <= 32; ++len) out.push_back((len == 32 ? 0xffffffffu : ((1u << len) - 1)) << lo);
  }
  return out;
}

TEST(SlabBits, OneRunTellsARunFromOtherMasks) {
  for (const std::uint32_t m : every_run()) EXPECT_TRUE(one_run(m)) << std::hex << m;
  EXPECT_TRUE(one_run(0));
  for (const std::uint32_t m : {0x5u, 0x80000001u, 0xf0f0u, 0xfffffffeu & ~0x100u}) EXPECT_FALSE(one_run(m)) << std::hex << m;
}

TEST(SlabBits, NthOfRunAgreesWithNthSetBitOnRunsAndOtherMasks) {
  // Every run of set bits, and a few masks that are not one run.
  for (const std::uint32_t m : every_run()) {
    for (unsigned n = 0; n <= 32; ++n) ASSERT_EQ(nth_of_run(m, n), nth_set_bit(m, n)) << std::hex << m << " " << n;
  }
  for (const std::uint32_t m : {0u, 0x5u, 0x80000001u, 0xf0f0u, 0xfffffffeu & ~0x100u}) {
    for (unsigned n = 0; n <= 32; ++n) ASSERT_EQ(nth_of_run(m, n), nth_set_bit(m, n)) << std::hex << m << " " << n;
  }
}

// lowest_bits takes a run's lowest bits by arithmetic: the same bits as one at a time.
TEST(SlabBits, LowestBitsOfARunAreTheBitsOneAtATime) {
  const auto one_at_a_time = [](std::uint32_t m, unsigned n) {
    std::uint32_t out = 0;
    for (; m != 0 && n != 0; --n) {
      out |= m & (~m + 1);
      m &= m - 1;
    }
    return out;
  };
  for (const std::uint32_t m : every_run()) {
    for (unsigned n = 0; n <= 33; ++n) ASSERT_EQ(lowest_bits(m, n), one_at_a_time(m, n)) << std::hex << m << " " << n;
  }
  for (const std::uint32_t m : {0u, 0x5u, 0x80000001u, 0xf0f0u}) {
    for (unsigned n = 0; n <= 33; ++n) ASSERT_EQ(lowest_bits(m, n), one_at_a_time(m, n)) << std::hex << m << " " << n;
  }
}

// The claim loop steps through a page's bitmap words with a mask, not a modulo.
TEST(SlabClasses, EveryClassHasAPowerOfTwoOfBitmapWords) {
  for (unsigned c = 0; c < kClasses; ++c) {
    const std::uint32_t w = class_words(c);
    EXPECT_TRUE(w != 0 && (w & (w - 1)) == 0) << "class " << c << ": " << w << " words";
  }
}

// Warps that run at once spread over the slots: any run of up to 313
// consecutive warp indices (10,000 threads) puts at most 2 in a slot, so a 1 KiB
// page (2 warps' worth) is refilled by none; per_block's calling warps (every 8th
// index) at most 4; and a run of 32,768 (a million threads) within 1.1x of even.
TEST(SlabSlots, ConsecutiveAndStridedWarpsSpreadEvenly) {
  auto most = [](std::uint64_t first, std::uint64_t n, std::uint64_t stride) {
    std::vector<unsigned> per(kSlotsPerClass, 0);
    unsigned m = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      const unsigned s = slot_of_warp_index(first + i * stride);
      EXPECT_LT(s, kSlotsPerClass);
      m = std::max(m, ++per[s]);
    }
    return m;
  };
  for (std::uint64_t first : {0ull, 1ull, 977ull, 40000ull, (1ull << 32) - 100}) {
    EXPECT_LE(most(first, 256, 1), 2u) << first;
    EXPECT_LE(most(first, 313, 1), 2u) << first;
    EXPECT_LE(most(first, 391, 8), 4u) << first;
  }
  EXPECT_LE(most(0, 32768, 1), 32768u / kSlotsPerClass * 11 / 10);
}

// Arenas of about 517 MiB and more give every class 1,024 slots, laid
// out class after class; 3,125 consecutive warps (100,000 threads, or per_warp's
// calls) then put at most 4 in a slot, a 512 B page's worth, and per_block's 391
// calls (every 8th warp) at most 2. Smaller arenas keep 256 a class, as before.
TEST(SlabSlots, LargeArenasGiveEveryClassMoreSlots) {
  EXPECT_FALSE(many_slots(kManySlotsPages - 1));
  EXPECT_TRUE(many_slots(kManySlotsPages));
  for (bool many : {false, true}) {
    EXPECT_EQ(slot_offset(0, many), 0u);
    for (unsigned c = 0; c < kClasses; ++c) {
      EXPECT_EQ(slot_offset(c + 1, many) - slot_offset(c, many), 1u << slots_log2(many)) << c << many;
      EXPECT_EQ(slots_log2(many), many ? 10u : kSlotsLog2) << c << many;
    }
  }
  EXPECT_EQ(slot_offset(kClasses, false), kClasses * kSlotsPerClass);
  EXPECT_EQ(slot_offset(kClasses, true), kClasses * 1024u);
  const Layout small = layout(64ull << 20), large = layout(1ull << 30);
  EXPECT_EQ(small.used - small.slots, 4ull * kClasses * kSlotsPerClass);
  EXPECT_EQ(large.used - large.slots, 4ull * slot_offset(kClasses, true));
  EXPECT_GT(static_cast<double>(large.pages * kPageBytes) / (1ull << 30), 0.99);
  auto most = [](std::uint64_t first, std::uint64_t n, std::uint64_t stride) {
    std::vector<unsigned> per(1u << kManySlotsLog2, 0);
    unsigned m = 0;
    for (std::uint64_t i = 0; i < n; ++i) m = std::max(m, ++per[slot_of_warp_index(first + i * stride, kManySlotsLog2)]);
    return m;
  };
  for (std::uint64_t first : {0ull, 977ull, 40000ull}) {
    EXPECT_LE(most(first, 3125, 1), 4u) << first;
    EXPECT_LE(most(first, 391, 8), 2u) << first;
  }
}

// take_whole_pages' blind claims start from a hash of the group's index in its
// launch: the groups of 313 and 3,125 warps (10,000 and 100,000 threads) of
// every class that fills whole pages, on the zoo's 1 and 2 GiB arenas, start on
// distinct pages while they are at most half as many as the pages, and at most a
// tenth meet while they fit (the slot's hash they replace named one page for
// about three warps at 100,000 threads: two of three claims failed).
TEST(SlabSlots, WholePageStartsKeepTheGroupsApart) {
  for (const std::uint64_t heap : {1ull << 30, 2ull << 30}) {
    const std::uint64_t pages = layout(heap).pages;
    for (unsigned cls = class_of(2048); cls < kClasses; ++cls) {
      const unsigned groups = 32 / blocks_per_page(cls);
      for (const std::uint64_t warps : {313ull, 3125ull}) {
        std::vector<bool> taken(pages, false);
        std::uint64_t met = 0;
        for (std::uint64_t w = 0; w < warps; ++w)
          for (unsigned sub = 0; sub < groups; ++sub) {
            const std::uint32_t p = whole_page_start(w, cls, sub, pages);
            ASSERT_LT(p, pages);
            met += taken[p] ? 1 : 0;
            taken[p] = true;
          }
        const std::uint64_t n = warps * groups;
        if (2 * n <= pages) EXPECT_EQ(met, 0u) << heap << " " << cls << " " << warps;
        if (n <= pages) EXPECT_LE(met, n / 10) << heap << " " << cls << " " << warps;
      }
    }
  }
  EXPECT_EQ(whole_page_start(5, class_of(8192), 1, 0), 0u);
}

TEST(SlabBits, RangeMaskCoversExactlyTheRunInEachWord) {
  EXPECT_EQ(range_mask(0, 1, 0), 1u);
  EXPECT_EQ(range_mask(0, 32, 0), 0xffffffffu);
  EXPECT_EQ(range_mask(0, 32, 1), 0u);
  EXPECT_EQ(range_mask(30, 4, 0), 0xc0000000u);
  EXPECT_EQ(range_mask(30, 4, 1), 0x3u);
  EXPECT_EQ(range_mask(5, 100, 1), 0xffffffffu);
  EXPECT_EQ(range_mask(5, 100, 3), (1u << 9) - 1);  // pages 96 .. 104
  EXPECT_EQ(range_mask(64, 1, 1), 0u);
}

TEST(SlabLayout, MetadataFitsInTheHeapAndCostsUnderOnePercent) {
  for (std::uint64_t mib : {1ull, 8ull, 64ull, 1024ull, 4096ull}) {
    const std::uint64_t heap = mib << 20;
    const Layout l = layout(heap);
    EXPECT_LE(l.meta_begin + l.meta_bytes, l.handle) << mib;  // a reset's clearing leaves the handle's copy
    EXPECT_EQ(l.handle % 16, 0u);
    EXPECT_EQ(l.end, l.handle + kHandleBytes);
    EXPECT_EQ(bytes_taken(l), l.end) << mib;  // the copy counts in what a heap must hold
    EXPECT_LE(bytes_taken(l), heap) << mib;
    EXPECT_EQ(l.meta_begin, l.pages * kPageBytes);
    EXPECT_EQ(l.meta_begin % 16, 0u);
    EXPECT_EQ(l.header - l.bitmap, l.pages * kBitmapWords * 4);
    EXPECT_LE(l.slots + kClasses * kSlotsPerClass * 4, l.used);
    EXPECT_LE(l.used + 4, l.meta_begin + l.meta_bytes);
    // No page more would fit, and pages hold at least 98 % of the heap from 8 MiB on.
    const Layout more = layout_for_pages(l.pages + 1);
    EXPECT_GT(bytes_taken(more), heap) << mib;
    if (mib >= 8) {
      EXPECT_GT(static_cast<double>(l.pages * kPageBytes) / heap, 0.98) << mib;
    }
  }
  EXPECT_EQ(layout(8ull << 20).pages, 126u);
  // find_room reads the headers 16 at a time with 16-byte loads: the array is
  // aligned for them and its last chunk, read whole, stays in the metadata.
  for (std::uint64_t pages : {1ull, 15ull, 16ull, 17ull, 126ull, 1015ull, 16253ull}) {
    const Layout l = layout_for_pages(pages);
    EXPECT_EQ(l.header % 16, 0u) << pages;
    const std::uint64_t chunks = (pages + kRoomChunk - 1) / kRoomChunk;
    EXPECT_LE(l.header + chunks * kRoomChunk * 4, l.meta_begin + l.meta_bytes) << pages;
  }
  EXPECT_EQ(layout(64ull << 20).pages, 1015u);
  EXPECT_EQ(layout(1000).pages, 0u);
  // The metadata of no page at all does not fit in such an arena: slab's Owner refuses it.
  EXPECT_GT(bytes_taken(layout(1000)), 1000u);
  EXPECT_LE(bytes_taken(layout(1ull << 20)), 1ull << 20);
}

struct Words {
  const std::vector<std::uint32_t>* v;
  std::uint32_t operator()(std::uint32_t w) const { return (*v)[w]; }
};

void set_pages(std::vector<std::uint32_t>& bits, std::uint32_t first, std::uint32_t n) {
  for (std::uint32_t p = first; p < first + n; ++p) bits[p / 32] |= 1u << (p % 32);
}

TEST(SlabRuns, FindRunReturnsTheFirstFreeRunFromTheStartThenWraps) {
  const std::uint32_t pages = 100;
  std::vector<std::uint32_t> bits(page_words(pages), 0);
  const Words load{&bits};
  EXPECT_EQ(find_run(load, pages, 0, 1), 0u);
  EXPECT_EQ(find_run(load, pages, 37, 1), 37u);
  EXPECT_EQ(find_run(load, pages, 0, 100), 0u);
  EXPECT_EQ(find_run(load, pages, 0, 101), kNone);
  EXPECT_EQ(find_run(load, pages, 90, 20), 0u) << "no run of 20 from 90 on: wraps to 0";
  set_pages(bits, 0, 40);
  EXPECT_EQ(find_run(load, pages, 0, 1), 40u);
  EXPECT_EQ(find_run(load, pages, 0, 60), 40u);
  EXPECT_EQ(find_run(load, pages, 0, 61), kNone);
  set_pages(bits, 64, 1);
  EXPECT_EQ(find_run(load, pages, 0, 24), 40u);
  EXPECT_EQ(find_run(load, pages, 0, 25), 65u);
  EXPECT_EQ(find_run(load, pages, 70, 30), 70u);
  EXPECT_EQ(find_run(load, pages, 70, 31), 65u) << "a run across the start is found from its beginning";
  EXPECT_EQ(find_run(load, pages, 70, 35), 65u);
  EXPECT_EQ(find_run(load, pages, 70, 36), kNone) << "pages past the last one are never free";
  EXPECT_EQ(find_run(load, pages, 99, 2), 40u);
  set_pages(bits, 40, 60);
  EXPECT_EQ(find_run(load, pages, 0, 1), kNone);
  EXPECT_EQ(find_run(load, pages, 0, 0), kNone);
}

TEST(SlabRuns, FindRunAgreesWithABitByBitSearchOnEveryStart) {
  const std::uint32_t pages = 200;
  std::vector<std::uint32_t> bits(page_words(pages), 0);
  std::uint64_t state = 12345;
  for (std::uint32_t p = 0; p < pages; ++p) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    if ((state >> 60) < 6) set_pages(bits, p, 1);  // about 3 in 8 in use, in runs of any length
  }
  const Words load{&bits};
  auto free_at = [&](std::uint32_t p) { return ((bits[p / 32] >> (p % 32)) & 1u) == 0; };
  for (std::uint32_t n = 1; n <= 6; ++n) {
    for (std::uint32_t start = 0; start < pages; ++start) {
      std::uint32_t expected = kNone;
      for (std::uint32_t k = 0; k < pages && expected == kNone; ++k) {
        const std::uint32_t p = (start + k) % pages;
        if (p + n > pages) continue;
        bool ok = true;
        for (std::uint32_t q = p; q < p + n && ok; ++q) ok = free_at(q);
        if (ok) expected = p;
      }
      const std::uint32_t got = find_run(load, pages, start, n);
      if (expected == kNone) {
        ASSERT_EQ(got, kNone) << n << " " << start;
        continue;
      }
      // First fit from `start` on, then from 0.
      ASSERT_EQ(got, expected) << n << " " << start;
    }
  }
}

TEST(SlabRoom, RoomIsWhatAPageOfTheClassHasLeft) {
  EXPECT_EQ(room_in(make_header(tag_of_class(8), 3), 8), 13u) << "a 4 KiB page holds 16";
  EXPECT_EQ(room_in(make_header(tag_of_class(8), 16), 8), 0u) << "full";
  EXPECT_EQ(room_in(make_header(tag_of_class(8), 17), 8), 0u) << "over-reserved for a moment: full";
  EXPECT_EQ(room_in(make_header(tag_of_class(7), 3), 8), 0u) << "another class";
  EXPECT_EQ(room_in(make_header(kFreeTag, 3), 8), 0u) << "a free page (stale reservers' counts)";
  EXPECT_EQ(room_in(make_header(kLargeTag, 1), 8), 0u) << "a large run";
  EXPECT_EQ(room_in(make_header(tag_of_class(0), 0), 0), 4096u) << "empty, not yet retired";
  EXPECT_EQ(room_in(make_header(tag_of_class(12), 1), 12), 0u);
}

// Headers of `pages` pages read 16 at a time; past `pages` the reader gives
// pages of the class with all their room, which find_room must ignore.
struct Chunks {
  const std::vector<std::uint32_t>* v;
  std::uint32_t junk;
  void operator()(std::uint32_t first, std::uint32_t (&h)[kRoomChunk]) const {
    for (std::uint32_t j = 0; j < kRoomChunk; ++j) h[j] = first + j < v->size() ? (*v)[first + j] : junk;
  }
};

TEST(SlabRoom, ScanHeadersReadsEveryPageOnceFromTheStartsChunkAndStopsWhenAsked) {
  // What find_room and slab.cuh's search for empty pages walk: the pages in chunk
  // order from the one holding the start, wrapping, never a page past the arena.
  const std::uint32_t pages = 70;
  std::vector<std::uint32_t> h(pages);
  for (std::uint32_t p = 0; p < pages; ++p) h[p] = p;
  const Chunks load{&h, 999};
  std::vector<std::uint32_t> seen;
  const auto record = [&](std::uint32_t first, const std::uint32_t* chunk, std::uint32_t n) {
    for (std::uint32_t j = 0; j < n; ++j) {
      EXPECT_EQ(chunk[j], first + j);
      seen.push_back(chunk[j]);
    }
    return false;
  };
  EXPECT_FALSE(scan_headers(load, pages, 50, 1024, record));
  std::vector<std::uint32_t> expected;
  for (std::uint32_t p = 48; p < pages; ++p) expected.push_back(p);
  for (std::uint32_t p = 0; p < 48; ++p) expected.push_back(p);
  EXPECT_EQ(seen, expected);
  EXPECT_TRUE(scan_covers(pages, 1024));
  seen.clear();
  EXPECT_FALSE(scan_headers(load, pages, 50, 32, record)) << "two chunks: 48 .. 63 and 64 .. 69";
  EXPECT_EQ(seen.size(), 22u);
  EXPECT_FALSE(scan_covers(pages, 32));
  int visits = 0;
  EXPECT_TRUE(scan_headers(load, pages, 0, 1024, [&](std::uint32_t, const std::uint32_t*, std::uint32_t) {
    return ++visits == 2;
  }));
  EXPECT_EQ(visits, 2) << "stops at the visit that asks";
  EXPECT_FALSE(scan_headers(load, 0, 0, 1024, record));
}

TEST(SlabRoom, FindRoomTakesTheRoomiestOfTheFirstChunkWithEnoughFromTheStart) {
  constexpr unsigned c = 8;  // 4 KiB: 16 a page
  const std::uint32_t pages = 70, tag = tag_of_class(c);
  std::vector<std::uint32_t> h(pages, make_header(tag, 16));  // every page full
  const Chunks load{&h, make_header(tag, 0)};
  EXPECT_EQ(find_room(load, pages, 0, 1024, c, 1), kNone) << "all full; the reader's extra headers are past the pages";
  EXPECT_EQ(find_room(load, 0, 0, 1024, c, 1), kNone);
  h[5] = make_header(tag, 15);   // room 1
  h[40] = make_header(tag, 10);  // room 6
  h[45] = make_header(tag, 4);   // room 12
  h[47] = make_header(tag_of_class(7), 0);  // another class, empty
  h[66] = make_header(tag, 12);  // room 4
  EXPECT_EQ(find_room(load, pages, 0, 1024, c, 1), 5u) << "the first chunk with room for one";
  EXPECT_EQ(find_room(load, pages, 0, 1024, c, 2), 45u) << "chunk 0 has too little: the roomiest of chunk 2";
  EXPECT_EQ(find_room(load, pages, 33, 1024, c, 2), 45u) << "from the chunk that holds the start";
  EXPECT_EQ(find_room(load, pages, 50, 1024, c, 2), 66u);
  EXPECT_EQ(find_room(load, pages, 50, 1024, c, 5), 45u) << "none with 5 from 48 on: wraps to chunk 0, then 2";
  EXPECT_EQ(find_room(load, pages, 50, 1024, c, 13), 45u) << "none with 13 anywhere: the roomiest read";
  EXPECT_EQ(find_room(load, pages, 50, 16, c, 13), kNone) << "chunk 3 (48 .. 63) alone: no room";
  EXPECT_EQ(find_room(load, pages, 50, 32, c, 13), 66u) << "chunks 3 and 4 (64 .. 69)";
  EXPECT_EQ(find_room(load, pages, 50, 64, c, 13), 66u) << "then chunks 0 and 1: page 5 has less";
  EXPECT_EQ(find_room(load, pages, 50, 80, c, 13), 45u) << "then chunk 2";
  EXPECT_EQ(find_room(load, pages, 20, 16, c, 1), kNone) << "chunk 1 alone: none";
  EXPECT_EQ(find_room(load, pages, 70 + 40, 16, c, 1), 45u) << "a start past the pages wraps";
  EXPECT_EQ(find_room(load, pages, 0, 1024, 7, 1), 47u) << "another class sees only its own";
}

}  // namespace
}  // namespace heapbench_user::slab_math
