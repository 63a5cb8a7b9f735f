#pragma once
// The one place that talks to NVTX (NVTX3's C++ API). Every range is in the
// "heapbench" domain so Nsight Systems groups them. A case is a range named by
// its benchmark name with the thread count as payload; inside it every phase is
// a range with a registered name, a named category and a colour of its own,
// and a device reset is a mark. -DHEAPBENCH_NVTX=OFF defines NVTX_DISABLE and
// compiles every range out.
#include <nvtx3/nvtx3.hpp>

#include <cstdint>
#include <vector>

namespace heapbench::nvtx {

struct domain {
  static constexpr char const* name{"heapbench"};
};

enum class Phase : std::uint32_t {
  case_ = 1,    // one benchmark case, named by its full name
  heap,         // setting cudaLimitMallocHeapSize (a device reset when it changes)
  warmup,       // the untimed first round
  allocate,     // the timed allocating launch
  use,          // writing and reading back every byte
  free_,        // the timed freeing launch
  verify,       // waiting for the GPU and reading counters (capacity's untimed refills too)
  probe,        // heap capacity before and after the case
  count_
};

struct PhaseInfo {
  const char* name;
  nvtx3::rgb colour;
};

inline const PhaseInfo& info(Phase p) {
  static const PhaseInfo table[] = {
      {"", {0, 0, 0}},
      {"case", {0x4c, 0x72, 0xb0}},
      {"heap", {0xc4, 0x4e, 0x52}},
      {"warm-up", {0x99, 0x99, 0x99}},
      {"allocate", {0x55, 0xa8, 0x68}},
      {"use", {0xdd, 0x84, 0x52}},
      {"free", {0x81, 0x72, 0xb3}},
      {"verify", {0xcc, 0xb9, 0x74}},
      {"heap capacity probe", {0x64, 0xb5, 0xcd}},
  };
  return table[static_cast<std::uint32_t>(p)];
}

// Categories are named once per process; phase names are registered strings
// because they repeat for every round.
inline const nvtx3::named_category_in<domain>& category(Phase p) {
  static const std::vector<nvtx3::named_category_in<domain>> cats = [] {
    std::vector<nvtx3::named_category_in<domain>> c;
    for (std::uint32_t i = 1; i < static_cast<std::uint32_t>(Phase::count_); ++i) {
      c.emplace_back(i, info(static_cast<Phase>(i)).name);
    }
    return c;
  }();
  return cats[static_cast<std::uint32_t>(p) - 1];
}

inline const nvtx3::registered_string_in<domain>& name(Phase p) {
  static const std::vector<nvtx3::registered_string_in<domain>> names = [] {
    std::vector<nvtx3::registered_string_in<domain>> n;
    for (std::uint32_t i = 1; i < static_cast<std::uint32_t>(Phase::count_); ++i) {
      n.emplace_back(info(static_cast<Phase>(i)).name);
    }
    return n;
  }();
  return names[static_cast<std::uint32_t>(p) - 1];
}

using range = nvtx3::scoped_range_in<domain>;

// A phase: registered name, category, colour, and a number as payload (the
// round's index, -1 for none).
inline nvtx3::event_attributes phase(Phase p, std::int64_t payload = -1) {
  return nvtx3::event_attributes{name(p), category(p), nvtx3::color{info(p).colour}, nvtx3::payload{payload}};
}

// A case: its full benchmark name (not registered: each appears once) and the
// thread count as payload.
inline nvtx3::event_attributes case_range(const char* benchmark_name, std::uint64_t threads) {
  return nvtx3::event_attributes{nvtx3::message{benchmark_name}, category(Phase::case_),
                                 nvtx3::color{info(Phase::case_).colour},
                                 nvtx3::payload{static_cast<std::int64_t>(threads)}};
}

inline void mark(const char* message, Phase p) {
  nvtx3::mark_in<domain>(nvtx3::event_attributes{nvtx3::message{message}, category(p), nvtx3::color{info(p).colour}});
}

}  // namespace heapbench::nvtx
