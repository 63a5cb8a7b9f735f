// The catalog's answers about APIs, against facts stated here (not derived from
// the traits they come from), and the API names, each once. That the device
// library has a handle for every API the host lists needs no run-time test:
// both come from cases/api_list.hpp, and src/device/api_registry.cu checks
// each handle against its entry at compile time (issue 37: the run-time
// comparison of the two lists could not fail).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "cases/catalog.hpp"
#include "device/device.hpp"
#include "same_names.hpp"

namespace heapbench {
namespace {

TEST(ApiRegistry, NamesAreUnique) {
  std::vector<std::string_view> names;
  for (const auto& t : api_traits_list()) names.push_back(t.name);
  registry_test::expect_unique(names);
}

TEST(ApiRegistry, TheCatalogAnswersWhatTheApisAre) {
  EXPECT_TRUE(is_api("malloc"));
  EXPECT_TRUE(is_api("slab"));
  EXPECT_FALSE(is_api("malocc"));
  EXPECT_TRUE(takes_align("aligned"));
  EXPECT_TRUE(takes_align("cuda_std_aligned"));
  EXPECT_FALSE(takes_align("malloc"));
  EXPECT_FALSE(takes_align("new"));
  EXPECT_TRUE(is_call_path("malloc_fnptr"));
  EXPECT_FALSE(is_call_path("malloc"));
  const ApiTraits* fnptr = find_api_traits("bump_fnptr");
  ASSERT_NE(fnptr, nullptr);
  EXPECT_EQ(fnptr->inner, "bump");
  EXPECT_EQ(fnptr->source, Source::own_arena);
  EXPECT_EQ(find_api_traits("alloca")->source, Source::stack);
  EXPECT_EQ(find_api_traits("printf")->source, Source::printf_fifo);
  EXPECT_TRUE(find_api_traits("bump")->baseline);
  EXPECT_FALSE(find_api_traits("malloc")->baseline);
}

TEST(ApiRegistry, TheDeviceLibraryHasAHandleForMalloc) {
  const std::vector<std::string> names = device_api_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "malloc"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "slab"), names.end());
}

}  // namespace
}  // namespace heapbench
