// The device library's handles against the host list of APIs, at run time and
// without a GPU: every built API with a handle is dispatchable on the device,
// and the device knows no API the host does not list (src/device/api_registry.cu
// checks the traits themselves at compile time).
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "heapbench/catalog.hpp"
#include "heapbench/device.hpp"
#include "same_names.hpp"

namespace heapbench {
namespace {

TEST(ApiRegistry, HostAndDeviceListTheSameHandles) {
  std::vector<std::string> host;
  for (const auto& t : api_traits_list()) {
    if (t.built && t.has_handle()) host.emplace_back(t.name);
  }
  registry_test::expect_same_names(host, device_api_names());
}

TEST(ApiRegistry, NamesAreUnique) {
  std::vector<std::string_view> names;
  for (const auto& t : api_traits_list()) names.push_back(t.name);
  registry_test::expect_unique(names);
}

TEST(ApiRegistry, CatalogReadsTheTraits) {
  for (const auto& t : api_traits_list()) {
    EXPECT_EQ(is_api(t.name), t.built) << t.name;
    EXPECT_EQ(takes_align(t.name), t.takes_align) << t.name;
    EXPECT_EQ(is_call_path(t.name), t.is_call_path()) << t.name;
    if (t.is_call_path()) {
      const ApiTraits* inner = find_api_traits(t.inner);
      ASSERT_NE(inner, nullptr) << t.name;
      EXPECT_EQ(inner->source, t.source) << t.name;
    }
  }
}

}  // namespace
}  // namespace heapbench
