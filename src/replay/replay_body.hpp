#pragma once
// A replayed thread's operations (trace_reader.hpp's ReplayOp), for the GPU
// kernel (src/replay/replay.cu) and the CPU (the stand-in device,
// tests/workloads/cpu_rounds.hpp) alike.
//
// An allocation calls the case's allocator, stamps the block's first and last
// bytes with its id and publishes it in the table of blocks; a release takes
// its block from the table (waiting, within the kernel's deadline, where
// another thread of the same launch has yet to allocate it), checks the
// stamp (a block another one overlapped reads back wrong) and frees it.
#include <cstdint>

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

HEAPBENCH_HD inline void stamp_block(unsigned char* p, std::uint64_t size, std::uint64_t id) {
  for (std::uint64_t i = 0; i < size && i < kReplayStampEnds; ++i) p[i] = workloads::stamp_byte(id, i);
  for (std::uint64_t i = size > kReplayStampEnds ? size - kReplayStampEnds : 0; i < size; ++i) {
    p[i] = workloads::stamp_byte(id, i);
  }
}
HEAPBENCH_HD inline bool stamp_intact(const unsigned char* p, std::uint64_t size, std::uint64_t id) {
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

// One operation with allocator handle `a`; `sizes[id]` is each block's request
// (for the stamp at its release).
template <class A>
HEAPBENCH_HD inline ReplayStep replay_op(const A& a, const ReplayOp& op, void** table, const std::uint64_t* sizes) {
  ReplayStep s;
  if (op.kind == kAllocate) {
    void* p = a.allocate(op.size, op.align != 0 ? op.align : 16);
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
    s.corrupted = !stamp_intact(static_cast<const unsigned char*>(p), sizes[op.id], op.id);
    a.deallocate(p);
  }
  return s;
}

}  // namespace heapbench::trace
