#include <gtest/gtest.h>

#include "device/device.hpp"

namespace heapbench {
namespace {

TEST(NoDevice, AMachineWithoutADriverIsToldSoInWords) {
  // What the CUDA runtime answers where libcuda is missing or too old: the
  // message was the bare error name.
  const std::string why = no_device_reason("cudaErrorInsufficientDriver", "CUDA driver version is insufficient for CUDA runtime version");
  EXPECT_EQ(why.rfind("no usable NVIDIA driver: none is installed, or it is older", 0), 0u) << why;
  EXPECT_NE(why.find("(cudaErrorInsufficientDriver)"), std::string::npos) << "the name stays, for searching";
  EXPECT_NE(why.find("--benchmark_list_tests need no GPU"), std::string::npos);
  EXPECT_EQ(why.find('\n'), std::string::npos);
}

TEST(NoDevice, NoGpuAndOtherErrorsNameTheError) {
  EXPECT_NE(no_device_reason("cudaErrorNoDevice", "no CUDA-capable device is detected").find("the driver sees no GPU"),
            std::string::npos);
  const std::string other = no_device_reason("cudaErrorUnknown", "unknown error");
  EXPECT_NE(other.find("cudaGetDeviceCount returned cudaErrorUnknown (unknown error)"), std::string::npos) << other;
}

}  // namespace
}  // namespace heapbench
