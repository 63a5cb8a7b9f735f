// Each pattern file's factory beside its traits: the table the CUDA backend
// looks a case's pattern up in. The files are those of CMakeLists.txt's
// heapbench_pattern() lines; each defines `patterns::<stem>_patterns` (its
// traits, read by the host catalog too) and `detail::make_<stem>` (its rounds).
#include <fmt/format.h>

#include "device/round.cuh"

namespace heapbench::detail {

#define HB_DECLARE_FACTORY(stem) std::unique_ptr<Round> make_##stem(const PatternTraits&, const Case&, double);
HEAPBENCH_PATTERN_FILES(HB_DECLARE_FACTORY)
#undef HB_DECLARE_FACTORY

namespace {

struct PatternFile {
  const PatternTraits* const* traits;  // the file's list
  std::size_t count;
  PatternFactory make;
};

#define HB_PATTERN_FILE(stem) PatternFile{patterns::stem##_patterns.data(), patterns::stem##_patterns.size(), &make_##stem},
constexpr PatternFile kPatternFiles[] = {HEAPBENCH_PATTERN_FILES(HB_PATTERN_FILE)};
#undef HB_PATTERN_FILE

}  // namespace

PatternFactory find_pattern_factory(const PatternTraits& pattern) {
  for (const PatternFile& f : kPatternFiles) {
    for (std::size_t i = 0; i < f.count; ++i) {
      if (f.traits[i] == &pattern) return f.make;
    }
  }
  return nullptr;
}

}  // namespace heapbench::detail
