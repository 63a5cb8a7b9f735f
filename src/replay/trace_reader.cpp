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

// The file's bytes, read in records; every short read is the file's end.
class Bytes {
 public:
  Bytes(const std::string& path) : path_(path), in_(path, std::ios::binary) {
    if (!in_) throw TraceError(fmt::format("{}: cannot be opened for reading", path));
    in_.seekg(0, std::ios::end);
    size_ = static_cast<std::uint64_t>(in_.tellg());
    in_.seekg(0);
  }
  template <class T>
  bool read(T& out) {
    if (left() < sizeof(T)) return false;
    in_.read(reinterpret_cast<char*>(&out), sizeof(T));
    if (!in_) throw fail("read failed");
    at_ += sizeof(T);
    return true;
  }
  template <class T>
  void read_many(std::vector<T>& out, std::uint64_t n) {
    out.resize(n);
    in_.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(n * sizeof(T)));
    if (!in_) throw fail("read failed");
    at_ += n * sizeof(T);
  }
  std::uint64_t left() const { return size_ - at_; }
  std::uint64_t at() const { return at_; }
  TraceError fail(const std::string& why) const { return TraceError(fmt::format("{}: {}", path_, why)); }

 private:
  std::string path_;
  std::ifstream in_;
  std::uint64_t size_ = 0, at_ = 0;
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

void check_launch(Bytes& b, const Launch& l, std::uint64_t offset, std::uint32_t index) {
  const LaunchHeader& h = l.header;
  const auto fail = [&](const std::string& why) { return b.fail(fmt::format("launch {} at byte {}: {}", index, offset, why)); };
  if (h.tag != kLaunchTag) throw fail("not a launch record (no LNCH tag)");
  if (h.launch != index) throw fail(fmt::format("numbered {}, not {}", h.launch, index));
  for (int k = 0; k < 3; ++k) {
    if (h.grid[k] == 0 || h.block[k] == 0) throw fail("a grid or block dimension of 0");
  }
  if (l.threads_per_block() > 1024) throw fail(fmt::format("{} threads per block, more than CUDA's 1024", l.threads_per_block()));
  if (l.blocks() > kMaxTraceThreads / l.threads_per_block()) {
    throw fail(fmt::format("{} blocks x {} threads, more than the {} threads heapbench replays", l.blocks(),
                           l.threads_per_block(), kMaxTraceThreads));
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

Trace read_trace(const std::string& path) {
  Bytes b(path);
  Trace t{};
  if (!b.read(t.header)) throw b.fail(fmt::format("{} bytes, shorter than a trace's 64-byte header", b.left()));
  check_header(b, t.header);
  for (std::uint32_t index = 0; b.left() > 0; ++index) {
    const std::uint64_t offset = b.at();
    Launch l{};
    if (!b.read(l.header)) {
      throw b.fail(fmt::format("{} stray bytes at byte {}: not a whole launch record", b.left(), offset));
    }
    check_launch(b, l, offset, index);
    b.read_many(l.events, l.header.events);
    for (std::uint64_t k = 0; k < l.events.size(); ++k) check_event(b, l, l.events[k], k);
    t.launches.push_back(std::move(l));
  }
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
      ops[i] = {e.size, id, e.op == kAligned ? e.align : 0, kAllocate, static_cast<std::uint16_t>(e.address == 0), 0};
      p.max_size = std::max(p.max_size, e.size);
      if (e.address == 0) {
        ++p.recorded_nulls;
        continue;
      }
      live[e.address] = {id, e.size};
      held += e.size;
      p.peak_bytes = std::max(p.peak_bytes, held);
    } else if (e.address == 0) {
      matched[i] = false;  // free(NULL): nothing to replay
    } else if (const auto it = live.find(e.address); it != live.end()) {
      ops[i] = {it->second.second, it->second.first, 0, kRelease, 0, 0};  // the block's size: its stamp's ends
      held -= it->second.second;
      live.erase(it);
    } else {
      matched[i] = false;
      ++p.unmatched_releases;
    }
  }
  return ops;
}

}  // namespace

ReplayPlan plan_replay(const Trace& t, const std::string& path) {
  ReplayPlan p;
  std::uint64_t dropped = 0;
  for (const Launch& l : t.launches) dropped += l.header.dropped;
  if (dropped > 0) {
    throw TraceError(fmt::format("{}: the recording dropped {} events (its buffer filled): what it holds is not the "
                                 "program; record again with a larger buffer",
                                 path, dropped));
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
    r.offsets.assign(r.threads + 1, 0);
    const auto thread_of = [&](const Event& e) { return std::uint64_t{e.block} * l.threads_per_block() + e.thread; };
    for (std::size_t i = 0; i < l.events.size(); ++i) {
      if (matched[i]) ++r.offsets[thread_of(l.events[i]) + 1];
    }
    std::partial_sum(r.offsets.begin(), r.offsets.end(), r.offsets.begin());
    r.ops.resize(r.offsets.back());
    std::vector<std::uint64_t> next(r.offsets.begin(), r.offsets.end() - 1);
    for (std::size_t i = 0; i < l.events.size(); ++i) {  // file order: each thread's program order
      if (!matched[i]) continue;
      r.ops[next[thread_of(l.events[i])]++] = numbered[i];
      (numbered[i].kind == kAllocate ? r.allocations : r.releases) += 1;
    }
    p.launches.push_back(std::move(r));
  }
  if (p.allocations == 0) throw TraceError(fmt::format("{}: the trace records no allocation", path));
  if (p.allocations > 0xffffffffull) throw TraceError(fmt::format("{}: {} allocations, more than 2^32", path, p.allocations));
  for (const auto& [address, block] : live) p.live_at_end.push_back(block.first);
  std::sort(p.live_at_end.begin(), p.live_at_end.end());
  plan_floor(p);
  return p;
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
  if (name.empty()) throw TraceError(fmt::format("{}: the file's name has no stem to name its trace by", path));
  return name;
}

}  // namespace heapbench::trace
