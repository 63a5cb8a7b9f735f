#pragma once
// The trace file (docs/trace.md): what heapbench/trace.cuh records of a
// program's allocations and `heapbench replay` runs again against every
// allocator. Plain C++: the recorder (trace.cuh), the C++ reader
// (src/replay/trace_reader.hpp) and the Python one (plot/heapbench_plot/reader/trace_file.py) share these
// layouts. Little-endian, no padding between records:
//
//   FileHeader                      once
//   { LaunchHeader, Event x events } once per recorded launch, in launch order
//
// A launch's events are in the order the device appended them: one thread's
// events in its program order (each thread appends its own, one at a time),
// different threads' interleaved as they happened.
#include <cstdint>

namespace heapbench::trace {

inline constexpr char kMagic[8] = {'H', 'B', 'T', 'R', 'A', 'C', 'E', '\0'};
inline constexpr std::uint32_t kVersion = 1;
inline constexpr std::uint32_t kLaunchTag = 0x48434e4cu;  // the bytes "LNCH" in the file

enum Op : std::uint32_t {
  kMalloc = 1,   // malloc(size)
  kFree = 2,     // free(address)
  kAligned = 3,  // __nv_aligned_device_malloc(size, align)
  kNew = 4,      // operator new[](size)
  kDelete = 5,   // operator delete[](address)
};
inline constexpr bool is_allocation(std::uint32_t op) { return op == kMalloc || op == kAligned || op == kNew; }
inline constexpr bool is_release(std::uint32_t op) { return op == kFree || op == kDelete; }

struct FileHeader {
  char magic[8];
  std::uint32_t version;
  std::uint32_t header_bytes;         // sizeof(FileHeader)
  std::uint32_t launch_header_bytes;  // sizeof(LaunchHeader)
  std::uint32_t event_bytes;          // sizeof(Event)
  std::uint64_t heap_bytes;           // cudaLimitMallocHeapSize while recording (0: unknown)
  char device[32];                    // the GPU's name, NUL-padded
};

struct LaunchHeader {
  std::uint32_t tag;      // kLaunchTag
  std::uint32_t launch;   // 0, 1, 2, ... in file order
  std::uint32_t grid[3];  // gridDim
  std::uint32_t block[3]; // blockDim
  std::uint64_t events;   // Event records that follow
  std::uint64_t dropped;  // events the launch made that the buffer had no room for
};

struct Event {
  std::uint64_t address;  // what the allocation returned (0: NULL), or what was freed
  std::uint64_t size;     // bytes asked for (0 for a release)
  std::uint64_t clock;    // %globaltimer, ns
  std::uint32_t block;    // linear block index in the grid
  std::uint32_t thread;   // linear thread index in the block
  std::uint32_t align;    // kAligned's alignment; 0 otherwise
  std::uint32_t op;       // Op
};

// A launch's shape taken from its events, for a launch recorded without one
// (heapbench::app::Report brackets a launch() that may run several kernels it
// cannot see): grid (the largest linear block index + 1, 1, 1), block (the
// largest linear thread index + 1, 1, 1). The replay runs each thread at its
// recorded linear indices, so a 2-D or 3-D launch replays the same; threads
// past the last one that recorded an event are not launched. No events: a
// shape of zeros (no launch to append: the readers refuse a dimension of 0).
struct LaunchShape {
  std::uint32_t grid[3];
  std::uint32_t block[3];
};
inline LaunchShape shape_of_events(const Event* events, std::uint64_t count) {
  if (count == 0) return LaunchShape{{0, 0, 0}, {0, 0, 0}};
  std::uint32_t block = 0, thread = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    if (events[i].block > block) block = events[i].block;
    if (events[i].thread > thread) thread = events[i].thread;
  }
  return LaunchShape{{block + 1, 1, 1}, {thread + 1, 1, 1}};
}

static_assert(sizeof(FileHeader) == 64, "docs/trace.md gives the header as 64 bytes");
static_assert(sizeof(LaunchHeader) == 48, "docs/trace.md gives a launch header as 48 bytes");
static_assert(sizeof(Event) == 40, "docs/trace.md gives an event as 40 bytes");

}  // namespace heapbench::trace
