#include "replay/trace_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <numeric>

#include "plan/input_file.hpp"
#include "cases/parse.hpp"
#include "report/results_file.hpp"  // write_atomically

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

Trace read_whole_trace(const std::string& path) {
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
  return t;
}

}  // namespace

Trace read_trace(const std::string& path, const std::string& pinned) {
  return read_pinned<TraceError>(path, pinned, read_whole_trace);
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
      ops[i] = {e.size, id, e.op == kAligned ? e.align : 0, kAllocate, static_cast<std::uint16_t>(e.address == 0), 0};
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
      ops[i] = {it->second.second, it->second.first, 0, kRelease, 0, 0};  // the block's size: its stamp's ends
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

// r.ops alone, in group_by_thread's order (threads in turn, each thread's in
// file order) without its offsets: memory per event, none per thread. What
// plan_floor needs of a PlanDetail::kShape plan, so that its arena, and the
// device memory counted from it, is the kOps plan's.
void ops_in_thread_order(const Launch& l, const std::vector<ReplayOp>& numbered, const std::vector<bool>& matched,
                         ReplayLaunch& r) {
  const auto thread_of = [&](std::size_t i) {
    return std::uint64_t{l.events[i].block} * l.threads_per_block() + l.events[i].thread;
  };
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < l.events.size(); ++i) {
    if (matched[i]) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return thread_of(a) < thread_of(b); });
  r.ops.reserve(order.size());
  for (std::size_t i : order) r.ops.push_back(numbered[i]);
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
    if (detail == PlanDetail::kOps) {
      group_by_thread(l, numbered, matched, r);
    } else {
      ops_in_thread_order(l, numbered, matched, r);  // for plan_floor, dropped after it
    }
    p.launches.push_back(std::move(r));
  }
  if (p.allocations == 0) throw TraceError(fmt::format("{}: the trace records no allocation", shown_path(path)));
  if (p.allocations > 0xffffffffull) {
    throw TraceError(fmt::format("{}: {} allocations, more than 2^32", shown_path(path), p.allocations));
  }
  for (const auto& [address, block] : live) p.live_at_end.push_back(block.first);
  std::sort(p.live_at_end.begin(), p.live_at_end.end());
  plan_floor(p);
  if (detail == PlanDetail::kShape) {
    for (ReplayLaunch& r : p.launches) std::vector<ReplayOp>().swap(r.ops);
  }
  return p;
}

std::string unmatched_note(const ReplayPlan& p, const std::string& path) {
  if (p.unmatched_releases == 0) return "";
  return fmt::format("{}: {} release(s) of an address no recorded block held then (a double free, or a free of what "
                     "the allocator did not return): counted as unmatched_releases, not replayed",
                     shown_path(path), p.unmatched_releases);
}

std::uint64_t replay_device_bytes(const ReplayPlan& p) {
  const auto times = [](std::uint64_t n, std::uint64_t each) { return checked_product(n, each).value_or(~std::uint64_t{0}); };
  std::uint64_t bytes = 0;
  for (const ReplayLaunch& l : p.launches) {
    bytes = add_saturated(bytes, times(add_saturated(l.threads, 1), kPlanBytesPerThread));
    bytes = add_saturated(bytes, times(add_saturated(l.allocations, l.releases), sizeof(ReplayOp)));
  }
  bytes = add_saturated(bytes, times(p.allocations, sizeof(void*)));
  const std::uint64_t kept = p.live_at_end.size();
  if (kept > 0) bytes = add_saturated(bytes, add_saturated(times(kept + 1, kPlanBytesPerThread), times(kept, sizeof(ReplayOp))));
  if (p.floor) bytes = add_saturated(bytes, add_saturated(p.floor_bytes, p.floor_align));
  return bytes;
}

std::string device_memory_refusal(const std::string& path, std::uint64_t plan_bytes, std::uint64_t heap_bytes,
                                  const std::string& what) {
  const auto mib = [](std::uint64_t b) { return b / (1ull << 20) + (b % (1ull << 20) != 0 ? 1 : 0); };
  return fmt::format("{}: a replay of it takes {} MiB of device memory for its plan (its launches' threads and "
                     "operations, the blocks' table, the floor's arena) beside the {} MiB heap: more than {}",
                     shown_path(path), mib(plan_bytes), mib(heap_bytes), what);
}

namespace {

// Free space of the floor's arena, in units: best fit, neighbours merged.
class FloorSpace {
 public:
  // A place of `units` aligned to `align` units.
  std::uint64_t take(std::uint64_t units, std::uint64_t align) {
    const auto fit = by_size_.lower_bound(units + align - 1);
    if (fit == by_size_.end()) {
      const std::uint64_t at = (end_ + align - 1) / align * align;
      if (at > end_) give(end_, at - end_);
      end_ = at + units;
      return at;
    }
    const std::uint64_t start = fit->second, len = fit->first;
    remove(fit);
    const std::uint64_t at = (start + align - 1) / align * align;
    if (at > start) give(start, at - start);
    if (start + len > at + units) give(at + units, start + len - at - units);
    return at;
  }
  void give(std::uint64_t start, std::uint64_t units) {
    auto next = by_start_.lower_bound(start);
    if (next != by_start_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == start) {
        start = prev->first;
        units += prev->second;
        remove(find_sized(prev->second, prev->first));
      }
    }
    next = by_start_.lower_bound(start + units);
    if (next != by_start_.end() && next->first == start + units) {
      units += next->second;
      remove(find_sized(next->second, next->first));
    }
    by_start_[start] = units;
    by_size_.emplace(units, start);
  }
  std::uint64_t end() const { return end_; }

 private:
  std::map<std::uint64_t, std::uint64_t> by_start_;     // start -> units
  std::multimap<std::uint64_t, std::uint64_t> by_size_;  // units -> start
  std::uint64_t end_ = 0;

  std::multimap<std::uint64_t, std::uint64_t>::iterator find_sized(std::uint64_t units, std::uint64_t start) {
    auto [it, last] = by_size_.equal_range(units);
    while (it->second != start) ++it;
    return it;
  }
  void remove(std::multimap<std::uint64_t, std::uint64_t>::iterator it) {
    by_start_.erase(it->second);
    by_size_.erase(it);
  }
};

}  // namespace

void plan_floor(ReplayPlan& p) {
  // The launch that releases each block (none: the recording kept it, or got NULL).
  constexpr std::size_t kNever = ~std::size_t{0};
  std::vector<std::size_t> released_in(p.allocations, kNever);
  for (std::size_t l = 0; l < p.launches.size(); ++l) {
    for (const ReplayOp& op : p.launches[l].ops) {
      if (op.kind == kRelease) released_in[op.id] = l;
    }
  }
  std::vector<std::pair<std::uint64_t, std::uint64_t>> place(p.allocations, {0, 0});  // (start, units)
  std::vector<std::vector<std::uint32_t>> release_after(p.launches.size());
  FloorSpace space;
  std::uint64_t max_align = 1;
  for (std::size_t l = 0; l < p.launches.size(); ++l) {
    if (l > 0) {
      for (std::uint32_t id : release_after[l - 1]) space.give(place[id].first, place[id].second);
    }
    for (ReplayOp& op : p.launches[l].ops) {
      if (op.kind != kAllocate || op.recorded_null != 0) continue;
      const std::uint64_t units = std::max<std::uint64_t>(1, (op.size + kFloorUnit - 1) / kFloorUnit);
      const std::uint64_t align = std::max<std::uint64_t>(1, op.align / kFloorUnit);
      max_align = std::max(max_align, align);
      const std::uint64_t at = space.take(units, align);
      if (at + units > kMaxFloorBytes / kFloorUnit) {  // checked at every block: the sum never nears 2^64
        p.floor = false;
        p.floor_bytes = 0;
        return;
      }
      op.floor = static_cast<std::uint32_t>(at);
      place[op.id] = {at, units};
      if (released_in[op.id] != kNever) release_after[released_in[op.id]].push_back(op.id);
    }
  }
  p.floor_bytes = space.end() * kFloorUnit;
  p.floor_align = max_align * kFloorUnit;
}

std::string trace_name_of_file(const std::string& path) {
  const std::string name = name_of_file(path);
  if (name.empty()) {
    throw TraceError(fmt::format("{}: the file's name has no stem to name its trace by", shown_path(path)));
  }
  return name;
}

}  // namespace heapbench::trace
