#pragma once
// The one place that talks to NVTX. Every range is in the "heapbench" domain so
// Nsight Systems groups them; -DHEAPBENCH_NVTX=OFF defines NVTX_DISABLE and
// compiles every range out.
#include <nvtx3/nvtx3.hpp>

namespace heapbench::nvtx {

struct domain {
  static constexpr char const* name{"heapbench"};
};

// Phases of a case, coloured so a timeline reads at a glance.
enum class Phase { case_, heap_reset, warmup, alloc, use, free_, verify };

inline nvtx3::rgb phase_colour(Phase p) {
  switch (p) {
    case Phase::case_: return {0x4c, 0x72, 0xb0};
    case Phase::heap_reset: return {0xc4, 0x4e, 0x52};
    case Phase::warmup: return {0x99, 0x99, 0x99};
    case Phase::alloc: return {0x55, 0xa8, 0x68};
    case Phase::use: return {0xdd, 0x84, 0x52};
    case Phase::free_: return {0x81, 0x72, 0xb3};
    case Phase::verify: return {0xcc, 0xb9, 0x74};
  }
  return {0, 0, 0};
}

using range = nvtx3::scoped_range_in<domain>;

inline nvtx3::event_attributes attrs(const char* message, Phase p) {
  return nvtx3::event_attributes{nvtx3::message{message}, nvtx3::color{phase_colour(p)}};
}

inline void mark(const char* message, Phase p) { nvtx3::mark_in<domain>(attrs(message, p)); }

}  // namespace heapbench::nvtx
