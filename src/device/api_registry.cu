// The device handles against the host list of APIs (cases/api_list.hpp):
// a handle whose traits are not its host entry, or a built host entry with no
// handle, fails the build here rather than a case at run time.
#include "device/call_paths.cuh"

namespace heapbench::alloc {
namespace {

constexpr bool same_traits(const ApiTraits& a, const ApiTraits& b) {
  return a.name == b.name && a.source == b.source && a.takes_align == b.takes_align && a.call_path == b.call_path &&
         a.inner == b.inner && a.built == b.built && a.frees == b.frees;
}

template <class Api>
constexpr bool matches_host() {
  const ApiTraits* host = listed_api(Api::traits.name);
  return host != nullptr && host->built && same_traits(*host, Api::traits) && Api::traits.has_handle();
}

template <class... Apis>
constexpr bool all_match_host(ApiList<Apis...>) {
  return (matches_host<Apis>() && ...);
}

template <class... Apis>
constexpr bool lists(ApiList<Apis...>, std::string_view name) {
  return ((Apis::traits.name == name) || ...);
}

constexpr bool every_host_handle_built() {
  for (const auto& t : kApiTraits) {
    if (!t.built || !t.has_handle()) continue;
    if (!(t.is_call_path() ? lists(CallPathApis{}, t.name) : lists(HeapApis{}, t.name))) return false;
  }
  return true;
}

static_assert(all_match_host(HeapApis{}),
              "a handle in HeapApis has traits that are not its built entry in kApiTraits (cases/api_list.hpp): "
              "point its `traits` at that entry");
static_assert(all_match_host(CallPathApis{}),
              "a handle in CallPathApis has traits that are not its built entry in kApiTraits (cases/api_list.hpp)");
static_assert(every_host_handle_built(),
              "kApiTraits lists a built API with a handle that is in neither HeapApis nor CallPathApis: add its type");

template <class... Apis>
void append_names(ApiList<Apis...>, std::vector<std::string>& out) {
  (out.emplace_back(Apis::traits.name), ...);
}

}  // namespace
}  // namespace heapbench::alloc

namespace heapbench {

std::vector<std::string> device_api_names() {
  std::vector<std::string> out;
  alloc::append_names(alloc::HeapApis{}, out);
  alloc::append_names(alloc::CallPathApis{}, out);
  return out;
}

}  // namespace heapbench
