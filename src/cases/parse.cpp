#include "cases/parse.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <stdexcept>

namespace heapbench {

namespace {

// K, M or G (either case) as a multiple of 1024; 1 for none; 0 for anything else.
std::uint64_t suffix_multiplier(std::string_view suffix) {
  if (suffix.empty()) return 1;
  if (suffix.size() != 1) return 0;
  switch (suffix[0]) {
    case 'K': case 'k': return 1ull << 10;
    case 'M': case 'm': return 1ull << 20;
    case 'G': case 'g': return 1ull << 30;
    default: return 0;
  }
}

}  // namespace

std::uint64_t parse_quantity(std::string_view text) {
  auto bad = [&](const char* why) {
    return std::invalid_argument(fmt::format("'{}' is not a valid quantity: {}", text, why));
  };
  if (text.empty()) throw bad("empty");
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  const std::uint64_t multiplier = suffix_multiplier(text.substr(digits));
  if (digits == 0 || multiplier == 0) throw bad("expected a positive whole number, optionally followed by K, M or G");

  std::uint64_t value = 0;
  constexpr auto kMax = std::numeric_limits<std::uint64_t>::max();
  for (std::size_t i = 0; i < digits; ++i) {
    const unsigned d = static_cast<unsigned>(text[i] - '0');
    if (value > (kMax - d) / 10) throw bad("too large");
    value = value * 10 + d;
  }
  if (value == 0) throw bad("must be greater than zero");
  if (value > kMax / multiplier) throw bad("too large");
  return value * multiplier;
}

std::uint64_t parse_heap_size(std::string_view text) {
  const bool bare = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
  const std::uint64_t value = parse_quantity(text);
  if (!bare) return value;
  if (const auto bytes = checked_product(value, 1ull << 20)) return *bytes;
  throw std::invalid_argument(fmt::format("'{}' is not a valid quantity: too large ({} MiB)", text, text));
}

std::vector<std::string> split_list(std::string_view text, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = text.find(sep, start);
    out.emplace_back(text.substr(start, at == std::string_view::npos ? text.npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

std::vector<std::uint64_t> parse_quantity_list(std::string_view text) {
  std::vector<std::uint64_t> out;
  if (text.empty()) throw std::invalid_argument("empty list");
  for (const std::string& item : split_list(text)) {
    if (item.empty()) throw std::invalid_argument(fmt::format("'{}' has an empty item", text));
    out.push_back(parse_quantity(item));
  }
  return out;
}

std::string format_quantity(std::uint64_t value) {
  if (value != 0 && value % (1ull << 30) == 0) return fmt::format("{}G", value >> 30);
  if (value != 0 && value % (1ull << 20) == 0) return fmt::format("{}M", value >> 20);
  if (value != 0 && value % (1ull << 10) == 0) return fmt::format("{}K", value >> 10);
  return fmt::format("{}", value);
}

std::string name_of_file(std::string_view path) {
  const std::size_t slash = path.find_last_of('/');
  std::string base(slash == std::string_view::npos ? path : path.substr(slash + 1));
  const std::size_t dot = base.rfind('.');
  if (dot != std::string::npos && dot > 0) base.resize(dot);
  for (char& c : base) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!keep) c = '_';
  }
  return base;
}

}  // namespace heapbench
