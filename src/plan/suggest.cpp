#include "plan/suggest.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace heapbench {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: Levenshtein plus transposition of neighbours
  // ("adivse"), the commonest slip of a typist.
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

std::string closest(std::string_view typed, const std::vector<std::string>& known) {
  std::string lower(typed);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  std::string best;
  std::size_t best_distance = 0;
  for (const auto& k : known) {
    if (k == typed) continue;
    // Case alone is no slip worth more than one edit ("PER_THREAD").
    const std::size_t dist = std::min(edit_distance(typed, k), edit_distance(lower, k) + (lower == k ? 1 : 0));
    const std::size_t longer = std::max(typed.size(), k.size());
    if (dist == 0 || dist > 3 || 3 * dist > longer) continue;
    if (best.empty() || dist < best_distance) {
      best = k;
      best_distance = dist;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view typed, const std::vector<std::string>& known) {
  const std::string c = closest(typed, known);
  return c.empty() ? std::string() : fmt::format("; did you mean '{}'?", c);
}

}  // namespace heapbench
