#pragma once
// Every API heapbench knows, as compile-time data: the built-in ones
// (heapbench/api_traits.hpp's api::) and the adapters' (src/allocators, the
// zoo's, -DHEAPBENCH_ALLOCATORS'), through the generated heapbench/user_apis.hpp.
//
// Included by the device library (the handles are checked against it,
// src/device/api_registry.cu) and, on the host, by src/cases/api_list.cpp alone,
// which serves it to the rest of the host code at run time (api_traits_list(),
// built_api_names(), find_api_traits(): cases/catalog.hpp). So another set
// of adapters recompiles one host file, not every one (the bring-your-own test
// links the rest of the host objects as they are: tests/CMakeLists.txt). The
// host and harness files are compiled with HEAPBENCH_NO_API_LIST, which makes
// including this header from any of them, directly or not, a build error.
#ifdef HEAPBENCH_NO_API_LIST
#error "cases/api_list.hpp is included by src/cases/api_list.cpp and the device library only: \
use api_traits_list(), built_api_names() or find_api_traits() (cases/catalog.hpp)"
#endif
#include <array>
#include <cstddef>
#include <string_view>

#include "heapbench/api_traits.hpp"
// The adapters (generated at configure time: HEAPBENCH_USER_API_TRAITS is
// empty or ", heapbench_user::<stem>_traits, ...").
#include "heapbench/user_apis.hpp"

namespace heapbench {

// Every API heapbench knows, built or not, in the order --help lists them.
inline constexpr std::array kApiTraits = {
    api::kMalloc, api::kAligned, api::kCudaStdAligned, api::kNew, api::kBump, api::kAlloca, api::kPrintf,
    api::kMallocFnptr, api::kBumpFnptr, api::kMallocNvfunction, api::kBumpNvfunction,
    api::kWarpAggregated, api::kTwoPass, api::kTwoPassAsync HEAPBENCH_USER_API_TRAITS};

namespace detail {
constexpr std::size_t count_built() {
  std::size_t n = 0;
  for (const auto& t : kApiTraits) n += t.built ? 1 : 0;
  return n;
}
constexpr std::array<std::string_view, count_built()> built_names() {
  std::array<std::string_view, count_built()> out{};
  std::size_t i = 0;
  for (const auto& t : kApiTraits) {
    if (t.built) out[i++] = t.name;
  }
  return out;
}
}  // namespace detail

// The names of the APIs built into this binary.
inline constexpr std::array<std::string_view, detail::count_built()> kApis = detail::built_names();

// The entry named `name` (built or not), or nullptr, at compile time (the
// host's find_api_traits() is this at run time).
constexpr const ApiTraits* listed_api(std::string_view name) {
  for (const auto& t : kApiTraits) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

// The indirect call path `path` over the direct API `inner`, or nullptr.
constexpr const ApiTraits* find_call_path(std::string_view inner, CallPath path) {
  for (const auto& t : kApiTraits) {
    if (t.call_path == path && t.inner == inner) return &t;
  }
  return nullptr;
}

}  // namespace heapbench
