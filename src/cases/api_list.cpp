// The one host file that includes the list of APIs (cases/api_list.hpp):
// the rest of the host code reads it through these functions, so a build with
// other adapters recompiles this file alone.
#include "cases/api_list.hpp"

#include "cases/catalog.hpp"

namespace heapbench {

const std::vector<ApiTraits>& api_traits_list() {
  static const std::vector<ApiTraits> list(kApiTraits.begin(), kApiTraits.end());
  return list;
}

const std::vector<std::string_view>& built_api_names() {
  static const std::vector<std::string_view> names(kApis.begin(), kApis.end());
  return names;
}

const ApiTraits* find_api_traits(std::string_view name) {
  for (const ApiTraits& t : api_traits_list()) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::string_view zoo_pins() { return HEAPBENCH_ZOO_PINS; }

}  // namespace heapbench
