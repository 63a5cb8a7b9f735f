// Trace files (docs/trace.md) on the host: the reader refuses every damaged
// file in one line, the plan numbers allocations in time order and pairs each
// release with its block, and the CPU replay (tests/workloads/cpu_rounds.hpp)
// runs a plan, a block handed out twice coming out as an error.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <fstream>
#include <string>
#include <vector>

#include "cpu_rounds.hpp"
#include "cases/case_naming.hpp"
#include "test_paths.hpp"
#include "cases/case_input.hpp"
#include "cases/catalog.hpp"
#include "replay/replay_body.hpp"
#include "replay/replay_metrics.hpp"
#include "replay/trace_reader.hpp"

namespace heapbench::trace {
namespace {

Trace make_trace(std::uint32_t threads) {
  Trace t{};
  std::memcpy(t.header.magic, kMagic, sizeof kMagic);
  t.header.version = kVersion;
  t.header.header_bytes = sizeof(FileHeader);
  t.header.launch_header_bytes = sizeof(LaunchHeader);
  t.header.event_bytes = sizeof(Event);
  t.header.heap_bytes = 8u << 20;
  std::strncpy(t.header.device, "test device", sizeof t.header.device);
  for (std::uint32_t l = 0; l < 2; ++l) {
    Launch launch{};
    launch.header = {kLaunchTag, l, {(threads + 31) / 32, 1, 1}, {32, 1, 1}, 0, 0};
    t.launches.push_back(launch);
  }
  // Launch 0: thread i allocates 48 + i bytes; launch 1: thread i frees thread (i+1)'s block.
  for (std::uint32_t i = 0; i < threads; ++i) {
    t.launches[0].events.push_back({0x10000ull + 0x100 * i, 48 + i, 100 + i, i / 32, i % 32, 0, kMalloc});
    const std::uint32_t j = (i + 1) % threads;
    t.launches[1].events.push_back({0x10000ull + 0x100 * j, 0, 1000 + i, i / 32, i % 32, 0, kFree});
  }
  return t;
}

std::string path_of(const std::string& name) { return testing::own_temp_path(name); }

std::string written(const Trace& t, const std::string& name = "t.hbt") {
  const std::string p = path_of(name);
  write_trace(p, t);
  return p;
}

// The message read_trace gives for the file's bytes changed by `damage`, or "".
template <class Damage>
std::string damaged(Damage damage) {
  const std::string p = written(make_trace(64));
  std::string bytes;
  {
    std::ifstream in(p, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  damage(bytes);
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
  try {
    read_trace(p);
  } catch (const TraceError& e) {
    return e.what();
  }
  return "";
}

TEST(TraceFile, WritingNeverFollowsALinkAtItsTemporaryName) {
  // A link planted at "<path>.tmp" is removed, not written through: its target keeps its bytes.
  const std::string target = path_of("link-target.txt");
  std::ofstream(target, std::ios::trunc) << "keep me";
  const std::string p = path_of("linked.hbt");
  std::remove((p + ".tmp").c_str());
  ASSERT_EQ(::symlink(target.c_str(), (p + ".tmp").c_str()), 0);
  write_trace(p, make_trace(8));
  std::ifstream in(target);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "keep me");
  EXPECT_EQ(read_trace(p).launches.size(), 2u);
}

TEST(TraceFile, WhatIsWrittenReadsBack) {
  const Trace t = make_trace(100);
  const Trace back = read_trace(written(t));
  EXPECT_EQ(back.device(), "test device");
  ASSERT_EQ(back.launches.size(), 2u);
  EXPECT_EQ(back.launches[1].events.size(), 100u);
  EXPECT_EQ(back.launches[0].events[7].size, 55u);
  EXPECT_EQ(back.launches[0].blocks(), 4u);
}

TEST(TraceFile, EveryDamagedFileIsOneLineAndNoCrash) {
  const std::size_t first_launch = sizeof(FileHeader), first_event = first_launch + sizeof(LaunchHeader);
  const std::pair<std::function<void(std::string&)>, std::string> cases[] = {
      {[](std::string& b) { b.resize(10); }, "shorter than a trace's 64-byte header"},
      {[](std::string& b) { b[0] = 'X'; }, "not a heapbench trace"},
      {[](std::string& b) { b[8] = 9; }, "trace format version 9"},
      {[](std::string& b) { b[20] = 41; }, "record sizes"},
      {[&](std::string& b) { b[first_launch] = 'X'; }, "launch 0 at byte 64: not a launch record"},
      {[&](std::string& b) { b[first_launch + 4] = 5; }, "numbered 5, not 0"},
      {[&](std::string& b) { std::memset(&b[first_launch + 8], 0, 4); }, "a grid or block dimension of 0"},
      {[&](std::string& b) { b[first_launch + 21] = 0x7f; }, "threads per block, more than CUDA's 1024"},
      {[&](std::string& b) { b[first_launch + 39] = 0x7f; }, "claims"},
      {[](std::string& b) { b.resize(b.size() - 17); }, "claims 64 events but only 2543 bytes remain"},
      {[](std::string& b) { b += "0123456789"; }, "10 stray bytes"},
      {[&](std::string& b) { b[first_event + 36] = 9; }, "operation 9 is none of 1-5"},
      {[&](std::string& b) { b[first_event + 27] = 0x10; }, "is outside the launch's"},
      {[&](std::string& b) { b[first_event + 15] = 0x7f; }, "a request of"},
      {[&](std::string& b) {
         b[first_event + 36] = 3;  // aligned
         b[first_event + 32] = 48;
       },
       "alignment 48 is not a power of two"},
  };
  for (const auto& [damage, expected] : cases) {
    const std::string why = damaged(damage);
    EXPECT_NE(why.find(expected), std::string::npos) << "expected '" << expected << "', got: " << why;
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  }
  EXPECT_EQ(damaged([](std::string&) {}), "");
}

TEST(TraceFile, AFileThatCannotBeOpenedSaysSo) {
  EXPECT_THROW(read_trace("/nonexistent/t.hbt"), TraceError);
}

TEST(ReplayPlan, AllocationsAreNumberedAndReleasesFindTheirBlocks) {
  const ReplayPlan p = plan_replay(make_trace(64), "t.hbt");
  EXPECT_EQ(p.allocations, 64u);
  EXPECT_EQ(p.max_size, 48u + 63);
  EXPECT_EQ(p.max_threads, 64u);
  EXPECT_EQ(p.peak_bytes, 64u * 48 + 63 * 64 / 2);
  EXPECT_TRUE(p.live_at_end.empty());
  ASSERT_EQ(p.launches.size(), 2u);
  const ReplayLaunch& frees = p.launches[1];
  ASSERT_EQ(frees.ops.size(), 64u);
  EXPECT_EQ(frees.ops[frees.offsets[5]].kind, kRelease);
  EXPECT_EQ(frees.ops[frees.offsets[5]].id, 6u);   // thread 5 frees thread 6's block
  EXPECT_EQ(frees.ops[frees.offsets[63]].id, 0u);  // the last the first's
  EXPECT_EQ(frees.ops[frees.offsets[5]].size, 48u + 6);  // a release carries its block's size (its stamp's ends)
}

TEST(ReplayPlan, AnAddressUsedAgainIsANewBlockAndStrayFreesAreCounted) {
  Trace t = make_trace(2);
  t.launches[0].events = {{0x100, 16, 1, 0, 0, 0, kMalloc}, {0x100, 0, 2, 0, 0, 0, kFree},
                          {0x100, 32, 3, 0, 1, 0, kMalloc}, {0x900, 0, 4, 0, 1, 0, kFree},
                          {0, 64, 5, 0, 1, 0, kMalloc}};
  t.launches[1].events.clear();
  const ReplayPlan p = plan_replay(t, "t.hbt");
  EXPECT_EQ(p.allocations, 3u);
  EXPECT_EQ(p.recorded_nulls, 1u);
  EXPECT_EQ(p.unmatched_releases, 1u);
  EXPECT_EQ(p.live_at_end, (std::vector<std::uint32_t>{1}));
  EXPECT_EQ(p.peak_bytes, 32u);
}

TEST(ReplayPlan, TheShapeAloneHasTheCountsAndNoMemoryPerThread) {
  // Issue 53, G5: listing the cases of 2^27 threads planned 16 B a thread (2.1 GB).
  const ReplayPlan full = plan_replay(make_trace(64), "t.hbt");
  const ReplayPlan shape = plan_replay(make_trace(64), "t.hbt", PlanDetail::kShape);
  EXPECT_EQ(shape.allocations, full.allocations);
  EXPECT_EQ(shape.max_threads, full.max_threads);
  EXPECT_EQ(shape.max_size, full.max_size);
  EXPECT_EQ(shape.peak_bytes, full.peak_bytes);
  ASSERT_EQ(shape.launches.size(), 2u);
  EXPECT_EQ(shape.launches[1].releases, 64u);
  EXPECT_TRUE(shape.launches[0].offsets.empty() && shape.launches[0].ops.empty());
  // The full plan: each thread's operations in its own order, offsets[t] .. offsets[t + 1].
  const ReplayLaunch& allocs = full.launches[0];
  ASSERT_EQ(allocs.offsets.size(), 65u);
  for (std::uint32_t t = 0; t < 64; ++t) {
    ASSERT_EQ(allocs.offsets[t + 1] - allocs.offsets[t], 1u);
    EXPECT_EQ(allocs.ops[allocs.offsets[t]].size, 48u + t);
  }
}

TEST(ReplayPlan, TheDeviceBytesAreWhatTheReplayAllocatesAndTheShapeKnowsThem) {
  // Issue 53, G5's device side: a plan within the reader's ceiling can still pass a
  // device's memory; the parent judges it from the shape alone, before anything is allocated.
  Trace t = make_trace(64);
  t.launches[1].events.resize(40);  // 24 blocks kept to the end: the tail's release
  const ReplayPlan full = plan_replay(t, "t.hbt");
  const ReplayPlan shape = plan_replay(t, "t.hbt", PlanDetail::kShape);
  std::uint64_t buffers = 0;  // what replay.cu's ReplayRound allocates, buffer by buffer
  for (const ReplayLaunch& l : full.launches) {
    buffers += l.offsets.size() * sizeof(std::uint64_t) + l.ops.size() * sizeof(ReplayOp);
  }
  buffers += full.allocations * sizeof(void*);
  ASSERT_EQ(full.live_at_end.size(), 24u);
  buffers += (full.live_at_end.size() + 1) * sizeof(std::uint64_t) + full.live_at_end.size() * sizeof(ReplayOp);
  ASSERT_TRUE(full.floor);
  buffers += full.floor_bytes + full.floor_align;
  EXPECT_EQ(replay_device_bytes(full), buffers);
  EXPECT_EQ(shape.floor_bytes, full.floor_bytes);  // the shape plans the floor's arena too
  EXPECT_EQ(replay_device_bytes(shape), buffers);
  // 2^27 threads: within the ceiling of a small file, past a 1 GiB device with any heap.
  Trace wide = make_trace(1);
  wide.launches[0].header.grid[0] = 1u << 22;
  wide.launches.resize(1);
  const ReplayPlan w = plan_replay(wide, "w.hbt", PlanDetail::kShape);
  EXPECT_GT(replay_device_bytes(w), 1ull << 30);
  EXPECT_EQ(device_memory_refusal("w.hbt", replay_device_bytes(w), 8ull << 20, "the 1024 MiB of device 0 (d)"),
            "w.hbt: a replay of it takes 1025 MiB of device memory for its plan (its launches' threads and operations, "
            "the blocks' table, the floor's arena) beside the 8 MiB heap: more than the 1024 MiB of device 0 (d)");
  // A plan's sum saturates rather than wraps.
  ReplayPlan huge = shape;
  huge.floor_bytes = ~std::uint64_t{0} - 8;
  EXPECT_EQ(replay_device_bytes(huge), ~std::uint64_t{0});
}

TEST(ReplayPlan, AThreadsOperationsKeepTheirOrderAndIdleThreadsHaveNone) {
  Trace t = make_trace(2);
  t.launches[0].events = {{0x100, 16, 9, 0, 5, 0, kMalloc}, {0x200, 24, 1, 0, 2, 0, kMalloc},
                          {0x100, 0, 10, 0, 5, 0, kFree}, {0x300, 8, 3, 0, 5, 0, kMalloc}};
  t.launches[1].events.clear();
  const ReplayPlan p = plan_replay(t, "t.hbt");
  const ReplayLaunch& l = p.launches[0];
  ASSERT_EQ(l.offsets.size(), 33u);
  EXPECT_EQ(l.offsets[2], 0u);
  EXPECT_EQ(l.offsets[3] - l.offsets[2], 1u);  // thread 2: one
  EXPECT_EQ(l.offsets[6] - l.offsets[5], 3u);  // thread 5: three, in file order
  EXPECT_EQ(l.offsets[32], 4u);
  EXPECT_EQ(l.ops[l.offsets[5]].size, 16u);
  EXPECT_EQ(l.ops[l.offsets[5] + 1].kind, kRelease);
  EXPECT_EQ(l.ops[l.offsets[5] + 2].size, 8u);
}

TEST(TraceFile, ATraceReplacedSinceItWasPinnedIsRefused) {
  // Issue 53, G6: a round reads the file again; one that hashes otherwise is not the one the run planned.
  const std::string p = written(make_trace(8), "pinned.hbt");
  const std::string hash = read_trace(p).content_hash;
  EXPECT_EQ(hash.size(), 16u);
  EXPECT_EQ(read_trace(p, hash).launches.size(), 2u);
  Trace other = make_trace(8);
  other.launches[0].events[3].size = 4096;
  write_trace(p, other);
  try {
    read_trace(p, hash);
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("changed since this run first read it"), std::string::npos) << e.what();
  }
}

TEST(TraceFile, APinnedTraceThatNoLongerReadsIsChangedNotDamaged) {
  // A child's round met a file being written: it is not the file the run read, which read whole.
  const std::string p = written(make_trace(8), "half.hbt");
  const std::string hash = read_trace(p).content_hash;
  std::ofstream(p, std::ios::trunc).close();
  try {
    read_trace(p, hash);
    FAIL();
  } catch (const TraceError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("changed since this run first read it (content hash " + hash + "; now: "), std::string::npos)
        << what;
    EXPECT_NE(what.find("0 bytes, shorter than a trace's 64-byte header"), std::string::npos) << what;
  }
  try {
    read_trace(p);
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_EQ(std::string(e.what()).find("changed"), std::string::npos) << "unpinned, it is only damaged: " << e.what();
  }
}

TEST(TraceFile, ProductsThatWrapAndPlansOverTheCeilingAreRefusedInOneLine) {
  // Issue 53, G4 and G5: a block of 2^31 x 2^31 x 4 threads wrapped to 0 (SIGFPE); 2^31 threads in a
  // 152-byte file planned 32 GiB.
  const std::pair<LaunchHeader, std::string> cases[] = {
      {{kLaunchTag, 0, {1, 1, 1}, {1u << 31, 1u << 31, 4}, 0, 0}, "threads per block, more than CUDA's 1024"},
      {{kLaunchTag, 0, {1u << 31, 1u << 31, 4}, {1, 1, 1}, 0, 0}, "more than the 2147483648 threads"},
      {{kLaunchTag, 0, {0xffffffffu, 0xffffffffu, 0xffffffffu}, {1, 1, 1}, 0, 0}, "more than the 2147483648 threads"},
      {{kLaunchTag, 0, {1u << 21, 1, 1}, {1024, 1, 1}, 0, 0}, "more than the 1024 MiB a 112-byte trace may ask for"},
  };
  for (const auto& [header, expected] : cases) {
    Trace t = make_trace(1);
    t.launches.resize(1);
    t.launches[0].header = header;
    t.launches[0].events.clear();
    const std::string p = written(t, "wrap.hbt");
    try {
      read_trace(p);
      ADD_FAILURE() << "accepted: " << expected;
    } catch (const TraceError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
  }
}

TEST(TraceFile, SpecialFilesAreRefusedBeforeTheyAreOpened) {
  // Issue 53, G7: a FIFO hung the reader (its open waits for a writer); /dev/zero never ends.
  const std::string fifo = path_of("fifo.hbt");
  std::remove(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const auto& [path, kind] : {std::pair<std::string, std::string>{fifo, "a FIFO or pipe"},
                                   {"/dev/zero", "a character device"}, {"/tmp", "a folder"}}) {
    try {
      read_trace(path);
      ADD_FAILURE() << path;
    } catch (const TraceError& e) {
      EXPECT_NE(std::string(e.what()).find("is " + kind + ", not a regular file"), std::string::npos) << e.what();
    }
  }
}

TEST(ReplayPlan, ATraceThatDroppedEventsOrHasNoAllocationIsRefused) {
  Trace t = make_trace(4);
  t.launches[1].header.dropped = 3;
  try {
    plan_replay(t, "t.hbt");
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("dropped 3 events"), std::string::npos);
  }
  Trace empty = make_trace(4);
  for (auto& l : empty.launches) l.events.clear();
  EXPECT_THROW(plan_replay(empty, "t.hbt"), TraceError);
}

Case replay_case(const std::string& file) {
  Case c = make_case("replay", "malloc", 111, 0, 64, 8 * kMiB);
  c.trace = "t";
  set_input(c, file, "");
  return c;
}

std::string cpu_replay(const Case& c, workloads::cpu::Break b) {
  auto r = workloads::cpu::make_round(c, b);
  r->begin();
  r->allocate();
  r->use();
  return r->collect().problem(5.0);
}

TEST(ReplayOnTheCpu, AReleaseWaitsForItsBlockAndAnOverlapIsAnError) {
  Trace t = make_trace(64);
  // Thread 0 of launch 1 also frees a block thread 63 allocates after it in the same launch.
  t.launches[1].events.push_back({0x77000, 40, 5000, 1, 31, 0, kMalloc});
  t.launches[1].events.insert(t.launches[1].events.begin(), Event{0x77000, 0, 4000, 0, 0, 0, kFree});
  t.launches[1].events.front().clock = 6000;  // after the allocation in time
  const Case c = replay_case(written(t, "wait.hbt"));
  EXPECT_EQ(cpu_replay(c, workloads::cpu::Break::none), "");
  EXPECT_NE(cpu_replay(c, workloads::cpu::Break::overlap).find("did not read back"), std::string::npos);
}

TEST(ReplayOnTheCpu, AHeapTooSmallGivesNullsTheRecordingDidNotHave) {
  Case c = replay_case(written(make_trace(64), "small.hbt"));
  c.limit_bytes = 1024;
  auto r = workloads::cpu::make_round(c, workloads::cpu::Break::none);
  r->begin();
  r->allocate();
  r->use();
  const IterationResult res = r->collect();
  EXPECT_EQ(res.problem(5.0), "");
  EXPECT_LT(res.tally.successes, res.tally.attempts);
}

// The floor (issue 52): the walk with no allocator hands out places from the
// plan, and no order of the replay's threads may make two live blocks meet.
TEST(ReplayFloor, BlocksThatCanBeLiveAtOnceNeverShareAByteAndLaterLaunchesTakeFreedSpace) {
  Trace t = make_trace(64);
  Launch third = t.launches[1];
  third.header.launch = 2;
  third.events.clear();
  for (std::uint32_t i = 0; i < 64; ++i) {
    // Launch 1: every other thread also takes a 256-aligned block, and frees one it takes in the same launch.
    if (i % 2 == 0) t.launches[1].events.push_back({0x900000ull + 0x1000 * i, 40, 2000 + i, i / 32, i % 32, 256, kAligned});
    t.launches[1].events.push_back({0xa00000ull + 0x100 * i, 24, 3000 + i, i / 32, i % 32, 0, kMalloc});
    t.launches[1].events.push_back({0xa00000ull + 0x100 * i, 0, 3001 + i, i / 32, i % 32, 0, kFree});
    // Launch 2: 100 B each, which launch 0's blocks (freed in launch 1) have room for.
    third.events.push_back({0xb00000ull + 0x100 * i, 100, 4000 + i, i / 32, i % 32, 0, kMalloc});
  }
  t.launches[1].events.push_back({0, 64, 2500, 0, 0, 0, kMalloc});  // the recording's NULL: no place
  t.launches.push_back(third);
  const ReplayPlan p = plan_replay(t, "t.hbt");
  struct Block {
    std::size_t from, to;  // the launches it can be live in
    std::uint64_t start, end, align;
    bool placed;
  };
  std::vector<Block> blocks(p.allocations, Block{0, ~std::size_t{0}, 0, 0, 0, false});
  std::uint64_t asked = 0;
  for (std::size_t l = 0; l < p.launches.size(); ++l) {
    for (const ReplayOp& op : p.launches[l].ops) {
      Block& b = blocks[op.id];
      if (op.kind == kRelease) {
        b.to = l;
      } else if (op.recorded_null == 0) {
        b = {l, b.to, op.floor * kFloorUnit, op.floor * kFloorUnit + std::max<std::uint64_t>(op.size, 1),
             std::max<std::uint64_t>(op.align, 16), true};
        asked += (op.size + 15) / 16 * 16;
      }
    }
  }
  std::size_t placed = 0;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const Block& a = blocks[i];
    if (!a.placed) continue;
    ++placed;
    EXPECT_EQ(a.start % a.align, 0u) << "block " << i;
    EXPECT_LE(a.end, p.floor_bytes) << "block " << i;
    for (std::size_t j = i + 1; j < blocks.size(); ++j) {
      const Block& b = blocks[j];
      if (!b.placed || a.to < b.from || b.to < a.from) continue;  // never live in one launch
      EXPECT_TRUE(a.end <= b.start || b.end <= a.start) << "blocks " << i << " and " << j << " can meet";
    }
  }
  EXPECT_EQ(placed, p.allocations - 1);  // all but the recorded NULL
  EXPECT_EQ(p.floor_align, 256u);
  EXPECT_LT(p.floor_bytes, asked) << "launch 2 takes the space launch 0's blocks left";
}

TEST(ReplayFloor, TheFloorMakesTheSameChecks) {
  alignas(16) unsigned char arena[256] = {};
  const FloorAddresses f{arena};
  std::vector<void*> table(3, HB_REPLAY_PENDING);
  // Block 1 is placed over block 0's last bytes (a plan gone wrong): block 0's stamp does not read back.
  EXPECT_EQ(replay_op(f, ReplayOp{48, 0, 0, kAllocate, 0, 0}, table.data()).misaligned, 0u);
  replay_op(f, ReplayOp{16, 1, 0, kAllocate, 0, 2}, table.data());
  EXPECT_EQ(replay_op(f, ReplayOp{48, 0, 0, kRelease, 0, 0}, table.data()).corrupted, 1u);
  EXPECT_EQ(replay_op(f, ReplayOp{16, 1, 0, kRelease, 0, 0}, table.data()).corrupted, 0u);
  EXPECT_EQ(replay_op(f, ReplayOp{16, 2, 0, kRelease, 0, 0}, table.data()).waiting, 1u);
  EXPECT_EQ(replay_op(f, ReplayOp{16, 2, 0, kAllocate, 1, 4}, table.data()).null, 1u) << "NULL where the recording's was";
}

TEST(ReplayFloor, StampsInWordsAreTheBytesStampByteGives) {
  alignas(16) unsigned char words[80] = {}, bytes[81] = {};
  for (std::uint64_t size : {8u, 13u, 16u, 40u, 72u}) {
    stamp_block(words, size, 12345);
    stamp_block(bytes + 1, size, 12345);  // not 8-byte aligned: byte by byte
    for (std::uint64_t i = 0; i < size; ++i) {
      if (i < 8 || i + 8 >= size) EXPECT_EQ(words[i], workloads::stamp_byte(12345, i)) << size << " " << i;
    }
    EXPECT_EQ(std::memcmp(words, bytes + 1, size), 0) << size;
    EXPECT_TRUE(stamp_intact(words, size, 12345));
    EXPECT_FALSE(stamp_intact(words, size, 12346));
  }
}

// `rounds` rounds of a replay case on the stand-in, each checked, and the counters of their reducer.
Counters replayed_counters(const Case& c, int rounds) {
  auto r = workloads::cpu::make_round(c, workloads::cpu::Break::none);
  auto reducer = r->reducer();
  for (int round = 0; round < rounds; ++round) {
    r->begin();
    r->allocate();
    r->use();
    const IterationResult res = r->collect();
    EXPECT_EQ(res.problem(5.0), "");
    reducer->add(res);
  }
  Counters out;
  reducer->write_counters(out);
  return out;
}

TEST(ReplayOnTheCpu, EachRoundMeasuresItsFloorBeside) {
  Counters out = replayed_counters(replay_case(written(make_trace(64), "floor.hbt")), 2);
  ASSERT_TRUE(out.count("floor_s") && out.count("net_launch_s")) << "no floor counters";
  EXPECT_GT(out["floor_s"], 0.0);
  EXPECT_NEAR(out["net_launch_s"], out["launch_s"] - out["floor_s"], 1e-9 * out["launch_s"]);
  ASSERT_TRUE(out.count("empty_launch_s")) << "no empty launch's time beside the floor";
  EXPECT_GE(out["empty_launch_s"], 0.0);
}

TEST(ReplayFloor, ATraceTooLargeForTheArenaReplaysWithoutAFloor) {
  // A request of 2^40 bytes passes the reader (a fuzzed trace did): it cannot refuse the trace, nor be floored.
  Trace t = make_trace(64);
  t.launches[0].events[3].size = kMaxTraceSize;
  const std::string file = written(t, "huge.hbt");
  EXPECT_FALSE(plan_replay(t, file).floor);
  Counters out = replayed_counters(replay_case(file), 1);
  EXPECT_TRUE(out.count("launch_s"));
  EXPECT_FALSE(out.count("floor_s") || out.count("net_launch_s")) << "no floor, no figure of one";
}

}  // namespace
}  // namespace heapbench::trace

// Issue 51: a launch recorded without its shape (heapbench::app::Report, which
// brackets a launch() of one or several kernels it cannot see) takes the
// smallest linear shape that holds every event's block and thread: the replay
// runs each recorded thread at its recorded linear indices.
namespace heapbench::trace {
namespace {

TEST(ShapeFromEvents, TheSmallestLinearShapeThatHoldsEveryEvent) {
  std::vector<Event> e(3);
  e[0].block = 4, e[0].thread = 31;
  e[1].block = 0, e[1].thread = 255;
  e[2].block = 9, e[2].thread = 0;
  const LaunchShape s = shape_of_events(e.data(), e.size());
  EXPECT_EQ(s.grid[0], 10u);
  EXPECT_EQ(s.grid[1], 1u);
  EXPECT_EQ(s.grid[2], 1u);
  EXPECT_EQ(s.block[0], 256u);
  EXPECT_EQ(s.block[1], 1u);
  EXPECT_EQ(s.block[2], 1u);
  // Every event's indices lie inside it, as the readers check them.
  for (const Event& ev : e) {
    EXPECT_LT(ev.block, s.grid[0] * s.grid[1] * s.grid[2]);
    EXPECT_LT(ev.thread, s.block[0] * s.block[1] * s.block[2]);
  }
}

TEST(ShapeFromEvents, NoEventsIsNoShape) {
  const LaunchShape s = shape_of_events(nullptr, 0);
  EXPECT_EQ(s.grid[0], 0u);  // nothing to replay: the Report appends no launch for it
  EXPECT_EQ(s.block[0], 0u);
}

}  // namespace
}  // namespace heapbench::trace
