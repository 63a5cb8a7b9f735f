#pragma once
// "Did you mean": the known name closest to what was typed, for the messages
// that refuse a mistyped flag, subcommand, pattern or API name.
#include <string>
#include <string_view>
#include <vector>

namespace heapbench {

// Edits (insert, delete, substitute, swap two neighbours) from `a` to `b`.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The entry of `known` closest to `typed`, if it is close enough to be a
// slip: at most a third of the longer name's letters differ, and at most 3
// (so "adivse" finds "advise", "--sizs" "--sizes"). "" when none is; the
// first of equally close ones.
std::string closest(std::string_view typed, const std::vector<std::string>& known);

// "; did you mean 'X'?" for closest(), or "".
std::string did_you_mean(std::string_view typed, const std::vector<std::string>& known);

}  // namespace heapbench
