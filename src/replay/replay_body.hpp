#pragma once
// A replayed thread's operations (trace_reader.hpp's ReplayOp), for the GPU
// kernel (src/replay/replay.cu) and the CPU (the stand-in device,
// tests/workloads/cpu_rounds.hpp) alike.
//
// An allocation calls the case's allocator, stamps the block's first and last
// bytes with its id and publishes it in the table of blocks; a release takes
// its block from the table (waiting, within the kernel's deadline, where
// another thread of the same launch has yet to allocate it), checks the
// stamp (a block another one overlapped reads back wrong) and frees it. The
// floor (FloorAddresses) makes the same walk with no allocator.
#include <cstdint>
#include <cstring>

#include "replay/trace_reader.hpp"
#include "workloads/workload_body.hpp"  // stamp_byte, hd_fence

namespace heapbench::trace {

// Table entries: a block, NULL (the call returned it), or not yet allocated.
#define HB_REPLAY_PENDING (reinterpret_cast<void*>(~std::uintptr_t{0}))
inline constexpr std::uint64_t kReplayStampEnds = 8;  // bytes stamped and checked at each end

// What one operation found, for the counters (only what went wrong).
struct ReplayStep {
  std::uint32_t null = 0;       // the allocator returned NULL
  std::uint32_t new_null = 0;   // ... where the recording had a block
  std::uint32_t misaligned = 0; // not 16-byte aligned (the recording's alignment where it asked for one)
  std::uint32_t corrupted = 0;  // its stamp did not read back at its release
  std::uint32_t waiting = 0;    // a release whose block is not allocated yet: try again later
};

// A block's stamp: its first and last kReplayStampEnds bytes, byte i being
// workloads::stamp_byte(id, i). Where the block is 8-byte aligned each whole
// 8-byte word of it is one store (the bytes of word w are those of
// mix64(id * ... + w): stamp_byte's), else byte by byte; the same bytes either way.
HEAPBENCH_HD inline std::uint64_t stamp_word(std::uint64_t id, std::uint64_t w) {
  return mix64(id * 0x9E3779B97F4A7C15ull + w);
}
HEAPBENCH_HD inline void store_word(unsigned char* p, std::uint64_t v) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<std::uint64_t*>(p) = v;
#else
  std::memcpy(p, &v, sizeof v);
#endif
}
HEAPBENCH_HD inline std::uint64_t load_word(const unsigned char* p) {
#if defined(__CUDA_ARCH__)
  return *reinterpret_cast<const std::uint64_t*>(p);
#else
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
#endif
}
HEAPBENCH_HD inline bool stamp_in_words(const unsigned char* p, std::uint64_t size) {
  static_assert(kReplayStampEnds == 8, "one word at each end");
  return size >= 8 && size % 8 == 0 && reinterpret_cast<std::uintptr_t>(p) % 8 == 0;
}

HEAPBENCH_HD inline void stamp_block(unsigned char* p, std::uint64_t size, std::uint64_t id) {
  if (stamp_in_words(p, size)) {
    store_word(p, stamp_word(id, 0));
    store_word(p + size - 8, stamp_word(id, size / 8 - 1));
    return;
  }
  for (std::uint64_t i = 0; i < size && i < kReplayStampEnds; ++i) p[i] = workloads::stamp_byte(id, i);
  for (std::uint64_t i = size > kReplayStampEnds ? size - kReplayStampEnds : 0; i < size; ++i) {
    p[i] = workloads::stamp_byte(id, i);
  }
}
HEAPBENCH_HD inline bool stamp_intact(const unsigned char* p, std::uint64_t size, std::uint64_t id) {
  if (stamp_in_words(p, size)) {
    return load_word(p) == stamp_word(id, 0) && load_word(p + size - 8) == stamp_word(id, size / 8 - 1);
  }
  bool ok = true;
  for (std::uint64_t i = 0; i < size && i < kReplayStampEnds; ++i) ok &= p[i] == workloads::stamp_byte(id, i);
  for (std::uint64_t i = size > kReplayStampEnds ? size - kReplayStampEnds : 0; i < size; ++i) {
    ok &= p[i] == workloads::stamp_byte(id, i);
  }
  return ok;
}

HEAPBENCH_HD inline void* load_entry(void* const* table, std::uint32_t id) {
  return *reinterpret_cast<void* const volatile*>(table + id);
}

// The replay's floor (docs/trace.md): no allocator. An allocation gets the
// place plan_floor gave its block in an arena (NULL where the recording got
// NULL); a release gives nothing back. Everything else a replayed operation
// does (the stamps, the table, the checks, the waits) is the same.
struct FloorAddresses {
  unsigned char* base;  // the arena, aligned to the plan's floor_align
  HEAPBENCH_HD void deallocate(void*) const {}
};

// The call an allocation makes: the case's allocator, or the floor's place.
template <class A>
HEAPBENCH_HD inline void* replay_allocate(const A& a, const ReplayOp& op) {
  return a.allocate(op.size, op.align != 0 ? op.align : 16);
}
HEAPBENCH_HD inline void* replay_allocate(const FloorAddresses& f, const ReplayOp& op) {
  return op.recorded_null != 0 ? nullptr : f.base + std::uint64_t{op.floor} * kFloorUnit;
}

// One operation with allocator handle `a` (or the floor's FloorAddresses). A
// release's op carries its block's size (for the stamp): nothing is loaded
// for an operation but its op and, at a release, its block's table entry.
template <class A>
HEAPBENCH_HD inline ReplayStep replay_op(const A& a, const ReplayOp& op, void** table) {
  ReplayStep s;
  if (op.kind == kAllocate) {
    void* p = replay_allocate(a, op);
    if (p == nullptr) {
      s.null = 1;
      s.new_null = op.recorded_null == 0;
    } else {
      const std::uint64_t align = op.align > 16 ? op.align : 16;
      s.misaligned = reinterpret_cast<std::uintptr_t>(p) % align != 0;
      stamp_block(static_cast<unsigned char*>(p), op.size, op.id);
    }
    workloads::hd_fence();  // the stamp before the entry another thread may read
    *reinterpret_cast<void* volatile*>(table + op.id) = p;
    return s;
  }
  void* p = load_entry(table, op.id);
  if (p == HB_REPLAY_PENDING) {
    s.waiting = 1;
    return s;
  }
  workloads::hd_fence();
  if (p != nullptr) {
    s.corrupted = !stamp_intact(static_cast<const unsigned char*>(p), op.size, op.id);
    a.deallocate(p);
  }
  return s;
}

}  // namespace heapbench::trace
