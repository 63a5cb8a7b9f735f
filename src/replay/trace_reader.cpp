#include "replay/trace_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <numeric>

#include "run/input_file.hpp"
#include "run/parse.hpp"
#include "results/results_file.hpp"  // write_atomically

namespace heapbench::trace {

std::uint64_t Launch::blocks() const {
  return std::uint64_t{header.grid[0]} * header.grid[1] * header.grid[2];
}
std::uint64_t Launch::threads_per_block() const {
  return std::uint64_t{header.block[0]} * header.block[1] * header.block[2];
}

std::string Trace::device() const { return std::string(header.device, strnlen(header.device, sizeof header.device)); }

namespace {

std::uint64_t add_saturated(std::uint64_t a, std::uint64_t b) { return a > ~std::uint64_t{0} - b ? ~std::uint64_t{0} : a + b; }

// The file's bytes, read in records; every short read is the file's end. A
// regular file only, its size known before it is opened (a FIFO, a pipe or a
// device is refused: read_trace never waits on one or reads one forever).
class Bytes {
 public:
  Bytes(const std::string& path) : path_(shown_path(path)) {
    try {
      size_ = regular_input_size(path);
    } catch (const InputFileError& e) {
      throw TraceError(e.what());
    }
    in_.open(path, std::ios::binary);
    if (!in_) throw TraceError(fmt::format("{}: cannot be opened for reading", path_));
  }
  template <class T>
  bool read(T& out) {
    if (left() < sizeof(T)) return false;
    in_.read(reinterpret_cast<char*>(&out), sizeof(T));
    if (!in_) throw fail("read failed");
    hash_.add(&out, sizeof(T));
    at_ += sizeof(T);
    return true;
  }
  template <class T>
  void read_many(std::vector<T>& out, std::uint64_t n) {
    out.resize(n);
    in_.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(n * sizeof(T)));
    if (!in_) throw fail("read failed");
    hash_.add(out.data(), n * sizeof(T));
    at_ += n * sizeof(T);
  }
  std::uint64_t left() const { return size_ - at_; }
  std::uint64_t size() const { return size_; }
  std::string hash() const { return hash_.hex(); }
  std::uint64_t at() const { return at_; }
  TraceError fail(const std::string& why) const { return TraceError(fmt::format("{}: {}", path_, why)); }

 private:
  std::string path_;
  std::ifstream in_;
  std::uint64_t size_ = 0, at_ = 0;
  ContentHash hash_;  // of every byte read
};

void check_header(Bytes& b, const FileHeader& h) {
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) {
    throw b.fail("not a heapbench trace (it does not start with HBTRACE; docs/trace.md)");
  }
  if (h.version != kVersion) {
    throw b.fail(fmt::format("trace format version {}; this heapbench reads version {}", h.version, kVersion));
  }
  if (h.header_bytes != sizeof(FileHeader) || h.launch_header_bytes != sizeof(LaunchHeader) ||
      h.event_bytes != sizeof(Event)) {
    throw b.fail(fmt::format("record sizes {}/{}/{} bytes, not the version's {}/{}/{}", h.header_bytes,
                             h.launch_header_bytes, h.event_bytes, sizeof(FileHeader), sizeof(LaunchHeader),
                             sizeof(Event)));
  }
}

// Checks a launch record; `planned` is the threads of the launches before it,
// and becomes theirs and this one's. Every product is taken in 128 bits (three
// u32 dimensions multiply to less than 2^96): nothing wraps.
void check_launch(Bytes& b, const Launch& l, std::uint64_t offset, std::uint32_t index, std::uint64_t& planned) {
  const LaunchHeader& h = l.header;
  const auto fail = [&](const std::string& why) { return b.fail(fmt::format("launch {} at byte {}: {}", index, offset, why)); };
  if (h.tag != kLaunchTag) throw fail("not a launch record (no LNCH tag)");
  if (h.launch != index) throw fail(fmt::format("numbered {}, not {}", h.launch, index));
  for (int k = 0; k < 3; ++k) {
    if (h.grid[k] == 0 || h.block[k] == 0) throw fail("a grid or block dimension of 0");
  }
  using u128 = unsigned __int128;
  const u128 per_block = u128{h.block[0]} * h.block[1] * h.block[2];
  const u128 blocks = u128{h.grid[0]} * h.grid[1] * h.grid[2];
  if (per_block > 1024) throw fail(fmt::format("{} threads per block, more than CUDA's 1024", per_block));
  if (blocks * per_block > kMaxTraceThreads) {
    throw fail(fmt::format("{} blocks x {} threads, more than the {} threads heapbench replays", blocks, per_block,
                           kMaxTraceThreads));
  }
  planned += static_cast<std::uint64_t>(blocks * per_block) + 1;  // at most 2^31 + 1 a launch, 2^32 launches
  const u128 need = u128{planned} * kPlanBytesPerThread;
  if (need > plan_ceiling(b.size())) {
    throw fail(fmt::format("{} blocks x {} threads: with the launches before it, a replay plan of {} MiB ({} B a "
                           "thread), more than the {} MiB a {}-byte trace may ask for (1 GiB and the file's size; "
                           "docs/trace.md)",
                           blocks, per_block, need >> 20, kPlanBytesPerThread, plan_ceiling(b.size()) >> 20, b.size()));
  }
  if (h.events > b.left() / sizeof(Event)) {
    throw fail(fmt::format("claims {} events but only {} bytes remain (the file is cut short or damaged)", h.events,
                           b.left()));
  }
}

void check_event(Bytes& b, const Launch& l, const Event& e, std::uint64_t k) {
  const auto fail = [&](const std::string& why) {
    return b.fail(fmt::format("launch {} event {}: {}", l.header.launch, k, why));
  };
  if (!is_allocation(e.op) && !is_release(e.op)) throw fail(fmt::format("operation {} is none of 1-5", e.op));
  if (e.block >= l.blocks() || e.thread >= l.threads_per_block()) {
    throw fail(fmt::format("thread {} of block {} is outside the launch's {} blocks x {} threads", e.thread, e.block,
                           l.blocks(), l.threads_per_block()));
  }
  if (is_allocation(e.op) && e.size > kMaxTraceSize) throw fail(fmt::format("a request of {} bytes", e.size));
  if (e.op == kAligned && (e.align == 0 || (e.align & (e.align - 1)) != 0)) {
    throw fail(fmt::format("alignment {} is not a power of two", e.align));
  }
}

}  // namespace

Trace read_trace(const std::string& path, const std::string& pinned) {
  Bytes b(path);
  Trace t{};
  if (!b.read(t.header)) throw b.fail(fmt::format("{} bytes, shorter than a trace's 64-byte header", b.left()));
  check_header(b, t.header);
  std::uint64_t planned = 0;  // the plan's per-thread entries of the launches read (threads + 1 each)
  for (std::uint32_t index = 0; b.left() > 0; ++index) {
    const std::uint64_t offset = b.at();
    Launch l{};
    if (!b.read(l.header)) {
      throw b.fail(fmt::format("{} stray bytes at byte {}: not a whole launch record", b.left(), offset));
    }
    check_launch(b, l, offset, index, planned);
    b.read_many(l.events, l.header.events);
    for (std::uint64_t k = 0; k < l.events.size(); ++k) check_event(b, l, l.events[k], k);
    t.launches.push_back(std::move(l));
  }
  t.content_hash = b.hash();
  if (!pinned.empty() && t.content_hash != pinned) throw TraceError(changed_input_message(path, pinned, t.content_hash));
  return t;
}

void write_trace(const std::string& path, const Trace& t) {
  std::string bytes;
  auto put = [&](const void* p, std::size_t n) { bytes.append(static_cast<const char*>(p), n); };
  put(&t.header, sizeof t.header);
  for (const Launch& l : t.launches) {
    LaunchHeader h = l.header;
    h.events = l.events.size();
    put(&h, sizeof h);
    put(l.events.data(), l.events.size() * sizeof(Event));
  }
  try {
    write_atomically(path, bytes);  // heapbench's one writer: "<path>.tmp", never through a link, renamed
  } catch (const ResultsWriteError& e) {
    throw TraceError(e.what());
  }
}

namespace {

// Numbers a launch's events in time order and pairs releases with blocks:
// the ops of each event (file order), and the plan's counts updated.
std::vector<ReplayOp> number_launch(const Launch& l, ReplayPlan& p, std::map<std::uint64_t, std::pair<std::uint32_t, std::uint64_t>>& live,
                                    std::uint64_t& held, std::vector<bool>& matched) {
  std::vector<std::size_t> order(l.events.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return l.events[a].clock < l.events[b].clock; });
  std::vector<ReplayOp> ops(l.events.size());
  matched.assign(l.events.size(), true);
  for (std::size_t i : order) {
    const Event& e = l.events[i];
    if (is_allocation(e.op)) {
      const auto id = static_cast<std::uint32_t>(p.allocations++);
      ops[i] = {e.size, id, e.op == kAligned ? e.align : 0, kAllocate, e.address == 0 ? 1u : 0u};
      p.max_size = std::max(p.max_size, e.size);
      if (e.address == 0) {
        ++p.recorded_nulls;
        continue;
      }
      live[e.address] = {id, e.size};
      held = add_saturated(held, e.size);  // an address recorded twice live counts twice: a damaged trace's sum
      p.peak_bytes = std::max(p.peak_bytes, held);
    } else if (e.address == 0) {
      matched[i] = false;  // free(NULL): nothing to replay
    } else if (const auto it = live.find(e.address); it != live.end()) {
      ops[i] = {0, it->second.first, 0, kRelease, 0};
      held -= std::min(held, it->second.second);
      live.erase(it);
    } else {
      matched[i] = false;
      ++p.unmatched_releases;
    }
  }
  return ops;
}

// r.offsets and r.ops: each thread's operations, in file order (its program
// order). offsets[t] counts thread t's operations, is summed into where they
// end, and then, filled from the back, into where they start: 8 B a thread
// (kPlanBytesPerThread), the bound read_trace held the file to.
void group_by_thread(const Launch& l, const std::vector<ReplayOp>& numbered, const std::vector<bool>& matched,
                     ReplayLaunch& r) {
  r.offsets.assign(r.threads + 1, 0);
  const auto thread_of = [&](const Event& e) { return std::uint64_t{e.block} * l.threads_per_block() + e.thread; };
  for (std::size_t i = 0; i < l.events.size(); ++i) {
    if (matched[i]) ++r.offsets[thread_of(l.events[i])];
  }
  std::partial_sum(r.offsets.begin(), r.offsets.end() - 1, r.offsets.begin());
  r.offsets.back() = r.threads > 0 ? r.offsets[r.threads - 1] : 0;
  r.ops.resize(r.offsets.back());
  for (std::size_t i = l.events.size(); i-- > 0;) {
    if (matched[i]) r.ops[--r.offsets[thread_of(l.events[i])]] = numbered[i];
  }
}

}  // namespace

ReplayPlan plan_replay(const Trace& t, const std::string& path, PlanDetail detail) {
  ReplayPlan p;
  std::uint64_t dropped = 0;
  for (const Launch& l : t.launches) dropped = add_saturated(dropped, l.header.dropped);
  if (dropped > 0) {
    throw TraceError(fmt::format("{}: the recording dropped {} events (its buffer filled): what it holds is not the "
                                 "program; record again with a larger buffer",
                                 shown_path(path), dropped));
  }
  std::map<std::uint64_t, std::pair<std::uint32_t, std::uint64_t>> live;  // address -> (id, bytes)
  std::uint64_t held = 0;
  for (const Launch& l : t.launches) {
    std::vector<bool> matched;
    const std::vector<ReplayOp> numbered = number_launch(l, p, live, held, matched);
    ReplayLaunch r;
    std::copy(l.header.grid, l.header.grid + 3, r.grid);
    std::copy(l.header.block, l.header.block + 3, r.block);
    r.threads = l.blocks() * l.threads_per_block();
    p.max_threads = std::max(p.max_threads, r.threads);
    for (std::size_t i = 0; i < l.events.size(); ++i) {
      if (matched[i]) (numbered[i].kind == kAllocate ? r.allocations : r.releases) += 1;
    }
    if (detail == PlanDetail::kOps) group_by_thread(l, numbered, matched, r);
    p.launches.push_back(std::move(r));
  }
  if (p.allocations == 0) throw TraceError(fmt::format("{}: the trace records no allocation", shown_path(path)));
  if (p.allocations > 0xffffffffull) {
    throw TraceError(fmt::format("{}: {} allocations, more than 2^32", shown_path(path), p.allocations));
  }
  for (const auto& [address, block] : live) p.live_at_end.push_back(block.first);
  std::sort(p.live_at_end.begin(), p.live_at_end.end());
  return p;
}

std::string unmatched_note(const ReplayPlan& p, const std::string& path) {
  if (p.unmatched_releases == 0) return "";
  return fmt::format("{}: {} release(s) of an address no recorded block held then (a double free, or a free of what "
                     "the allocator did not return): counted as unmatched_releases, not replayed",
                     shown_path(path), p.unmatched_releases);
}

std::string trace_name_of_file(const std::string& path) {
  const std::string name = name_of_file(path);
  if (name.empty()) {
    throw TraceError(fmt::format("{}: the file's name has no stem to name its trace by", shown_path(path)));
  }
  return name;
}

}  // namespace heapbench::trace
