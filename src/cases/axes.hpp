#pragma once
// A case's axes as data: one row per axis, in the order they stand in a case's
// name and in its axis_values. case_name(), axis_values() and the axis_values
// part of the results schema (`heapbench schema`) are all made from this table;
// so are every axis's flag and its checks, and for the integer axes a sweep
// spans (threads and the workloads') a sweep part's values and the plan's points. A new integer
// axis that one pattern takes is one row here (no field: the case keeps its
// value by key, Case::axis) and its use in the pattern's file
// (.with_axes("key") and c.axis("key")); docs/development.md, "Adding an axis".
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "heapbench/case.hpp"
#include "cases/pattern_traits.hpp"

namespace heapbench {

// When a case has the axis: always, only for a pattern that takes it
// (PatternTraits::axes), only where the value is not 0 (align: an API that
// takes an alignment), or only for the limit the case's pattern sets (exactly
// one of malloc_heap and printf_fifo).
enum class AxisPresence { always, pattern_takes, nonzero, limit };

// How an axis's values are written on the command line (its flag, or --axis
// KEY=VALUES), one parser each (plan/options.cpp, axis_integers): names
// (comma-separated, each one this build knows), quantities (whole numbers of at
// least 1 with K/M/G suffixes), powers of two (quantities, each a power of two),
// whole MiB (a bare number is MiB, as case names print a heap) or the switch
// values 0 and 1.
enum class ValueKind { names, quantity, power_of_two, whole_mib, switch01 };

// The most threads a case may have: their pointer table stays within 512 MiB.
inline constexpr std::uint64_t kMaxThreads = 1ull << 26;

// An axis's flag: options.cpp makes it from the row (every axis the command
// line sets; trace's value comes from --trace=FILE instead), parses it as the
// row's kind says, checks it and sets its values in every part of the sweep;
// --axis KEY=VALUES stands for it. Two rows may share one flag (malloc_heap and
// printf_fifo: --heaps, the limit the case's pattern sets).
struct AxisFlag {
  std::string_view name;  // "--sizes" ("": the axis has no flag)
  // Its --help text; a names axis's holds one "{}", the names it takes.
  std::string_view help;
  bool demand = false;         // the axis changes a point's demand on its heap (--max-demand-fraction)
  std::uint64_t max = 0;       // the largest value it takes (0: no limit)
  std::string_view max_means;  // the limit in words, for the refusal ("100 keys per bucket")
  // A names axis: the names it takes (this build's), in the order --help lists them.
  std::vector<std::string_view> (*known)() = nullptr;
  // More --help text made at run time ("" for none: the APIs this build lacks, and why).
  std::string (*more_help)() = nullptr;
};

// An integer axis a sweep spans beyond size, align and the limit (which
// plan_cases spans by rules of their own, sweep.hpp): plan_cases expands every
// part over its values (sweep.hpp).
struct SweptAxis {
  // What a part that does not set the axis takes (nullopt: every part sets it).
  std::optional<std::uint64_t> fallback;
  // Its place among the swept axes, slowest first: the order a part expands
  // them in and cases run in (threads first).
  int run_order = 0;
  // What docs/cli.md says of the flag beyond its --help line and its limits
  // (markdown; "" for nothing more): axis_docs.hpp writes its heading.
  std::string_view doc;
};

struct AxisDecl {
  std::string_view key;          // axis_values' key and, where labelled, the name's "<label>:<value>"
  std::string_view label;        // the name's label ("" for pattern and api: a bare segment)
  AxisPresence presence = AxisPresence::always;
  unsigned bit = 0;              // the Limit's value (limit); else 0
  ValueKind kind = ValueKind::quantity;  // how its values are written (names: a string; else an unsigned integer)
  std::string_view unit;         // "B" for bytes, else ""
  std::string_view description;  // docs/json.md's line for it, and the schema's
  // Its value in a case: an integer field, or (text) a string of the case; an
  // integer axis without a field is kept by key (Case::axis, integer_of).
  std::uint64_t Case::*field = nullptr;
  std::string_view (*text_of)(const Case&) = nullptr;
  void (*set_text)(Case&, std::string_view) = nullptr;  // text: sets it (throws std::invalid_argument)
  // The value in the name, where it differs from axis_values' (the limit in MiB).
  std::uint64_t name_divisor = 1;
  // The JSON Schema of the value beyond its type, as JSON text ("" for none).
  std::string_view schema;
  AxisFlag flag{};  // its flag, or none (name "")
  std::optional<SweptAxis> swept{};  // an integer axis a sweep spans, or none

  bool is_swept() const { return swept.has_value(); }
  bool has_flag() const { return !flag.name.empty(); }
  bool text() const { return kind == ValueKind::names; }
  // An integer axis kept by key in Case::keyed_axes (no field of its own).
  bool keyed() const { return !text() && field == nullptr; }
};

// Whether cases of `pattern` have the axis (its presence is not pattern_takes,
// or the pattern's traits name its key).
bool pattern_takes(const PatternTraits& pattern, const AxisDecl& a);
// An integer axis's value in `c`: its field, or its value by key (the row's
// swept fallback, else 0, where the case was given none).
std::uint64_t integer_of(const Case& c, const AxisDecl& a);
void set_integer(Case& c, const AxisDecl& a, std::uint64_t value);

// Every axis, in name order.
const std::vector<AxisDecl>& axis_table();

// One row per flag (AxisDecl::has_flag), in table order, which is the order
// --help lists them in (malloc_heap's stands for --heaps, which printf_fifo shares).
const std::vector<const AxisDecl*>& flag_axes();
// The row whose flag is `flag` (the first, for a shared one), or nullptr.
const AxisDecl* find_flag_axis(std::string_view flag);
// The swept rows (AxisDecl::is_swept), in their run order.
const std::vector<const AxisDecl*>& swept_axes();
// The row of `key` (nullptr: no such axis).
const AxisDecl* find_axis(std::string_view key);
bool has_axis(const Case& c, const AxisDecl& a);
// The value as axis_values writes it (a string or an integer).
nlohmann::ordered_json axis_value(const Case& c, const AxisDecl& a);
// The case whose axis_values are `v` (a child's plan, written by its parent):
// every key a row of the table, every value of its row's type, the pattern and
// the API ones this build has. The names of files (--graph, --trace) are not
// axes and are left empty. Throws std::invalid_argument naming what is wrong.
Case case_from_axis_values(const nlohmann::json& v);
// The axis_values object of the results schema: every axis's type, its
// constraints, which are required and the one-of-the-limits rule.
nlohmann::ordered_json axis_values_schema();

}  // namespace heapbench
