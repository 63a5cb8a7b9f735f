#pragma once
// Parsing of the axis values a user types: "64", "1K", "64M", "1G" (binary multiples).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace heapbench {

// A positive integer with an optional K, M or G suffix (x1024, x1024^2, x1024^3).
// Throws std::invalid_argument naming the value for "", "12Q", "-1", "0", "1.5K" or overflow.
std::uint64_t parse_quantity(std::string_view text);

// `text` cut at every `sep`: "a,b" -> {"a", "b"}, "" -> {""}, "a,,b" -> {"a", "", "b"}.
// heapbench's one splitter of lists a user types; each caller says what an
// empty item means.
std::vector<std::string> split_list(std::string_view text, char sep = ',');

// A comma-separated list of quantities, e.g. "16,1K,4K". Empty items are an error.
std::vector<std::uint64_t> parse_quantity_list(std::string_view text);

// The name an axis gives a file the user named (--graph, --trace): its
// stem, every character other than letters, digits, '_' and '-' made '_'
// ("road-usa.mtx" -> "road-usa"); "" where the name has no stem. A name from
// a path the user typed, never the other way round.
std::string name_of_file(std::string_view path);

// A heap size: a quantity as above, where a bare number ("8") is MiB, as case
// names print heaps (`heap:8`); "8M", "1G", "1536K" as parse_quantity reads them.
// Throws as parse_quantity.
std::uint64_t parse_heap_size(std::string_view text);

// a x b, or nullopt where the product does not fit in 64 bits: every product
// of axes (size x threads, a block shared by a warp) is formed through this.
inline std::optional<std::uint64_t> checked_product(std::uint64_t a, std::uint64_t b) {
  std::uint64_t p = 0;
  if (__builtin_mul_overflow(a, b, &p)) return std::nullopt;
  return p;
}

// Human form used in messages and docs: 1048576 -> "1M", 1000 -> "1000".
std::string format_quantity(std::uint64_t value);

}  // namespace heapbench
