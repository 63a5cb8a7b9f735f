// GPU tests run only where a CUDA device answers; elsewhere the binary says why
// and exits 77, which CTest reports as skipped.
#include <gtest/gtest.h>

#include <cstdio>

#include "device/device.hpp"

int main(int argc, char** argv) {
  try {
    heapbench::probe_device(0);
  } catch (const std::exception& e) {
    std::printf("SKIPPED: %s\n", e.what());
    return 77;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
