#include "subcommand.hpp"

#include "heapbench/version.hpp"

namespace heapbench {

std::optional<DeviceInfo> probe_for(const char* name, const DeviceHooks& hooks, int device) {
  try {
    return hooks.probe(device);
  } catch (const std::exception& e) {
    fmt::print(stderr, "heapbench {}: {}\n", name, e.what());
    return std::nullopt;
  }
}

nlohmann::json device_context(const DeviceInfo& device) {
  return {{"gpu_name", device.name},
          {"gpu_index", device.index},
          {"gpu_memory_bytes", device.total_memory},
          {"cuda_driver_version", device.driver_version},
          {"cuda_runtime_version", device.runtime_version},
          {"heapbench_version", kVersion},
          {"heapbench_git_commit", kGitCommit}};
}

}  // namespace heapbench
