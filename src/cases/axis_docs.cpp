#include "cases/axis_docs.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "cases/axes.hpp"

namespace heapbench {
namespace {

// A whole number as the docs write it: 67,108,864.
std::string grouped(std::uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string axis_values_table() {
  std::string out = "| field | type | what |\n| --- | --- | --- |\n";
  for (const AxisDecl& a : axis_table()) {
    out += fmt::format("| `{}` | {} | {} |\n", a.key, a.text() ? "string" : "integer", a.description);
  }
  return out;
}

std::string swept_flags() {
  std::string out;
  for (const AxisDecl* a : swept_axes()) {
    const SweptAxis& s = *a->swept;
    const AxisFlag& f = a->flag;
    // Its paragraph where the row has one, else its --help line.
    std::string text = s.doc.empty() ? fmt::format("{}.", f.help) : std::string(s.doc);
    if (a->kind == ValueKind::switch01) {
      text += " A comma-separated list of 0 and 1.";
    } else {
      text += " Whole numbers of at least 1 (K/M/G suffixes), comma-separated";
      text += f.max != 0 ? fmt::format(", at most {} ({}).", grouped(f.max), f.max_means) : ".";
    }
    if (s.fallback.value_or(0) != 0) {
      text += fmt::format(" A part of a built-in sweep that does not set it takes {}.", *s.fallback);
    }
    if (f.demand) text += " Giving it keeps every point unless `--max-demand-fraction` is given too.";
    text += fmt::format(" Also `--axis {}=VALUES`.", a->key);
    out += fmt::format("### `{}`\n\n{}\n\n", f.name, text);
  }
  if (!out.empty()) out.pop_back();  // one newline at the end
  return out;
}

}  // namespace

const std::vector<std::string_view>& axis_doc_names() {
  static const std::vector<std::string_view> names = {"axis-values", "swept-flags"};
  return names;
}

std::string axis_doc(std::string_view name) {
  if (name == "axis-values") return axis_values_table();
  if (name == "swept-flags") return swept_flags();
  throw std::invalid_argument(fmt::format("no doc '{}' (axis-values or swept-flags)", name));
}

}  // namespace heapbench
