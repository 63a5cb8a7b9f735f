#pragma once
// A case's axes as data: one row per axis, in the order they stand in a case's
// name and in its axis_values. case_name(), axis_values() and the axis_values
// part of the results schema (`heapbench schema`) are all made from this table;
// so are, for the integer axes a sweep spans (threads and the workloads'), their
// flag, its checks, a sweep part's values and the plan's points. A new integer
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

// An integer axis a sweep spans: options.cpp makes its flag from this (parsed
// as a comma-separated list, checked, and set in every part of the sweep), and
// plan_cases expands every part over its values (sweep.hpp).
struct SweptAxis {
  std::string_view flag;  // "--load-pcts" ("": not a swept axis)
  std::string_view help;  // the flag's --help text
  // What a part that does not set the axis takes (nullopt: every part sets it).
  std::optional<std::uint64_t> fallback;
  std::uint64_t max = 0;       // the largest value the flag takes (0: no limit)
  std::string_view max_means;  // the limit in words, for the refusal ("100 keys per bucket")
  bool demand = false;         // the axis changes a point's demand on its heap (--max-demand-fraction)
  // Its place among the swept axes, slowest first: the order a part expands
  // them in, cases run in, and --help lists their flags (threads first).
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
  SweptAxis swept{};  // an integer axis a sweep spans, or none (flag "")

  bool is_swept() const { return !swept.flag.empty(); }
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
