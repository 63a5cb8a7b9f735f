#include "heapbench/case.hpp"
#include "cases/case_naming.hpp"

#include "cases/axes.hpp"
#include "cases/axis_values.hpp"

#include <fmt/format.h>

#include "cases/catalog.hpp"
#include "cases/graph_names.hpp"

#include <algorithm>
#include <stdexcept>

namespace heapbench {

std::string_view limit_key(Limit limit) { return limit == Limit::printf_fifo ? "printf_fifo" : "malloc_heap"; }

Limit Case::limit() const { return pattern != nullptr ? pattern->limit : Limit::malloc_heap; }
std::string_view Case::pattern_name() const { return pattern != nullptr ? pattern->name : std::string_view{}; }
std::string_view Case::api_name() const { return api != nullptr ? api->name : std::string_view{}; }

namespace {
// Where a name becomes traits (make_case, and the axis table's rows for case_from_axis_values).
void set_pattern(Case& c, std::string_view v) {
  c.pattern = find_pattern_traits(v);
  if (c.pattern == nullptr) throw std::invalid_argument(fmt::format("unknown pattern '{}'", v));
}
void set_api(Case& c, std::string_view v) {
  c.api = find_api_traits(v);
  if (c.api == nullptr || !c.api->built) throw std::invalid_argument(fmt::format("no API '{}' in this build", v));
}
}  // namespace

Case make_case(std::string_view pattern, std::string_view api, std::uint64_t size, std::uint64_t align,
               std::uint64_t threads, std::uint64_t limit_bytes) {
  Case c;
  set_pattern(c, pattern);
  set_api(c, api);
  c.size = size;
  c.align = align;
  c.threads = threads;
  c.limit_bytes = limit_bytes;
  return c;
}

namespace {

std::string_view pattern_of(const Case& c) { return c.pattern_name(); }
std::string_view api_of(const Case& c) { return c.api_name(); }
std::string_view graph_of(const Case& c) { return c.graph; }
std::string_view trace_of(const Case& c) { return c.trace; }
void set_graph(Case& c, std::string_view v) { c.graph = v; }
void set_trace(Case& c, std::string_view v) { c.trace = v; }

using P = AxisPresence;
using K = ValueKind;
constexpr std::string_view kName = R"({"pattern": "^[A-Za-z0-9_-]+$"})";
constexpr std::string_view kPositive = R"({"minimum": 1})";
// --heaps sets either limit: the one each case's pattern sets.
const AxisFlag kHeapsFlag{"--heaps",
                          "cudaLimitMallocHeapSize values (printf: cudaLimitPrintfFifoSize), whole MiB; a number without "
                          "a unit is MiB, as case names print it (e.g. 8,64M,1G)",
                          true, 0, "", nullptr, nullptr};

// The names the names axes' flags take (AxisFlag::known), this build's.
std::vector<std::string_view> pattern_names() { return {kPatterns.begin(), kPatterns.end()}; }
std::vector<std::string_view> api_names() { return built_api_names(); }
std::vector<std::string_view> graph_names() { return {kGeneratedGraphs.begin(), kGeneratedGraphs.end()}; }

// The table itself. The workload axes (PatternTraits::axes) appear only in the
// names of the patterns that take them, so no other pattern's names changed with them.
const std::vector<AxisDecl> kAxes{{
    {"pattern", "", P::always, 0, K::names, "", "the pattern", nullptr, &pattern_of, &set_pattern, 1,
     R"({"pattern": "^[a-z][a-z0-9_]*$"})", {"--patterns", "Patterns, comma-separated ({})", false, 0, "", &pattern_names, nullptr}},
    {"api", "", P::always, 0, K::names, "", "the allocation API", nullptr, &api_of, &set_api, 1,
     R"({"pattern": "^[A-Za-z_][A-Za-z0-9_]*$"})",
     {"--apis", "APIs, comma-separated ({})", false, 0, "", &api_names, &not_built_note}},
    {"size", "size", P::always, 0, K::quantity, "B", "bytes per allocation (printf: bytes of arguments per call)",
     &Case::size, nullptr, nullptr, 1, kPositive,
     {"--sizes", "Bytes per allocation, comma-separated, K/M/G suffixes (e.g. 16,1K,4K)", true, 0, "", nullptr, nullptr}},
    {"size_min", "size_min", P::pattern_takes, 0, K::quantity, "B",
     "the workloads output and hash: sizes are drawn from [size_min, size]", &Case::size_min, nullptr, nullptr, 1, kPositive,
     {"--size-mins", "Workloads (output, hash): the smallest request; sizes are drawn from [size-min, size] (e.g. 4,16; "
      "default: the size itself)", true, 0, "", nullptr, nullptr},
     SweptAxis{0, 1,
      "The workloads' smallest request (output: an output's bytes; hash: a value's): each thread's size is drawn from "
      "[size-min, size] by a seeded hash of its index, the same on every run. Not given: every request is the size "
      "itself. A point whose size-min exceeds its size is no point. The other patterns ignore it."}},
    {"align", "align", P::nonzero, 0, K::power_of_two, "B", "bytes, a power of two; only for an API that takes an alignment",
     &Case::align, nullptr, nullptr, 1, kPositive,
     {"--aligns", "Alignments for the APIs that take one, powers of two no larger than the largest heap (e.g. "
      "16,256,4096); refused when none of the APIs takes one", false, 0, "", nullptr, nullptr}},
    {"graph", "graph", P::pattern_takes, 0, K::names, "",
     "graph: rmat, grid, or the stem of the Matrix Market file --graph named", nullptr, &graph_of, &set_graph, 1, kName,
     {"--graphs", "graph: generated graphs, comma-separated ({}); with --graph also that file's", false, 0, "",
      &graph_names, nullptr}},
    {"trace", "trace", P::pattern_takes, 0, K::names, "", "replay: the stem of the trace file --trace named",
     nullptr, &trace_of, &set_trace, 1, kName},
    {"threads", "threads", P::always, 0, K::quantity, "", "allocating threads (graph: vertices, one thread each; hash: keys)",
     &Case::threads, nullptr, nullptr, 1, kPositive,
     {"--threads", "Concurrently allocating threads (e.g. 32,100000,1M)", true, kMaxThreads, "the most heapbench supports", nullptr, nullptr},
     SweptAxis{std::nullopt, 0, ""}},
    {"load_pct", "load_pct", P::pattern_takes, 0, K::quantity, "", "hash: keys per bucket x 100", nullptr,
     nullptr, nullptr, 1, kPositive,
     {"--load-pcts", "hash: keys per bucket x 100, the load factor in percent (e.g. 50,200)", true, 10000,
      "100 keys per bucket", nullptr, nullptr},
     SweptAxis{100, 2, "`hash` only: keys per bucket x 100, the load factor in percent (50: twice as many buckets as keys)."}},
    {"writes", "writes", P::pattern_takes, 0, K::switch01, "",
     "output: 1, the producing launch writes every output byte; 0, it only obtains them", nullptr, nullptr, nullptr, 1,
     R"({"enum": [0, 1]})",
     {"--writes",
      "output: 1, the producing launch writes every output byte (timed), 0 it only obtains them (the verifier writes "
      "them, untimed); e.g. 0,1 (default 0,1 in --sweep=workloads)", false, 0, "", nullptr, nullptr},
     SweptAxis{1, 3,
      "`output` only: `1`, the producing launch writes every output byte (timed, as an application would); `0`, it "
      "only obtains the outputs (the verifier writes and reads them back, untimed)."}},
    {"malloc_heap", "heap", P::limit, static_cast<unsigned>(Limit::malloc_heap), K::whole_mib, "B",
     "cudaLimitMallocHeapSize in bytes (heap:<MiB> in the name), also the arena of an API with its own",
     &Case::limit_bytes, nullptr, nullptr, kMiB, kPositive, kHeapsFlag},
    {"printf_fifo", "fifo", P::limit, static_cast<unsigned>(Limit::printf_fifo), K::whole_mib, "B",
     "cudaLimitPrintfFifoSize in bytes (fifo:<MiB> in the name), printf cases only, in the place of malloc_heap",
     &Case::limit_bytes, nullptr, nullptr, kMiB, kPositive, kHeapsFlag},
}};

}  // namespace

const std::vector<AxisDecl>& axis_table() { return kAxes; }

const std::vector<const AxisDecl*>& swept_axes() {
  static const std::vector<const AxisDecl*> rows = [] {
    std::vector<const AxisDecl*> out;
    for (const AxisDecl& a : kAxes) {
      if (a.is_swept()) out.push_back(&a);
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const AxisDecl* a, const AxisDecl* b) { return a->swept->run_order < b->swept->run_order; });
    return out;
  }();
  return rows;
}

const std::vector<const AxisDecl*>& flag_axes() {
  static const std::vector<const AxisDecl*> rows = [] {
    std::vector<const AxisDecl*> out;
    for (const AxisDecl& a : kAxes) {
      if (a.has_flag() && find_flag_axis(a.flag.name) == &a) out.push_back(&a);
    }
    return out;
  }();
  return rows;
}

const AxisDecl* find_flag_axis(std::string_view flag) {
  const auto row = std::find_if(kAxes.begin(), kAxes.end(), [&](const AxisDecl& a) { return a.has_flag() && a.flag.name == flag; });
  return row == kAxes.end() ? nullptr : &*row;
}

const AxisDecl* find_axis(std::string_view key) {
  const auto row = std::find_if(kAxes.begin(), kAxes.end(), [&](const AxisDecl& a) { return a.key == key; });
  return row == kAxes.end() ? nullptr : &*row;
}

namespace {

// A keyed row's place among the keyed rows (Case::keyed_axes), counted once
// for the whole table.
std::size_t slot_of(const AxisDecl& a) {
  static const std::vector<std::size_t> slots = [] {
    std::vector<std::size_t> out;
    std::size_t next = 0;
    for (const AxisDecl& row : kAxes) {
      out.push_back(next);
      if (!row.keyed()) continue;
      if (next == std::tuple_size_v<decltype(Case::keyed_axes)>) {
        throw std::logic_error(fmt::format("axis {}: more integer axes without a Case field than Case::keyed_axes "
                                           "holds", row.key));
      }
      ++next;
    }
    return out;
  }();
  return slots[static_cast<std::size_t>(&a - kAxes.data())];
}

const AxisDecl& keyed_row(std::string_view key) {
  const AxisDecl* a = find_axis(key);
  if (a == nullptr || !a->keyed()) {
    throw std::invalid_argument(fmt::format("'{}' is not an integer axis a case keeps by key", key));
  }
  return *a;
}

}  // namespace

bool pattern_takes(const PatternTraits& pattern, const AxisDecl& a) {
  return a.presence != P::pattern_takes || pattern.takes_axis(a.key);
}

std::uint64_t integer_of(const Case& c, const AxisDecl& a) {
  if (a.field != nullptr) return c.*a.field;
  const std::optional<std::uint64_t>& v = c.keyed_axes[slot_of(a)];
  return v ? *v : a.is_swept() ? a.swept->fallback.value_or(0) : 0;
}

void set_integer(Case& c, const AxisDecl& a, std::uint64_t value) {
  if (a.field != nullptr) {
    c.*a.field = value;
  } else {
    c.keyed_axes[slot_of(a)] = value;
  }
}

std::uint64_t Case::axis(std::string_view key) const { return integer_of(*this, keyed_row(key)); }
void Case::set_axis(std::string_view key, std::uint64_t value) { set_integer(*this, keyed_row(key), value); }

bool has_axis(const Case& c, const AxisDecl& a) {
  switch (a.presence) {
    case P::always: return true;
    case P::pattern_takes: return c.pattern != nullptr && pattern_takes(*c.pattern, a);
    case P::nonzero: return integer_of(c, a) != 0;
    case P::limit: return static_cast<unsigned>(c.limit()) == a.bit;
  }
  return false;
}

nlohmann::ordered_json axis_value(const Case& c, const AxisDecl& a) {
  if (a.text()) return std::string(a.text_of(c));
  return integer_of(c, a);
}

namespace {
std::string name_of(const Case& c, bool with_limit) {
  std::string name;
  for (const AxisDecl& a : kAxes) {
    if (!has_axis(c, a) || (!with_limit && a.presence == P::limit)) continue;
    if (!name.empty()) name += '/';
    if (a.text()) {
      name += a.label.empty() ? std::string(a.text_of(c)) : fmt::format("{}:{}", a.label, a.text_of(c));
    } else {
      name += fmt::format("{}:{}", a.label, integer_of(c, a) / a.name_divisor);
    }
  }
  return name;
}
}  // namespace

std::string case_name(const Case& c) { return name_of(c, true); }
std::string case_point_name(const Case& c) { return name_of(c, false); }

nlohmann::ordered_json axis_values(const Case& c) {
  nlohmann::ordered_json v = nlohmann::ordered_json::object();
  for (const AxisDecl& a : kAxes) {
    if (has_axis(c, a)) v[std::string(a.key)] = axis_value(c, a);
  }
  return v;
}

Case case_from_axis_values(const nlohmann::json& v) {
  if (!v.is_object()) throw std::invalid_argument("a case's axis_values must be a JSON object");
  for (const auto& [key, value] : v.items()) {
    if (find_axis(key) == nullptr) {
      throw std::invalid_argument(fmt::format("'{}' is not an axis", key));
    }
  }
  Case c;
  // The pattern first: which axes the others are depends on it.
  for (const AxisDecl& a : kAxes) {
    const auto it = v.find(std::string(a.key));
    if (it == v.end()) continue;
    if (a.text()) {
      if (!it->is_string()) throw std::invalid_argument(fmt::format("axis '{}' must be a string", a.key));
      a.set_text(c, it->get<std::string>());
    } else {
      if (!it->is_number_unsigned()) throw std::invalid_argument(fmt::format("axis '{}' must be an integer >= 0", a.key));
      set_integer(c, a, it->get<std::uint64_t>());
    }
  }
  // Every key a case of this pattern has, and no other: made again, the values are the same.
  if (c.pattern == nullptr || c.api == nullptr || nlohmann::json(axis_values(c)) != v) {
    throw std::invalid_argument(fmt::format("{} is not a case's axis_values", v.dump()));
  }
  return c;
}

nlohmann::ordered_json axis_values_schema() {
  using J = nlohmann::ordered_json;
  J required = J::array(), properties = J::object(), limits = J::array();
  for (const AxisDecl& a : kAxes) {
    J p = {{"type", a.text() ? "string" : "integer"}};
    if (!a.schema.empty()) {
      const J constraints = J::parse(a.schema);
      for (const auto& [k, v] : constraints.items()) p[k] = v;
    }
    p["description"] = a.description;
    properties[std::string(a.key)] = std::move(p);
    if (a.presence == P::always) required.push_back(a.key);
    if (a.presence == P::limit) limits.push_back(J{{"required", J::array({a.key})}});
  }
  return J{{"type", "object"},
           {"required", std::move(required)},
           {"properties", std::move(properties)},
           {"additionalProperties", false},
           {"oneOf", std::move(limits)}};
}


}  // namespace heapbench
