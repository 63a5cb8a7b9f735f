// The device library's handles against the host list of APIs, at run time and
// without a GPU: every built API with a handle is dispatchable on the device,
// and the device knows no API the host does not list (src/device/api_registry.cu
// checks the traits themselves at compile time).
#include <gtest/gtest.h>

#include <algorithm>

#include "heapbench/catalog.hpp"
#include "heapbench/device.hpp"

namespace heapbench {
namespace {

TEST(ApiRegistry, HostAndDeviceListTheSameHandles) {
  std::vector<std::string> host;
  for (const auto& t : kApiTraits) {
    if (t.built && t.has_handle()) host.emplace_back(t.name);
  }
  std::vector<std::string> device = device_api_names();
  std::sort(host.begin(), host.end());
  std::sort(device.begin(), device.end());
  EXPECT_EQ(host, device);
}

TEST(ApiRegistry, NamesAreUnique) {
  for (std::size_t i = 0; i < kApiTraits.size(); ++i) {
    for (std::size_t j = i + 1; j < kApiTraits.size(); ++j) EXPECT_NE(kApiTraits[i].name, kApiTraits[j].name);
  }
}

TEST(ApiRegistry, CatalogReadsTheTraits) {
  for (const auto& t : kApiTraits) {
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
