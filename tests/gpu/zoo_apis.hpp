// The zoo's APIs (HEAPBENCH_ZOO) in this build, from tests/CMakeLists.txt: the
// in-process GPU tests leave them to the isolated ones (zoo, heapbench check),
// since some fault where CUDA's heap returns NULL (docs/zoo.md) and a device
// fault in one process fails every test after it.
#pragma once

#include <string>
#include <string_view>

namespace heapbench {

inline bool from_zoo(std::string_view api) {
  const std::string list = std::string(",") + HB_TEST_ZOO_APIS + ",";
  return list.find("," + std::string(api) + ",") != std::string::npos;
}

}  // namespace heapbench
