#pragma once
// Reading a trace file (docs/trace.md, heapbench/trace_format.hpp) and turning
// it into what a replay runs: every thread's operations of every launch, each
// allocation numbered, each release naming the allocation it gives back.
// Plain C++, tested on the host with damaged and generated files.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "heapbench/trace_format.hpp"

namespace heapbench::trace {

// A file that is not a trace heapbench can read: one line, "FILE: what is
// wrong" (with the byte offset where a record is to blame).
struct TraceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Launch {
  LaunchHeader header;
  std::vector<Event> events;
  std::uint64_t blocks() const;   // grid x*y*z
  std::uint64_t threads_per_block() const;
};

struct Trace {
  FileHeader header;
  std::vector<Launch> launches;
  std::string content_hash;    // of the file's bytes (ContentHash, plan/input_file.hpp)
  std::string device() const;  // header.device up to its NUL
};

// Limits a reader holds a file to (absurd counts are refused, not allocated).
inline constexpr std::uint64_t kMaxTraceThreads = 1ull << 31;  // threads of one launch
inline constexpr std::uint64_t kMaxTraceSize = 1ull << 40;     // bytes of one request
// A replay plan holds kPlanBytesPerThread for every thread of every launch
// (and one more a launch), whether the thread records an event or not: a
// small file can ask for more than a machine has. read_trace refuses a trace
// whose plan would exceed plan_ceiling of its size in bytes, before anything
// is allocated: 1 GiB (2^27 threads) and as much again as the file holds.
inline constexpr std::uint64_t kPlanBytesPerThread = sizeof(std::uint64_t);
inline constexpr std::uint64_t plan_ceiling(std::uint64_t file_bytes) { return (1ull << 30) + file_bytes; }

// Reads and checks the whole file: a regular file (never a FIFO, pipe or
// device), the header, every launch record (its shape within kMaxTraceThreads,
// the plan within plan_ceiling), every event (its op, its thread inside the
// launch's shape, a power-of-two alignment, a size within kMaxTraceSize).
// With `pinned` (a content_hash an earlier read gave), a file that hashes
// differently, or no longer reads (one being written as it is read), is
// refused as changed: it was replaced during the run. Throws TraceError.
Trace read_trace(const std::string& path, const std::string& pinned = "");

// Writes `t` to `path` (through a temporary name and a rename): what the
// recorder writes, for tests and tools.
void write_trace(const std::string& path, const Trace& t);

// One operation of a replayed thread (24 bytes: what a replaying thread loads
// per event, and all it loads but the block's table entry at a release).
struct ReplayOp {
  std::uint64_t size;   // bytes asked for (an allocation), or the block's (a release: its stamp's ends)
  std::uint32_t id;     // the allocation: numbered over the whole trace
  std::uint32_t align;  // kAligned's alignment, else 0
  std::uint16_t kind;   // kAllocate or kRelease
  std::uint16_t recorded_null;  // the recording's call returned NULL (allocations)
  std::uint32_t floor;  // allocations: the block's place in the floor's arena, in kFloorUnit bytes (plan_floor)
};
enum ReplayKind : std::uint16_t { kAllocate = 0, kRelease = 1 };
inline constexpr std::uint64_t kFloorUnit = 16;  // the floor's blocks start and are rounded to 16 bytes
inline constexpr std::uint64_t kMaxFloorBytes = 0xffffffffull * kFloorUnit;  // ReplayOp::floor's reach (64 GiB)

struct ReplayLaunch {
  std::uint32_t grid[3], block[3];
  std::uint64_t threads = 0;             // grid x block
  std::vector<std::uint64_t> offsets;    // threads + 1: thread i's ops are ops[offsets[i] .. offsets[i+1])
  std::vector<ReplayOp> ops;
  std::uint64_t allocations = 0, releases = 0;
};

struct ReplayPlan {
  std::vector<ReplayLaunch> launches;
  std::uint64_t allocations = 0;      // numbered blocks (ids 0 .. allocations-1)
  std::uint64_t recorded_nulls = 0;   // allocations the recording got NULL for
  std::uint64_t unmatched_releases = 0;  // releases of an address no live recorded block had (not replayed)
  std::uint64_t peak_bytes = 0;       // most bytes the recording held live at once
  std::uint64_t max_size = 0;         // the largest request
  std::uint64_t max_threads = 0;      // the largest launch
  std::vector<std::uint32_t> live_at_end;  // blocks the recording never gave back (the replay frees them, untimed)
  // The floor (the same walk with no allocator, docs/trace.md): every block's
  // place in one arena, set by plan_floor.
  bool floor = true;               // false: the arena would need more than kMaxFloorBytes; no floor is measured
  std::uint64_t floor_bytes = 0;  // the arena's size
  std::uint64_t floor_align = kFloorUnit;  // what its base must be aligned to (the largest alignment asked for)
};

// What plan_replay makes: every launch's operations grouped by thread (what a
// replay runs), or only the counts, sizes and shapes (what listing the cases
// and advise need: no memory per thread; the floor's arena is planned all the
// same, from the operations held while plan_floor runs).
enum class PlanDetail { kOps, kShape };

// Numbers the allocations in the order they happened (launch by launch, by
// each event's clock, ties in file order) and pairs each release with the
// live block at its address; with kOps, groups every launch's operations by
// thread, in each thread's order. Throws TraceError for a trace that dropped
// events (its buffer filled: what it records is not the program) or records
// no allocation.
ReplayPlan plan_replay(const Trace& t, const std::string& path, PlanDetail detail = PlanDetail::kOps);

// One line saying how many releases the plan could not pair ("" for none):
// each a release of an address no live recorded block held (a double free, or
// a free of what the recorded allocator did not return), counted and not
// replayed.
std::string unmatched_note(const ReplayPlan& p, const std::string& path);

// The device memory a replay of `p` takes beside the heap, in bytes: what
// replay.cu allocates for it before its first launch -- every launch's thread
// offsets (kPlanBytesPerThread a thread, and one more) and operations
// (sizeof(ReplayOp) each), the blocks' table (a pointer an allocation), the
// release of the blocks the recording kept (one thread each) and the floor's
// arena (floor_bytes + floor_align, where a floor is measured). Taken from the
// plan's counts, so a PlanDetail::kShape plan gives what its kOps plan will
// allocate; saturates at 2^64 - 1. The read_trace ceiling bounds what the
// host may plan from a file's size; this is what the device must hold: the
// parent refuses a replay whose plan and heap pass the device's memory
// (src/orchestrate/run_plan.cpp, heapbench advise), and a round one that passes what the
// device has free (replay.cu), each in one line before anything is allocated.
std::uint64_t replay_device_bytes(const ReplayPlan& p);

// The one line refusing a replay of `path` whose plan (`plan_bytes`) does not
// fit beside `heap_bytes` in the device's `device_bytes` (`what`: "the 1024 MiB
// of device 0 (NAME)", "the 600 MiB free on device 0").
std::string device_memory_refusal(const std::string& path, std::uint64_t plan_bytes, std::uint64_t heap_bytes,
                                  const std::string& what);

// The floor's arena: gives every allocation the recording got a block for a
// place (ReplayOp::floor) such that no two blocks that can be live at once
// share a byte, in any order the replay's threads run: a block's space is
// taken again only by a block of a later launch than the one that releases it
// (launches run one after the other), never by one of the same launch, and the
// blocks the recording never released keep theirs. Each place is aligned to
// the block's alignment (at least kFloorUnit) from an arena aligned to
// floor_align. plan_replay calls it. Where the arena would need more than
// kMaxFloorBytes (a trace no GPU recorded: requests up to 2^40 bytes pass the
// reader), `floor` is false and the replay measures no floor.
void plan_floor(ReplayPlan& p);

// The replay axis' name for a trace file: its stem, letters, digits, '_' and '-'.
std::string trace_name_of_file(const std::string& path);

}  // namespace heapbench::trace
