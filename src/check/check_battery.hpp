#pragma once
// The battery of `heapbench check` (docs/check.md): the per-thread bodies and
// the launches of each row, over any allocator handle and any grid.
//
// A grid runs a functor once per thread index and owns the memory the bodies
// write (CUB's injected kernel source, in small):
//   g.template buffer<T>(n)      -> Buf, n zeroed elements, Buf::data() -> T*
//   g.to_host(buf)               -> std::vector<T>
//   g.launch(n, functor)         -> seconds; throws check::Hang when the launch
//                                   is not over by g.deadline_ns() + grace
//   g.deadline_ns(seconds)       -> the time, on now_ns()'s clock, `seconds` from now
// src/check/check.cu's grid launches a CUDA kernel (the bodies then run on the
// GPU against malloc, slab, bump, ...); tests/check/'s runs the same bodies on
// CPU threads against host allocators, so the battery, and the broken
// allocators it must catch, are tested without a GPU.
//
// The bodies never call an atomic except through atomic_add below, and read
// the time only through now_ns(): both are the device's under nvcc, the host's
// under a host compiler.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "check/check.hpp"
#include "cases/mixed_sizes.hpp"

#if defined(__CUDACC__)
#define HB_CHECK_BODY __device__
#else
#define HB_CHECK_BODY
#endif

namespace heapbench::check {

// A launch that did not end in time: the row's process reports hung() and exits
// without waiting for it (a kernel spinning in an allocator cannot be stopped).
struct Hang : std::runtime_error {
  Hang(double s, const std::string& during) : std::runtime_error(during), seconds(s) {}
  double seconds;
};

namespace body {

HB_CHECK_BODY inline std::uint64_t now_ns() {
#if defined(__CUDA_ARCH__)
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#else
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
#endif
}

HB_CHECK_BODY inline unsigned long long atomic_add(unsigned long long* p, unsigned long long v) {
#if defined(__CUDA_ARCH__)
  return atomicAdd(p, v);
#else
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

// The word the owner of a block writes at word i: distinct owners write
// distinct words at the same i, so a byte two live blocks share reads back
// wrong for one of them.
HB_CHECK_BODY inline std::uint32_t stamp_word(std::uint64_t owner, std::uint64_t i) {
  return static_cast<std::uint32_t>(mix64(owner * 0x9E3779B97F4A7C15ull + i));
}

// Whole words where the block is word-aligned, bytes where it is not (a
// misaligned block must not crash the check that finds it).
HB_CHECK_BODY inline void stamp(std::uint64_t addr, std::uint64_t size, std::uint64_t owner) {
  if (addr % 4 == 0) {
    auto* w = reinterpret_cast<std::uint32_t*>(addr);
    for (std::uint64_t i = 0; i < size / 4; ++i) w[i] = stamp_word(owner, i);
    auto* tail = reinterpret_cast<unsigned char*>(addr + size / 4 * 4);
    const std::uint32_t last = stamp_word(owner, size / 4);
    for (std::uint64_t j = 0; j < size % 4; ++j) tail[j] = static_cast<unsigned char>(last >> (8 * j));
  } else {
    auto* b = reinterpret_cast<unsigned char*>(addr);
    for (std::uint64_t j = 0; j < size; ++j) b[j] = static_cast<unsigned char>(stamp_word(owner, j / 4) >> (8 * (j % 4)));
  }
}

// Words (or partial words) that do not hold the owner's stamp.
HB_CHECK_BODY inline std::uint64_t verify(std::uint64_t addr, std::uint64_t size, std::uint64_t owner) {
  std::uint64_t bad = 0;
  if (addr % 4 == 0) {
    const auto* w = reinterpret_cast<const std::uint32_t*>(addr);
    for (std::uint64_t i = 0; i < size / 4; ++i) bad += w[i] != stamp_word(owner, i);
    const auto* tail = reinterpret_cast<const unsigned char*>(addr + size / 4 * 4);
    const std::uint32_t last = stamp_word(owner, size / 4);
    bool tail_bad = false;
    for (std::uint64_t j = 0; j < size % 4; ++j) tail_bad |= tail[j] != static_cast<unsigned char>(last >> (8 * j));
    bad += tail_bad;
  } else {
    const auto* b = reinterpret_cast<const unsigned char*>(addr);
    for (std::uint64_t j = 0; j < size; ++j) {
      bad += b[j] != static_cast<unsigned char>(stamp_word(owner, j / 4) >> (8 * (j % 4)));
    }
  }
  return bad;
}

enum : std::uint32_t { kNotStarted = 0, kNull = 1, kGot = 2 };

// One allocation as a body saw it.
struct Slot {
  std::uint64_t addr;
  std::uint64_t size;
  std::uint64_t align;  // the alignment the block must have: max(asked, the API's minimum)
  std::uint32_t state;
  std::uint32_t mismatched;  // words that did not read back (saturates)
};

// Thread t asks sizes[t % n_sizes] at aligns[(t / n_sizes) % n_aligns], or
// mixed_size(t, mixed_max) when mixed_max is not 0.
struct Sizes {
  std::uint64_t sizes[32];
  std::uint64_t aligns[16];
  std::uint32_t n_sizes = 0, n_aligns = 0;
  std::uint64_t mixed_max = 0;
  std::uint64_t min_alignment = 16;
  HB_CHECK_BODY std::uint64_t size(std::uint64_t t) const {
    return mixed_max ? mixed_size(t, mixed_max) : sizes[t % n_sizes];
  }
  HB_CHECK_BODY std::uint64_t align(std::uint64_t t) const { return aligns[(t / n_sizes) % n_aligns]; }
};

// Thread t allocates slot first + t.
template <class H>
struct AllocSlots {
  H h;
  Slot* slots;
  Sizes sizes;
  std::uint64_t first;
  std::uint64_t deadline;
  HB_CHECK_BODY void operator()(std::uint64_t t) const {
    const std::uint64_t i = first + t;
    Slot s{};
    s.size = sizes.size(i);
    const std::uint64_t asked = sizes.align(i);
    s.align = asked > sizes.min_alignment ? asked : sizes.min_alignment;
    if (now_ns() > deadline) {
      s.state = kNotStarted;
    } else {
      void* p = h.allocate(s.size, asked);
      s.addr = reinterpret_cast<std::uint64_t>(p);
      s.state = p ? kGot : kNull;
    }
    slots[i] = s;
  }
};

struct StampSlots {
  Slot* slots;
  HB_CHECK_BODY void operator()(std::uint64_t i) const {
    if (slots[i].state == kGot) stamp(slots[i].addr, slots[i].size, i);
  }
};

struct VerifySlots {
  Slot* slots;
  HB_CHECK_BODY void operator()(std::uint64_t i) const {
    if (slots[i].state != kGot) return;
    const std::uint64_t bad = verify(slots[i].addr, slots[i].size, i);
    slots[i].mismatched = bad > 0xffffffffu ? 0xffffffffu : static_cast<std::uint32_t>(bad);
  }
};

// Thread t frees slot (t + shift) % n: shift 0, its own; n / 2 + 33, one of
// another warp and another block, allocated in another launch. With `check`,
// it first reads the block's stamp back.
template <class H>
struct FreeSlots {
  H h;
  Slot* slots;
  std::uint64_t n;
  std::uint64_t shift;
  bool check;
  HB_CHECK_BODY void operator()(std::uint64_t t) const {
    const std::uint64_t i = (t + shift) % n;
    if (slots[i].state != kGot) return;
    if (check) {
      const std::uint64_t bad = verify(slots[i].addr, slots[i].size, i);
      slots[i].mismatched = bad > 0xffffffffu ? 0xffffffffu : static_cast<std::uint32_t>(bad);
    }
    h.deallocate(reinterpret_cast<void*>(slots[i].addr));
  }
};

struct FillCounts {
  unsigned long long blocks, beyond, nulls, not_started;
};

// Every thread allocates until NULL; blocks go to slots in the order they come,
// at most max_blocks. A fill with mixed_max draws each size from 16 ... mixed_max.
template <class H>
struct Fill {
  H h;
  FillCounts* counts;
  std::uint64_t* addrs;
  std::uint64_t size;
  std::uint64_t mixed_max;
  std::uint64_t max_blocks;
  bool stamp_blocks;
  std::uint64_t deadline;
  HB_CHECK_BODY void operator()(std::uint64_t t) const {
    for (std::uint64_t k = 0;; ++k) {
      if (now_ns() > deadline) {
        atomic_add(&counts->not_started, 1);
        return;
      }
      const std::uint64_t bytes = mixed_max ? mixed_size(t * 0x10001ull + k, mixed_max) : size;
      void* p = h.allocate(bytes, 16);
      if (p == nullptr) {
        atomic_add(&counts->nulls, 1);
        return;
      }
      const std::uint64_t i = atomic_add(&counts->blocks, 1);
      if (i >= max_blocks) {
        atomic_add(&counts->beyond, 1);
        return;  // the block is left: the allocator said it had room it does not have
      }
      addrs[i] = reinterpret_cast<std::uint64_t>(p);
      if (stamp_blocks) stamp(addrs[i], bytes, i);
    }
  }
};

// Reads back (with size != 0) and frees the first n blocks of a fill.
template <class H>
struct FreeFilled {
  H h;
  std::uint64_t* addrs;
  std::uint32_t* mismatched;  // nullptr: no reading back
  std::uint64_t size;
  HB_CHECK_BODY void operator()(std::uint64_t i) const {
    if (mismatched != nullptr) mismatched[i] = verify(addrs[i], size, i) != 0;
    h.deallocate(reinterpret_cast<void*>(addrs[i]));
  }
};

// The edge row's single calls.
struct EdgeOut {
  std::uint64_t zero_a, zero_b, past_heap, probe, probe_mismatched;
};

template <class H>
struct EdgeCalls {
  H h;
  EdgeOut* out;
  std::uint64_t heap_bytes;
  bool free_null;
  HB_CHECK_BODY void operator()(std::uint64_t) const {
    if (free_null) h.deallocate(nullptr);
    void* a = h.allocate(0, 16);
    void* b = h.allocate(0, 16);
    out->zero_a = reinterpret_cast<std::uint64_t>(a);
    out->zero_b = reinterpret_cast<std::uint64_t>(b);
    if (a) h.deallocate(a);
    if (b) h.deallocate(b);
    void* big = h.allocate(heap_bytes + 1, 16);
    out->past_heap = reinterpret_cast<std::uint64_t>(big);
    if (big) h.deallocate(big);
  }
};

// One thread asks one block of `size`; with `check`, writes and reads back its
// first and last 64 KiB (one thread writing a whole heap-sized block is slow on
// a GPU, slower still under compute-sanitizer).
template <class H>
struct Probe {
  H h;
  EdgeOut* out;
  std::uint64_t size;
  bool check;
  HB_CHECK_BODY void operator()(std::uint64_t) const {
    void* p = h.allocate(size, 16);
    out->probe = reinterpret_cast<std::uint64_t>(p);
    out->probe_mismatched = 0;
    if (p == nullptr) return;
    if (check) {
      const std::uint64_t head = size < 65536 ? size : 65536;
      const std::uint64_t back = size > 65536 ? (size - 65536) / 16 * 16 : 0;  // 16-byte aligned, as the block is
      const std::uint64_t from = back > head ? back : head;
      stamp(out->probe, head, 7);
      stamp(out->probe + from, size - from, 8);
      out->probe_mismatched = verify(out->probe, head, 7) + verify(out->probe + from, size - from, 8);
    }
    h.deallocate(p);
  }
};

struct SoakCounts {
  unsigned long long allocations, nulls, frees, mismatched, misaligned;
};

// Random churn until the deadline: each thread holds up to kSoakHeld blocks of
// 16 ... kSoakMaxSize B, frees a random one or allocates into an empty slot,
// and reads every block back before freeing it.
template <class H>
struct Churn {
  H h;
  Slot* held;  // kSoakHeld per thread
  SoakCounts* counts;
  std::uint64_t deadline;
  std::uint64_t min_alignment;
  // Reads a held block back (counting it in `bad` if it does not), frees it
  // and empties its slot: in the churn and in the drain after the deadline.
  HB_CHECK_BODY void release(Slot& s, unsigned long long& bad, unsigned long long& frees) const {
    bad += verify(s.addr, s.size, s.align) != 0;  // align holds the owner's stamp key here
    h.deallocate(reinterpret_cast<void*>(s.addr));
    s.state = kNull;
    ++frees;
  }
  HB_CHECK_BODY void operator()(std::uint64_t t) const {
    std::uint64_t x = mix64(t + 0x736f616bull);  // "soak"
    unsigned long long allocs = 0, nulls = 0, frees = 0, bad = 0, misaligned = 0;
    Slot* mine = held + t * kSoakHeld;
    while (now_ns() < deadline) {
      x = mix64(x);
      Slot& s = mine[x % kSoakHeld];
      if (s.state == kGot) {
        release(s, bad, frees);
      } else {
        const std::uint64_t size = 16 + (x >> 20) % (kSoakMaxSize - 15);
        void* p = h.allocate(size, 16);
        if (p == nullptr) {
          ++nulls;
          continue;
        }
        s.addr = reinterpret_cast<std::uint64_t>(p);
        s.size = size;
        s.align = t * 0x100000000ull + allocs;  // unique per block: another block's bytes read back wrong
        s.state = kGot;
        misaligned += s.addr % min_alignment != 0;
        stamp(s.addr, size, s.align);
        ++allocs;
      }
    }
    for (std::uint64_t j = 0; j < kSoakHeld; ++j) {
      if (mine[j].state == kGot) release(mine[j], bad, frees);  // past the deadline too: none is left behind
    }
    atomic_add(&counts->allocations, allocs);
    atomic_add(&counts->nulls, nulls);
    atomic_add(&counts->frees, frees);
    atomic_add(&counts->mismatched, bad);
    atomic_add(&counts->misaligned, misaligned);
  }
};

}  // namespace body

// What a row is run with.
struct RowPlan {
  Row row = Row::overlap;
  std::uint64_t heap_bytes = 0;  // heap_for(row, ...): what the device heap or arena was set to
  std::uint64_t threads = 1ull << 20;
  double soak_s = 2.0;
  double budget_s = 10.0;
  Capabilities caps;
  bool free_null = false;  // the API's contract includes free(NULL)
  int device = 0;          // the CUDA device (the CPU grid has one)
  // Called by the grid when a launch does not end in time, before it throws
  // Hang: the row's process writes its row and exits here, before unwinding
  // would free device memory (cudaFree waits for the stuck kernel).
  std::function<void(const Hang&)> on_hang;
};

namespace detail {

inline body::Sizes fixed_sizes(std::uint64_t size, std::uint64_t min_alignment) {
  body::Sizes s;
  s.sizes[0] = size;
  s.n_sizes = 1;
  s.aligns[0] = min_alignment;
  s.n_aligns = 1;
  s.min_alignment = min_alignment;
  return s;
}

inline body::Sizes mixed_sizes(std::uint64_t max, std::uint64_t min_alignment) {
  body::Sizes s = fixed_sizes(16, min_alignment);
  s.mixed_max = max;
  return s;
}

// The blocks of slots, with what reading back found.
inline BlockSet block_set(std::string label, const std::vector<body::Slot>& slots, double seconds) {
  BlockSet set;
  set.label = std::move(label);
  set.seconds = seconds;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const body::Slot& s = slots[i];
    if (s.state == body::kNotStarted) {
      ++set.not_started;
      continue;
    }
    ++set.attempts;
    if (s.state != body::kGot) continue;
    if (s.mismatched) {
      if (!set.first_mismatch) set.first_mismatch = set.blocks.size();
      ++set.mismatched_blocks;
      set.mismatched_words += s.mismatched;
    }
    set.blocks.push_back({s.addr, s.size, s.align, i});
  }
  set.attempts += set.not_started;
  return set;
}

// Allocates slots [0, n) in `launches` launches of equal parts, stamps them all
// once every one is live, reads them back in another launch, frees them.
template <class Grid, class H>
BlockSet live_set(Grid& g, H h, const RowPlan& p, std::string label, std::uint64_t n, const body::Sizes& sizes,
                  int launches, std::uint64_t free_shift, bool read_back = true) {
  auto slots = g.template buffer<body::Slot>(n);
  double seconds = 0;
  const std::uint64_t part = (n + launches - 1) / launches;
  for (std::uint64_t first = 0; first < n; first += part) {
    const std::uint64_t count = std::min(part, n - first);
    seconds += g.launch(count, body::AllocSlots<H>{h, slots.data(), sizes, first, g.deadline_ns(p.budget_s)},
                        "allocate");
  }
  seconds += g.launch(n, body::StampSlots{slots.data()}, "stamp");
  if (free_shift == 0 && read_back) seconds += g.launch(n, body::VerifySlots{slots.data()}, "read back");
  seconds += g.launch(n, body::FreeSlots<H>{h, slots.data(), n, free_shift, free_shift != 0 && read_back}, "free");
  return block_set(std::move(label), g.to_host(slots), seconds);
}

struct FillResult {
  Fill fill;
  std::uint64_t count = 0;  // blocks in addrs
};

// Fills the heap with `size` (or mixed sizes up to mixed_max) from kFillThreads
// threads, optionally stamped and read back, then frees every block it got.
template <class Grid, class H>
Fill fill_and_free(Grid& g, H h, const RowPlan& p, std::uint64_t size, std::uint64_t mixed_max, bool stamped) {
  Fill f;
  f.heap_bytes = p.heap_bytes;
  f.size = size;
  const std::uint64_t threads = std::min<std::uint64_t>(kFillThreads, std::max<std::uint64_t>(p.threads, 64));
  f.max_blocks = p.heap_bytes / 16 + threads;
  auto counts = g.template buffer<body::FillCounts>(1);
  auto addrs = g.template buffer<std::uint64_t>(f.max_blocks);
  f.seconds = g.launch(threads,
                       body::Fill<H>{h, counts.data(), addrs.data(), size, mixed_max, f.max_blocks, stamped,
                                     g.deadline_ns(p.budget_s)},
                       "fill");
  const body::FillCounts c = g.to_host(counts).at(0);
  f.blocks = std::min<std::uint64_t>(c.blocks, f.max_blocks);
  f.beyond = c.beyond;
  f.nulls = c.nulls;
  f.not_started = c.not_started;
  if (f.blocks == 0) return f;
  auto mismatched = g.template buffer<std::uint32_t>(stamped ? f.blocks : 0);
  g.launch(f.blocks, body::FreeFilled<H>{h, addrs.data(), stamped ? mismatched.data() : nullptr, size}, "free");
  if (stamped) {
    const std::vector<std::uint32_t> m = g.to_host(mismatched);
    const std::vector<std::uint64_t> a = g.to_host(addrs);
    for (std::uint64_t i = 0; i < f.blocks; ++i) {
      if (!m[i]) continue;
      if (!f.first_mismatch_addr) f.first_mismatch_addr = a[i];
      ++f.mismatched_blocks;
    }
  }
  return f;
}

// Blocks of `size` a fill got, where the fill ended with a NULL in time.
template <class Grid, class H>
std::uint64_t capacity(Grid& g, H h, const RowPlan& p, std::uint64_t size) {
  const Fill f = fill_and_free(g, h, p, size, 0, false);
  if (f.not_started) {
    throw std::runtime_error(std::to_string(f.not_started) + " threads of a fill of " + std::to_string(size) +
                             " B blocks found the kernel budget spent: the capacity was not measured");
  }
  return f.blocks;
}

// The rows with more than a few steps, each run by run_row.
template <class Grid, class H>
RowResult alignment_row(Grid& g, H h, const RowPlan& p) {
  const std::uint64_t align0 = p.caps.min_alignment;
  body::Sizes s;
  s.n_sizes = static_cast<std::uint32_t>(kAlignmentSizes.size());
  std::copy(kAlignmentSizes.begin(), kAlignmentSizes.end(), s.sizes);
  s.min_alignment = align0;
  if (p.caps.takes_align) {
    s.n_aligns = static_cast<std::uint32_t>(kAlignments.size());
    std::copy(kAlignments.begin(), kAlignments.end(), s.aligns);
  } else {
    s.n_aligns = 1;
    s.aligns[0] = align0;
  }
  const std::uint64_t n = std::uint64_t{s.n_sizes} * s.n_aligns * kAlignmentCopies;
  BlockSet set = live_set(g, h, p, std::to_string(s.n_sizes), n, s, 1, 0);
  return judge_alignment(set);
}

template <class Grid, class H>
RowResult edge_row(Grid& g, H h, const std::function<void()>& reset, const RowPlan& p) {
  const std::uint64_t align0 = p.caps.min_alignment;
  Edge e;
  e.free_null_asked = p.free_null;
  e.heap_bytes = p.heap_bytes;
  auto out = g.template buffer<body::EdgeOut>(1);
  g.launch(1, body::EdgeCalls<H>{h, out.data(), p.heap_bytes, p.free_null}, "edge calls");
  body::EdgeOut o = g.to_host(out).at(0);
  e.zero_a = o.zero_a;
  e.zero_b = o.zero_b;
  e.past_heap = o.past_heap;
  // The largest single block an empty heap serves, by bisection to 1/1024 of the heap.
  std::uint64_t lo = 0, hi = p.heap_bytes + 1;
  const std::uint64_t step = std::max<std::uint64_t>(16, p.heap_bytes / 1024);
  while (hi - lo > step) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    reset();
    g.launch(1, body::Probe<H>{h, out.data(), mid, false}, "largest block");
    (g.to_host(out).at(0).probe ? lo : hi) = mid;
  }
  if (lo > 0) {
    reset();
    g.launch(1, body::Probe<H>{h, out.data(), lo, true}, "largest block, every word");
    o = g.to_host(out).at(0);
    e.largest = o.probe ? lo : 0;
    e.largest_mismatched = o.probe_mismatched;
  }
  reset();
  body::Sizes s;
  s.n_sizes = 0;
  for (unsigned k = 4; k <= 16; ++k) {
    s.sizes[s.n_sizes++] = (1ull << k) - 1;
    s.sizes[s.n_sizes++] = (1ull << k) + 1;
  }
  s.n_aligns = 1;
  s.aligns[0] = align0;
  s.min_alignment = align0;
  e.boundaries = live_set(g, h, p, "boundaries", s.n_sizes * kBoundaryCopies, s, 1, 0);
  return judge_edge(e);
}

template <class Grid, class H>
RowResult soak_row(Grid& g, H h, const RowPlan& p) {
  const std::uint64_t align0 = p.caps.min_alignment;
  Soak s;
  s.threads = soak_threads(p.threads);
  auto held = g.template buffer<body::Slot>(s.threads * kSoakHeld);
  auto counts = g.template buffer<body::SoakCounts>(1);
  s.seconds = g.launch(s.threads, body::Churn<H>{h, held.data(), counts.data(), g.deadline_ns(p.soak_s), align0},
                       "soak");
  const body::SoakCounts c = g.to_host(counts).at(0);
  s.allocations = c.allocations;
  s.nulls = c.nulls;
  s.frees = c.frees;
  s.mismatched_blocks = c.mismatched;
  s.misaligned = c.misaligned;
  return judge_soak(s);
}

}  // namespace detail

// Runs one row. `reset` empties the allocator (its owner's reset()): called
// once before the row, and before each probe of the largest block.
template <class Grid, class H>
RowResult run_row(Grid& g, H h, const std::function<void()>& reset, const RowPlan& p) {
  using namespace detail;
  const std::uint64_t align0 = p.caps.min_alignment;
  reset();
  switch (p.row) {
    case Row::overlap: {
      std::vector<BlockSet> sets;
      sets.push_back(live_set(g, h, p, "fixed 64 B, one kernel", p.threads, fixed_sizes(kOverlapFixedSize, align0), 1, 0));
      sets.push_back(live_set(g, h, p, "mixed 16-256 B, two kernels", p.threads, mixed_sizes(kMixedMax, align0), 2, 0));
      return judge_overlap(sets);
    }
    case Row::alignment: return alignment_row(g, h, p);
    case Row::exhaustion: {
      const Fill f = fill_and_free(g, h, p, kExhaustionSize, 0, true);
      return judge_exhaustion(f, p.budget_s);
    }
    case Row::recovery: {
      std::vector<Capacity> classes;
      for (std::uint64_t size : kRecoverySizes) classes.push_back({size, capacity(g, h, p, size), 0});
      (void)fill_and_free(g, h, p, 0, 4096, false);  // a mixed fill to the brim, then every block freed
      for (Capacity& c : classes) c.after = capacity(g, h, p, c.size);
      return judge_recovery(classes);
    }
    case Row::leak: {
      Capacity c{kCapacitySize, capacity(g, h, p, kCapacitySize), 0};
      for (int i = 0; i < kLeakRounds; ++i) (void)fill_and_free(g, h, p, 0, 4096, false);
      c.after = capacity(g, h, p, kCapacitySize);
      return judge_leak(c, kLeakRounds);
    }
    case Row::lifetimes: {
      const std::uint64_t n = lifetimes_threads(p.threads);
      // Stamped in the launch after the allocating one, read back and freed by a
      // thread n / 2 + 33 away (another warp, another block) in a third.
      BlockSet set = live_set(g, h, p, "lifetimes", n, mixed_sizes(kMixedMax, align0), 1, n / 2 + 33);
      return judge_lifetimes(set);
    }
    case Row::remote_free: {
      Capacity c{kCapacitySize, capacity(g, h, p, kCapacitySize), 0};
      // Three quarters as many threads as blocks fit, one block each (not to the
      // brim: calls that meet a full heap are slow), freed by threads of other
      // warps and blocks.
      const std::uint64_t n = std::max<std::uint64_t>(c.before / 4 * 3, 64);
      // Not read back: lifetimes checks that blocks keep their bytes; this row, that they come back.
      (void)live_set(g, h, p, "remote", n, fixed_sizes(kCapacitySize, align0), 1, n / 2 + 33, false);
      c.after = capacity(g, h, p, kCapacitySize);
      return judge_remote_free(c, 0);
    }
    case Row::edge: return edge_row(g, h, reset, p);
    case Row::soak: return soak_row(g, h, p);
    case Row::sanitizer: break;
  }
  throw std::logic_error("run_row: the sanitizer row is run by the parent, around the other rows");
}

}  // namespace heapbench::check
