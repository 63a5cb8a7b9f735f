#include <fmt/format.h>

#include "device/device.hpp"

namespace heapbench {

std::string no_device_reason(std::string_view error_name, std::string_view error_string) {
  constexpr std::string_view kNeedsNone = "--help, --version and --benchmark_list_tests need no GPU";
  if (error_name == "cudaErrorInsufficientDriver") {
    return fmt::format("no usable NVIDIA driver: none is installed, or it is older than this build's CUDA runtime "
                       "needs ({}); heapbench runs on an NVIDIA GPU with its driver (nvidia-smi shows both); {}",
                       error_name, kNeedsNone);
  }
  if (error_name == "cudaErrorNoDevice") {
    return fmt::format("no CUDA device: the driver sees no GPU ({}; CUDA_VISIBLE_DEVICES may hide them); {}", error_name,
                       kNeedsNone);
  }
  return fmt::format("no usable CUDA device: cudaGetDeviceCount returned {} ({}); {}", error_name, error_string,
                     kNeedsNone);
}

}  // namespace heapbench
