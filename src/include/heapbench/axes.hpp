#pragma once
// A case's axes as data: one row per axis, in the order they stand in a case's
// name and in its axis_values. case_name(), axis_values() and the axis_values
// part of the results schema (`heapbench schema`) are all made from this table,
// so a new axis is one row here (with its Case field) and its use in the pattern.
#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "heapbench/case.hpp"

namespace heapbench {

// When a case has the axis: always, only for a pattern that takes it
// (PatternTraits::axes), only where the value is not 0 (align: an API that
// takes an alignment), or only for the limit the case's pattern sets (exactly
// one of malloc_heap and printf_fifo).
enum class AxisPresence { always, pattern_takes, nonzero, limit };

struct AxisDecl {
  std::string_view key;          // axis_values' key and, where labelled, the name's "<label>:<value>"
  std::string_view label;        // the name's label ("" for pattern and api: a bare segment)
  AxisPresence presence = AxisPresence::always;
  unsigned bit = 0;              // AxisBit (pattern_takes) or the Limit's value (limit)
  bool text = false;             // a string; else an unsigned integer
  std::string_view unit;         // "B" for bytes, else ""
  std::string_view description;  // docs/json.md's line for it, and the schema's
  // Its value in a case: an integer field, or (text) a string of the case.
  std::uint64_t Case::*field = nullptr;
  std::string_view (*text_of)(const Case&) = nullptr;
  void (*set_text)(Case&, std::string_view) = nullptr;  // text: sets it (throws std::invalid_argument)
  // The value in the name, where it differs from axis_values' (the limit in MiB).
  std::uint64_t name_divisor = 1;
  // The JSON Schema of the value beyond its type, as JSON text ("" for none).
  std::string_view schema;
};

// Every axis, in name order.
const std::array<AxisDecl, 12>& axis_table();

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
