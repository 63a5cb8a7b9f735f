// heapbench check, the host side: rows, judges, the verdict's three forms, the
// command line (src/check/check.hpp).
#include "check/check.hpp"

#include "plan/suggest.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "plan/benchmark_flags.hpp"
#include "plan/options.hpp"
#include "cases/parse.hpp"
#include "report/version.hpp"

namespace heapbench::check {

std::string_view row_name(Row row) {
  switch (row) {
    case Row::overlap: return "overlap";
    case Row::alignment: return "alignment";
    case Row::exhaustion: return "exhaustion";
    case Row::recovery: return "recovery";
    case Row::leak: return "leak";
    case Row::lifetimes: return "lifetimes";
    case Row::remote_free: return "remote_free";
    case Row::edge: return "edge";
    case Row::soak: return "soak";
    case Row::sanitizer: return "sanitizer";
  }
  return "?";
}

std::string_view row_title(Row row) {
  switch (row) {
    case Row::overlap: return "no overlap, no double allocation";
    case Row::alignment: return "alignment it promises, every size";
    case Row::exhaustion: return "full heap: NULL within budget, neighbours intact";
    case Row::recovery: return "after freeing all: every size class served as before";
    case Row::leak: return "no leak over rounds of fill and free";
    case Row::lifetimes: return "blocks live across kernels, freed by another thread";
    case Row::remote_free: return "remotely freed blocks come back";
    case Row::edge: return "free(NULL), size 0, largest block, class boundaries";
    case Row::soak: return "random mixed-size churn, checked throughout";
    case Row::sanitizer: return "compute-sanitizer memcheck and racecheck";
  }
  return "?";
}

std::optional<Row> find_row(std::string_view name) {
  for (Row r : kRows) {
    if (row_name(r) == name) return r;
  }
  return std::nullopt;
}

std::string_view verdict_text(Verdict v) {
  switch (v) {
    case Verdict::pass: return "PASS";
    case Verdict::fail: return "FAIL";
    case Verdict::not_supported: return "NOT SUPPORTED";
    case Verdict::not_run: return "NOT RUN";
  }
  return "?";
}

namespace {

Verdict verdict_from_text(std::string_view t) {
  for (Verdict v : {Verdict::pass, Verdict::fail, Verdict::not_supported, Verdict::not_run}) {
    if (verdict_text(v) == t) return v;
  }
  throw nlohmann::json::other_error::create(501, fmt::format("unknown verdict '{}'", t), nullptr);
}

std::string hex(std::uint64_t a) { return fmt::format("{:#x}", a); }

std::string block_text(const Block& b) {
  return fmt::format("[{}, +{} B) of owner {}", hex(b.addr), b.size, b.owner);
}

std::string mib(std::uint64_t bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20)); }

RowResult make(Row row, Verdict v, std::string evidence, nlohmann::json figures = nlohmann::json::object()) {
  RowResult r;
  r.row = row;
  r.verdict = v;
  r.evidence = std::move(evidence);
  r.figures = std::move(figures);
  return r;
}

}  // namespace

nlohmann::json to_json(const RowResult& r) {
  return {{"row", row_name(r.row)},         {"title", row_title(r.row)}, {"verdict", verdict_text(r.verdict)},
          {"evidence", r.evidence},         {"seconds", r.seconds},      {"reports_full", r.reports_full},
          {"heap_bytes", r.heap_bytes},
          {"figures", r.figures}};
}

RowResult row_from_json(const nlohmann::json& j) {
  RowResult r;
  const auto row = find_row(j.at("row").get<std::string>());
  if (!row) throw nlohmann::json::other_error::create(501, "unknown row " + j.at("row").dump(), nullptr);
  r.row = *row;
  r.verdict = verdict_from_text(j.at("verdict").get<std::string>());
  r.evidence = j.at("evidence").get<std::string>();
  r.seconds = j.value("seconds", 0.0);
  r.heap_bytes = j.value("heap_bytes", std::uint64_t{0});
  r.reports_full = j.value("reports_full", true);
  r.figures = j.value("figures", nlohmann::json::object());
  return r;
}

Capabilities capabilities(const ApiTraits& t, std::uint64_t min_alignment) {
  Capabilities c;
  c.frees = t.frees;
  c.takes_align = t.takes_align;
  c.min_alignment = min_alignment;
  c.min_heap = t.min_heap;
  return c;
}

std::optional<std::string> unsupported(Row row, const Capabilities& caps, std::string_view api) {
  const bool needs_free = row == Row::recovery || row == Row::leak || row == Row::remote_free;
  if (needs_free && !caps.frees) {
    return fmt::format("{} never frees (its traits: frees = false): freed memory cannot come back", api);
  }
  return std::nullopt;
}

OverlapFinding find_overlaps(std::vector<Block> blocks) {
  std::sort(blocks.begin(), blocks.end(), [](const Block& a, const Block& b) {
    return a.addr != b.addr ? a.addr < b.addr : a.owner < b.owner;
  });
  OverlapFinding f;
  // Against the furthest-reaching block so far, not only the previous one: a
  // large block can overlap several later small ones.
  std::size_t reach = 0;
  for (std::size_t i = 1; i < blocks.size(); ++i) {
    const Block& a = blocks[reach];
    const Block& b = blocks[i];
    const std::uint64_t a_end = a.addr + std::max<std::uint64_t>(a.size, 1);
    if (b.addr < a_end) {
      ++f.pairs;
      if (b.addr == a.addr) ++f.same_address;
      if (!f.first) f.first = std::make_pair(a, b);
    }
    if (b.addr + std::max<std::uint64_t>(b.size, 1) > a_end) reach = i;
  }
  return f;
}

Misalignment find_misaligned(const std::vector<Block>& blocks) {
  Misalignment m;
  for (const Block& b : blocks) {
    if (b.align > 1 && b.addr % b.align != 0) {
      ++m.count;
      if (!m.first) m.first = b;
    }
  }
  return m;
}

namespace {

std::string budget_text(std::uint64_t not_started, std::uint64_t attempts) {
  return fmt::format("{} of {} calls found the kernel budget spent", not_started, attempts);
}

}  // namespace

RowResult judge_overlap(const std::vector<BlockSet>& sets) {
  std::vector<std::string> parts;
  nlohmann::json figures = nlohmann::json::array();
  std::optional<std::string> failure;
  std::uint64_t total = 0;
  for (const BlockSet& s : sets) {
    const OverlapFinding f = find_overlaps(s.blocks);
    total += s.blocks.size();
    figures.push_back({{"set", s.label},
                       {"attempts", s.attempts},
                       {"blocks", s.blocks.size()},
                       {"not_started", s.not_started},
                       {"overlapping_pairs", f.pairs},
                       {"same_address", f.same_address},
                       {"mismatched_blocks", s.mismatched_blocks},
                       {"seconds", s.seconds}});
    if (failure) continue;
    if (f.first) {
      failure = fmt::format("{}: {} overlapping pair(s), {} at the same address; first {} and {}", s.label, f.pairs,
                            f.same_address, block_text(f.first->first), block_text(f.first->second));
    } else if (s.mismatched_blocks) {
      const Block& b = s.blocks.at(*s.first_mismatch);
      failure = fmt::format("{}: {} block(s) lost their owner's stamp ({} words); first {}", s.label,
                            s.mismatched_blocks, s.mismatched_words, block_text(b));
    } else if (s.not_started) {
      failure = fmt::format("{}: {}", s.label, budget_text(s.not_started, s.attempts));
    } else if (s.blocks.empty()) {
      failure = fmt::format("{}: no call of {} returned a block: nothing to check", s.label, s.attempts);
    }
    parts.push_back(fmt::format("{}: {} of {} blocks, {:.2f} s", s.label, s.blocks.size(), s.attempts, s.seconds));
  }
  if (failure) return make(Row::overlap, Verdict::fail, *failure, figures);
  return make(Row::overlap, Verdict::pass,
              fmt::format("{} live blocks, none shares a byte, every stamp read back ({})", total,
                          fmt::join(parts, "; ")),
              figures);
}

RowResult judge_alignment(const BlockSet& set) {
  const Misalignment m = find_misaligned(set.blocks);
  std::uint64_t max_align = 1;
  for (const Block& b : set.blocks) max_align = std::max(max_align, b.align);
  nlohmann::json figures = {{"attempts", set.attempts},
                            {"blocks", set.blocks.size()},
                            {"misaligned", m.count},
                            {"max_align", max_align},
                            {"not_started", set.not_started}};
  if (m.first) {
    return make(Row::alignment, Verdict::fail,
                fmt::format("{} of {} blocks misaligned; first {} at {} B asked {} B alignment (address mod {} = {})",
                            m.count, set.blocks.size(), hex(m.first->addr), m.first->size, m.first->align,
                            m.first->align, m.first->addr % m.first->align),
                figures);
  }
  if (set.not_started) return make(Row::alignment, Verdict::fail, budget_text(set.not_started, set.attempts), figures);
  if (set.blocks.empty()) return make(Row::alignment, Verdict::fail, "no call returned a block: nothing to check", figures);
  return make(Row::alignment, Verdict::pass,
              fmt::format("{} blocks of {} sizes, each at its alignment (up to {} B)", set.blocks.size(),
                          set.label, max_align),
              figures);
}

RowResult judge_lifetimes(const BlockSet& set) {
  nlohmann::json figures = {{"attempts", set.attempts},
                            {"blocks", set.blocks.size()},
                            {"mismatched_blocks", set.mismatched_blocks},
                            {"not_started", set.not_started},
                            {"seconds", set.seconds}};
  if (set.mismatched_blocks) {
    const Block& b = set.blocks.at(*set.first_mismatch);
    return make(Row::lifetimes, Verdict::fail,
                fmt::format("{} of {} blocks read back another stamp in the next kernel; first {}",
                            set.mismatched_blocks, set.blocks.size(), block_text(b)),
                figures);
  }
  const OverlapFinding f = find_overlaps(set.blocks);
  if (f.first) {
    return make(Row::lifetimes, Verdict::fail,
                fmt::format("{} overlapping pair(s); first {} and {}", f.pairs, block_text(f.first->first),
                            block_text(f.first->second)),
                figures);
  }
  if (set.not_started) return make(Row::lifetimes, Verdict::fail, budget_text(set.not_started, set.attempts), figures);
  if (set.blocks.empty()) return make(Row::lifetimes, Verdict::fail, "no call returned a block: nothing to check", figures);
  return make(Row::lifetimes, Verdict::pass,
              fmt::format("{} blocks allocated in one kernel read back in the next, freed by other threads in a "
                          "third ({:.2f} s)",
                          set.blocks.size(), set.seconds),
              figures);
}

RowResult judge_exhaustion(const Fill& fill, double budget_s) {
  nlohmann::json figures = {{"heap_bytes", fill.heap_bytes}, {"size", fill.size},       {"blocks", fill.blocks},
                            {"beyond", fill.beyond},         {"nulls", fill.nulls},     {"not_started", fill.not_started},
                            {"mismatched_blocks", fill.mismatched_blocks},              {"seconds", fill.seconds},
                            {"finished", fill.finished}};
  RowResult r;
  const std::string held = fmt::format("{} blocks of {} B ({} of a {} heap)", fill.blocks, fill.size,
                                       mib(fill.blocks * fill.size), mib(fill.heap_bytes));
  if (!fill.finished) {
    r = make(Row::exhaustion, Verdict::fail,
             fmt::format("the fill did not end within {:.1f} s: a call on the full heap never returned", budget_s),
             figures);
    r.reports_full = false;
  } else if (fill.held_too_much()) {
    r = make(Row::exhaustion, Verdict::fail,
             fmt::format("never answered NULL: {} and {} more calls succeeded, more than the heap holds", held,
                         fill.beyond),
             figures);
    r.reports_full = false;
  } else if (fill.nulls == 0) {
    r = make(Row::exhaustion, Verdict::fail,
             fmt::format("no NULL: {}, {}", held, budget_text(fill.not_started, fill.not_started)), figures);
    r.reports_full = false;
  } else if (fill.not_started) {
    r = make(Row::exhaustion, Verdict::fail,
             fmt::format("{} threads found the {:.1f} s budget spent before a NULL ({})", fill.not_started, budget_s,
                         held),
             figures);
  } else if (fill.mismatched_blocks) {
    r = make(Row::exhaustion, Verdict::fail,
             fmt::format("NULL when full, but {} of the {} blocks held lost their stamp; first at {}",
                         fill.mismatched_blocks, fill.blocks, hex(fill.first_mismatch_addr.value_or(0))),
             figures);
  } else {
    r = make(Row::exhaustion, Verdict::pass,
             fmt::format("{}, then NULL for {} threads; every block kept its stamp; the fill took {:.3f} s", held,
                         fill.nulls, fill.seconds),
             figures);
  }
  return r;
}

namespace {

bool kept(const Capacity& c) {
  return static_cast<double>(c.after) >= (1 - kCapacityTolerance) * static_cast<double>(c.before) && c.before > 0;
}

std::string capacity_text(const Capacity& c) {
  return fmt::format("{} B: {} -> {} blocks", c.size, c.before, c.after);
}

}  // namespace

RowResult judge_recovery(const std::vector<Capacity>& classes) {
  nlohmann::json figures = nlohmann::json::array();
  std::vector<std::string> parts;
  const Capacity* first_bad = nullptr;
  for (const Capacity& c : classes) {
    figures.push_back({{"size", c.size}, {"before", c.before}, {"after", c.after}});
    parts.push_back(capacity_text(c));
    if (!kept(c) && !first_bad) first_bad = &c;
  }
  if (first_bad) {
    return make(Row::recovery, Verdict::fail,
                fmt::format("after a mixed fill was freed, {} ({:.1f} % of before; tolerance {:g} %). All: {}",
                            capacity_text(*first_bad),
                            first_bad->before ? 100.0 * first_bad->after / first_bad->before : 0.0,
                            100 * kCapacityTolerance, fmt::join(parts, "; ")),
                figures);
  }
  return make(Row::recovery, Verdict::pass,
              fmt::format("each size served as before after a mixed fill was freed: {}", fmt::join(parts, "; ")),
              figures);
}

RowResult judge_leak(const Capacity& c, int rounds) {
  nlohmann::json figures = {{"size", c.size}, {"before", c.before}, {"after", c.after}, {"rounds", rounds}};
  if (!kept(c)) {
    return make(Row::leak, Verdict::fail,
                fmt::format("after {} rounds of mixed fill and free, {} ({} blocks lost)", rounds, capacity_text(c),
                            c.before > c.after ? c.before - c.after : 0),
                figures);
  }
  return make(Row::leak, Verdict::pass,
              fmt::format("{} rounds of mixed fill and free: {}", rounds, capacity_text(c)), figures);
}

RowResult judge_remote_free(const Capacity& c, std::uint64_t mismatched_blocks) {
  nlohmann::json figures = {{"size", c.size}, {"before", c.before}, {"after", c.after},
                            {"mismatched_blocks", mismatched_blocks}};
  if (mismatched_blocks) {
    return make(Row::remote_free, Verdict::fail,
                fmt::format("{} blocks lost their stamp before their remote free", mismatched_blocks), figures);
  }
  if (!kept(c)) {
    return make(Row::remote_free, Verdict::fail,
                fmt::format("blocks freed by threads of other warps and blocks did not all come back: {}",
                            capacity_text(c)),
                figures);
  }
  return make(Row::remote_free, Verdict::pass,
              fmt::format("a full heap freed by threads of other warps and blocks, then filled again: {}",
                          capacity_text(c)),
              figures);
}

RowResult judge_edge(const Edge& e) {
  nlohmann::json figures = {{"free_null_asked", e.free_null_asked},
                            {"zero_a", e.zero_a},
                            {"zero_b", e.zero_b},
                            {"past_heap", e.past_heap},
                            {"largest", e.largest},
                            {"largest_mismatched_words", e.largest_mismatched},
                            {"boundary_blocks", e.boundaries.blocks.size()},
                            {"boundary_mismatched_blocks", e.boundaries.mismatched_blocks}};
  std::vector<std::string> fails, notes;
  notes.push_back(e.free_null_asked ? "free(NULL) returned" : "free(NULL) not asked (the adapter contract never passes NULL)");
  if (e.zero_a == 0 && e.zero_b == 0) {
    notes.push_back("size 0: NULL");
  } else if (e.zero_a != 0 && e.zero_b != 0 && e.zero_a != e.zero_b) {
    notes.push_back("size 0: two distinct blocks");
  } else {
    fails.push_back(fmt::format("size 0 twice gave {} and {} (neither NULL both times nor two distinct blocks)",
                                hex(e.zero_a), hex(e.zero_b)));
  }
  if (e.past_heap != 0) {
    fails.push_back(fmt::format("a request of heap + 1 B ({} B) returned {}, not NULL", e.heap_bytes + 1, hex(e.past_heap)));
  } else {
    notes.push_back("heap + 1 B: NULL");
  }
  if (e.largest == 0) {
    fails.push_back("no single block of any size up to the heap was served");
  } else if (e.largest_mismatched) {
    fails.push_back(fmt::format("the largest block ({}) did not read back {} of the words at its ends", mib(e.largest),
                                e.largest_mismatched));
  } else {
    notes.push_back(fmt::format("largest block {} ({:.0f} % of the heap), its first and last 64 KiB read back", mib(e.largest),
                                100.0 * static_cast<double>(e.largest) / static_cast<double>(e.heap_bytes)));
  }
  const OverlapFinding f = find_overlaps(e.boundaries.blocks);
  if (f.first) {
    fails.push_back(fmt::format("sizes around class boundaries: {} overlapping pair(s), first {} and {}", f.pairs,
                                block_text(f.first->first), block_text(f.first->second)));
  } else if (e.boundaries.mismatched_blocks) {
    fails.push_back(fmt::format("sizes around class boundaries: {} block(s) lost their stamp; first {}",
                                e.boundaries.mismatched_blocks,
                                block_text(e.boundaries.blocks.at(*e.boundaries.first_mismatch))));
  } else if (e.boundaries.blocks.size() < e.boundaries.attempts) {
    fails.push_back(fmt::format("sizes around class boundaries: only {} of {} calls served on an empty heap",
                                e.boundaries.blocks.size(), e.boundaries.attempts));
  } else {
    notes.push_back(fmt::format("{} blocks of 2^k +- 1 B (k = 4 ... 16) hold every byte", e.boundaries.blocks.size()));
  }
  if (!fails.empty()) return make(Row::edge, Verdict::fail, fmt::format("{}", fmt::join(fails, "; ")), figures);
  return make(Row::edge, Verdict::pass, fmt::format("{}", fmt::join(notes, "; ")), figures);
}

RowResult judge_soak(const Soak& s) {
  nlohmann::json figures = {{"seconds", s.seconds},         {"threads", s.threads},
                            {"allocations", s.allocations}, {"nulls", s.nulls},
                            {"frees", s.frees},             {"mismatched_blocks", s.mismatched_blocks},
                            {"misaligned", s.misaligned}};
  if (s.mismatched_blocks || s.misaligned) {
    return make(Row::soak, Verdict::fail,
                fmt::format("{} blocks lost their stamp and {} were misaligned in {} allocations over {:.1f} s",
                            s.mismatched_blocks, s.misaligned, s.allocations, s.seconds),
                figures);
  }
  if (s.allocations == 0) return make(Row::soak, Verdict::fail, "no allocation succeeded in the soak", figures);
  return make(Row::soak, Verdict::pass,
              fmt::format("{} allocations ({} NULL) and {} frees by {} threads in {:.1f} s, every block checked",
                          s.allocations, s.nulls, s.frees, s.threads, s.seconds),
              figures);
}

RowResult hung(Row row, double seconds, std::string_view during) {
  RowResult r = make(row, Verdict::fail,
                     fmt::format("no answer within {:.1f} s ({}): a call that never returned", seconds, during),
                     {{"hung_after_s", seconds}});
  r.reports_full = false;
  return r;
}

RowResult died(Row row, std::string_view how, std::string_view stderr_tail) {
  RowResult r = make(row, Verdict::fail, fmt::format("the row's process {}{}{}", how, stderr_tail.empty() ? "" : ": ",
                                                      stderr_tail));
  r.reports_full = false;
  return r;
}

std::uint64_t lifetimes_threads(std::uint64_t threads) { return std::min(threads, kLifetimesThreads); }
std::uint64_t soak_threads(std::uint64_t threads) { return std::min(threads, kSoakThreads); }

std::uint64_t heap_for(Row row, std::uint64_t heap, std::uint64_t threads, bool takes_align) {
  std::uint64_t demand = 0;
  switch (row) {
    case Row::overlap: demand = threads * (kOverlapFixedSize + kMixedMean); break;
    case Row::alignment:
      for (std::uint64_t s : kAlignmentSizes) {
        for (std::uint64_t a : kAlignments) {
          demand += kAlignmentCopies * (s + a);  // an aligned allocator may pad up to the alignment
          if (!takes_align) break;
        }
      }
      break;
    case Row::lifetimes: demand = lifetimes_threads(threads) * kMixedMean; break;
    case Row::soak: demand = soak_threads(threads) * kSoakHeld * (kSoakMaxSize / 2 + 16); break;
    default: return heap;
  }
  const std::uint64_t want = (4 * demand + (1 << 20) - 1) >> 20 << 20;
  return std::max(heap, want);
}

bool ApiVerdict::failed() const {
  return std::any_of(rows.begin(), rows.end(), [](const RowResult& r) { return r.verdict == Verdict::fail; });
}

std::string format_table(const std::vector<ApiVerdict>& verdicts) {
  std::string out;
  for (const ApiVerdict& v : verdicts) {
    out += fmt::format("{} (heap {}): {}\n", v.api, mib(v.heap_bytes), v.failed() ? "FAIL" : "no row failed");
    for (const RowResult& r : v.rows) {
      out += fmt::format("  {:<12} {:<13} {:>7.2f} s {:>9}  {}\n", row_name(r.row), verdict_text(r.verdict), r.seconds,
                         r.heap_bytes ? mib(r.heap_bytes) : "", r.evidence);
    }
  }
  return out;
}

std::string format_markdown(const std::vector<ApiVerdict>& verdicts, const nlohmann::json& context) {
  // A table cell may not hold a bare '|'.
  auto cell = [](std::string s) {
    std::string out;
    for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
  };
  std::string out = "# heapbench check\n\n";
  out += fmt::format("{} (device {}), CUDA driver {}, runtime {}, heapbench {} ({})\n\n",
                     context.value("gpu_name", std::string("?")), context.value("gpu_index", 0),
                     context.value("cuda_driver_version", 0), context.value("cuda_runtime_version", 0),
                     context.value("heapbench_version", std::string("?")),
                     context.value("heapbench_git_commit", std::string("?")));
  for (const ApiVerdict& v : verdicts) {
    out += fmt::format("## {} (heap {}): {}\n\n", v.api, mib(v.heap_bytes), v.failed() ? "FAIL" : "no row failed");
    out += "| row | property | verdict | heap | evidence |\n| --- | --- | --- | --- | --- |\n";
    for (const RowResult& r : v.rows) {
      out += fmt::format("| {} | {} | {} | {} | {} |\n", row_name(r.row), row_title(r.row), verdict_text(r.verdict),
                         r.heap_bytes ? mib(r.heap_bytes) : "", cell(r.evidence));
    }
    out += "\n";
  }
  return out;
}

nlohmann::json verdicts_json(const std::vector<ApiVerdict>& verdicts, const nlohmann::json& context) {
  nlohmann::json apis = nlohmann::json::array();
  for (const ApiVerdict& v : verdicts) {
    nlohmann::json rows = nlohmann::json::array();
    for (const RowResult& r : v.rows) rows.push_back(to_json(r));
    apis.push_back({{"api", v.api}, {"heap_bytes", v.heap_bytes}, {"failed", v.failed()}, {"rows", rows}});
  }
  nlohmann::json doc = context;
  doc["heapbench_check_version"] = kCheckSchemaVersion;
  doc["heapbench_version"] = kVersion;
  doc["heapbench_git_commit"] = kGitCommit;
  doc["apis"] = apis;
  doc["failed"] = std::any_of(verdicts.begin(), verdicts.end(), [](const ApiVerdict& v) { return v.failed(); });
  return doc;
}

// heapbench check's flags as CLI11 fills them, before they are checked.
struct CheckParsed {
  std::string apis, heaps = "8M", rows, threads = "1M";
  double soak_ms = 2000, budget_ms = 10000;
  bool no_sanitizer = false;
  std::string child_plan, child_out;
};

namespace {

// heapbench check's description and flags: the one app that parses them and
// whose help --help prints (help_text).
void build_app(CLI::App& app, CheckOptions& o, CheckParsed& p) {
  app.description("heapbench check: a conformance verdict for device allocators (docs/check.md)");
  add_subcommand_flags(app, o.help, o.device);
  app.add_option("--apis", p.apis, "Allocators to check, comma-separated (default: every one with a device handle)");
  // The defaults the help names are p's own.
  app.add_option("--heaps", p.heaps,
                 fmt::format("Heap (or arena) of the rows that fill it, whole MiB, comma-separated: the battery runs "
                             "once per value (default {}, CUDA's default heap; fills of a larger one are slow in "
                             "CUDA's malloc). The rows that need every call served get a heap of 4x their demand",
                             p.heaps));
  app.add_option("--rows", p.rows, "Rows to run, comma-separated (default: all; see docs/check.md)");
  app.add_option("--threads", p.threads,
                 fmt::format("Threads of the overlap row (default {}; K/M suffixes, 1M = 2^20)", p.threads));
  app.add_option("--soak-ms", p.soak_ms, fmt::format("How long the soak row churns (default {:g})", p.soak_ms));
  app.add_option("--kernel-budget-ms", p.budget_ms,
                 fmt::format("Deadline of one launch (default {:g}): a launch still running then is a hang, and its "
                             "row fails",
                             p.budget_ms));
  app.add_option("--json", o.json, "Also write the verdict as JSON to this file");
  app.add_option("--markdown", o.markdown, "Also write the verdict as markdown to this file");
  app.add_flag("--no-sanitizer", p.no_sanitizer, "Leave out the compute-sanitizer row (NOT RUN)");
  app.add_option("--child-plan", p.child_plan, "(internal) the row a row's process runs")->group("");
  app.add_option("--child-out", p.child_out, "(internal) where a row's process writes its row")->group("");
}

// A list of names, none of them empty.
std::vector<std::string> names_in(const std::string& text) {
  std::vector<std::string> out = split_list(text);
  for (const std::string& item : out) {
    if (item.empty()) throw UsageError(fmt::format("'{}': an empty item", text));
  }
  return out;
}

template <class F>
auto usage(const std::string& flag, const std::string& value, F&& f) {
  try {
    return f();
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("{}={}: {}", flag, value, e.what()));
  }
}

// --apis: the allocators named, each once, in order (default: every known one).
std::vector<std::string> apis_of(const std::string& text, const std::vector<std::string>& known_apis) {
  if (text.empty()) return known_apis;
  std::vector<std::string> out;
  for (const std::string& a : names_in(text)) {
    if (std::find(known_apis.begin(), known_apis.end(), a) == known_apis.end()) {
      throw UsageError(fmt::format("--apis={}: '{}' is not an allocator this binary can check{} (it can check {})",
                                   text, a, did_you_mean(a, known_apis), fmt::join(known_apis, ", ")));
    }
    if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
  }
  return out;
}

// --heaps: whole MiB, each enough for the edge row.
std::vector<std::uint64_t> heaps_of(const std::string& text) {
  std::vector<std::uint64_t> out;
  for (const std::uint64_t bytes : whole_mib_list("--heaps", text)) {
    if (bytes < kMinCheckHeap) {
      throw UsageError(fmt::format("--heaps={}: at least 4M (the edge row holds about 1 MiB of blocks at once)", text));
    }
    out.push_back(bytes);
  }
  return out;
}

// --rows: the rows named, each once, in order (default: all).
std::vector<Row> rows_of(const std::string& text) {
  if (text.empty()) return {kRows.begin(), kRows.end()};
  std::vector<Row> out;
  for (const std::string& name : names_in(text)) {
    const auto row = find_row(name);
    if (!row) {
      std::vector<std::string_view> names;
      for (Row r : kRows) names.push_back(row_name(r));
      throw UsageError(fmt::format("--rows={}: unknown row '{}'{} (rows: {})", text, name,
                                   did_you_mean(name, std::vector<std::string>(names.begin(), names.end())),
                                   fmt::join(names, ", ")));
    }
    if (std::find(out.begin(), out.end(), *row) == out.end()) out.push_back(*row);
  }
  return out;
}

}  // namespace

CheckCommandLine::CheckCommandLine() : o_(std::make_unique<CheckOptions>()), p_(std::make_unique<CheckParsed>()) {}
CheckCommandLine::~CheckCommandLine() = default;

void CheckCommandLine::build(CLI::App& app) {
  build_app(app, *o_, *p_);
  app.allow_extras();  // what is left is refused in options() (refuse_extras), with the closest flag
}

namespace {

// A row's process: its command line is the plan it runs and where it writes its row, nothing else.
CheckOptions row_process_options(const CLI::App& app, const CheckParsed& p) {
  for (const CLI::Option* opt : app.get_options()) {
    // Its long name: get_name() says nothing for an internal (hidden) option.
    const std::string name = opt->get_lnames().empty() ? opt->get_name() : "--" + opt->get_lnames().front();
    if (opt->count() > 0 && name != "--child-plan" && name != "--child-out") {
      throw UsageError(fmt::format("--child-plan: {}: a row's process takes its row from its plan, not from flags",
                                   name));
    }
  }
  if (p.child_out.empty()) throw UsageError("--child-plan: a row's process writes its row to --child-out: give one");
  CheckOptions o;
  o.child_plan = p.child_plan;
  o.child_out = p.child_out;
  return o;
}

}  // namespace

CheckOptions CheckCommandLine::options(const CLI::App& app, const std::vector<std::string>& known_apis) const {
  CheckOptions o = *o_;
  const CheckParsed& p = *p_;
  if (o.help) {
    o.help_text = help_of(app);
    return o;
  }
  refuse_extras(app);
  if (!p.child_plan.empty()) return row_process_options(app, p);
  if (!p.child_out.empty()) throw UsageError("--child-out: an internal flag of a row's process");
  o.apis = apis_of(p.apis, known_apis);
  if (o.apis.empty()) throw UsageError("--apis: no allocator given");
  o.heaps = heaps_of(p.heaps);
  if (o.heaps.empty()) throw UsageError("--heaps: no heap size given");
  o.rows = rows_of(p.rows);
  o.threads = usage("--threads", p.threads, [&] { return parse_quantity(p.threads); });
  if (o.threads < 64 || o.threads > kMaxThreads) {
    throw UsageError(fmt::format("--threads={}: 64 to {}", p.threads, kMaxThreads));
  }
  if (!(p.soak_ms > 0 && p.soak_ms <= 600000)) {
    throw UsageError(fmt::format("--soak-ms={}: above 0, at most 600000", typed_value(app, "--soak-ms")));
  }
  o.kernel_budget_s = kernel_budget_seconds(p.budget_ms, typed_value(app, "--kernel-budget-ms"));
  if (o.device < 0) throw UsageError(fmt::format("--device={}: must be >= 0", typed_value(app, "--device")));
  o.soak_s = p.soak_ms / 1000;
  o.sanitizer = !p.no_sanitizer;
  return o;
}


RowSlice row_slice(const CheckOptions& o, const std::string& api, std::uint64_t heap, std::vector<Row> rows) {
  return RowSlice{api, heap, std::move(rows), o.threads, o.soak_s, o.kernel_budget_s, o.device};
}

std::vector<std::string> row_process_args(const std::string& plan, const std::string& out) {
  return {"check", "--child-plan=" + plan, "--child-out=" + out};
}

nlohmann::json to_json(const RowSlice& s) {
  nlohmann::json rows = nlohmann::json::array();
  for (Row r : s.rows) rows.push_back(row_name(r));
  return {{"heapbench_check_row", 2},   {"api", s.api},         {"heap_bytes", s.heap},
          {"rows", rows},               {"threads", s.threads}, {"soak_s", s.soak_s},
          {"kernel_budget_s", s.kernel_budget_s}, {"device", s.device}};
}

namespace {

std::invalid_argument not_a_row_plan(const std::string& why) {
  return std::invalid_argument(fmt::format("not a row plan this heapbench writes: {}", why));
}

// Throws unless j[key] is there and `is` says it is of its type (`what`, for the message).
void need(const nlohmann::json& j, const char* key, bool (nlohmann::json::*is)() const noexcept, const char* what) {
  if (!j.contains(key) || !(j[key].*is)()) throw not_a_row_plan(fmt::format("{} is not {}", key, what));
}

std::vector<Row> rows_of_plan(const nlohmann::json& names) {
  if (!names.is_array() || names.empty()) throw not_a_row_plan("rows is not a list of rows");
  std::vector<Row> rows;
  for (const auto& name : names) {
    const std::optional<Row> row = name.is_string() ? find_row(name.get<std::string>()) : std::nullopt;
    if (!row) throw not_a_row_plan(fmt::format("no row {}", name.dump()));
    rows.push_back(*row);
  }
  return rows;
}

}  // namespace

RowSlice row_slice_from_json(const nlohmann::json& j) {
  if (!j.is_object() || j.value("heapbench_check_row", 0) != 2) throw not_a_row_plan("heapbench_check_row is not 2");
  need(j, "api", &nlohmann::json::is_string, "a string");
  need(j, "heap_bytes", &nlohmann::json::is_number_unsigned, "a count");
  need(j, "threads", &nlohmann::json::is_number_unsigned, "a count");
  need(j, "soak_s", &nlohmann::json::is_number, "a number");
  need(j, "kernel_budget_s", &nlohmann::json::is_number, "a number");
  need(j, "device", &nlohmann::json::is_number_integer, "an integer");
  need(j, "rows", &nlohmann::json::is_array, "a list of rows");
  return RowSlice{j["api"].get<std::string>(),     j["heap_bytes"].get<std::uint64_t>(), rows_of_plan(j["rows"]),
                  j["threads"].get<std::uint64_t>(), j["soak_s"].get<double>(),          j["kernel_budget_s"].get<double>(),
                  j["device"].get<int>()};
}

CheckOptions options_of_slice(const CheckOptions& o, const RowSlice& s) {
  CheckOptions out;
  out.apis = {s.api};
  out.heaps = {s.heap};
  out.rows = s.rows;
  out.threads = s.threads;
  out.soak_s = s.soak_s;
  out.kernel_budget_s = s.kernel_budget_s;
  out.device = s.device;
  out.child_plan = o.child_plan;
  out.child_out = o.child_out;
  return out;
}

}  // namespace heapbench::check
