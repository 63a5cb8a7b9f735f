#pragma once
// The word an enumerator is written as in the results file (an API's
// "source" and "call_path", a counter's "scale"): one table of
// {enumerator, key} rows per enum, in the enum's declaration order, and one
// lookup, key_of<table>(value). It stands in for the switch's -Wswitch: a row
// left out, repeated or out of order, or a key given twice, fails to compile
// (keyed_in_order, checked wherever the table is looked up). An enumerator
// added after the last row makes key_of throw, and the tests ask every API's
// and counter's key.
#include <cstddef>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace heapbench {

template <class E>
struct EnumKey {
  E value;
  std::string_view key;
};

// Row i holds the i-th enumerator (of an enum with the default values 0, 1,
// ...), and no two rows share a key.
template <class E, std::size_t N>
constexpr bool keyed_in_order(const EnumKey<E> (&table)[N]) {
  for (std::size_t i = 0; i < N; ++i) {
    if (static_cast<std::size_t>(table[i].value) != i) return false;
    for (std::size_t j = 0; j < i; ++j) {
      if (table[j].key == table[i].key) return false;
    }
  }
  return true;
}

// The key of `value` in `table` (a constexpr array of EnumKey<E>);
// std::logic_error for an enumerator the table lacks.
template <const auto& table, class E>
std::string_view key_of(E value) {
  static_assert(std::is_same_v<decltype(table[0].value), E>, "a table of another enum's keys");
  static_assert(keyed_in_order(table), "rows in the enum's declaration order, one key each");
  const auto i = static_cast<std::size_t>(value);
  if (i >= std::size(table)) throw std::logic_error("enumerator " + std::to_string(i) + " has no key in its table");
  return table[i].key;
}

// Every key of `table`, in the enum's order (the results schema's enums).
template <const auto& table>
std::vector<std::string_view> keys_of() {
  static_assert(keyed_in_order(table), "rows in the enum's declaration order, one key each");
  std::vector<std::string_view> out;
  for (const auto& row : table) out.push_back(row.key);
  return out;
}

}  // namespace heapbench
