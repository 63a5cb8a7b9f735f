#include "context.hpp"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <fstream>
#include <regex>
#include <string>
#include <string_view>

#include "heapbench/api_traits.hpp"  // and through it heapbench/user_apis.hpp: HEAPBENCH_ZOO_PINS
#include "heapbench/version.hpp"

namespace heapbench {
namespace {

// The driver's release (580.159.04), which cudaDriverGetVersion does not give
// (it gives the CUDA API level, 13000); "" where the kernel module does not say.
std::string driver_release() {
  std::ifstream f("/proc/driver/nvidia/version");
  std::string line;
  std::smatch m;
  if (std::getline(f, line) && std::regex_search(line, m, std::regex(R"(Kernel Module(?: for \w+)?\s+([0-9][0-9.]*))"))) return m[1];
  return "";
}

}  // namespace

void add_results_context(const DeviceInfo& d, const Options& o, const energy::Meter* energy) {
  auto add = [](const char* key, const std::string& value) { benchmark::AddCustomContext(key, value); };
  add("heapbench_schema_version", std::to_string(kSchemaVersion));
  add("heapbench_version", kVersion);
  add("heapbench_git_commit", kGitCommit);
  // The published allocators built in, each at its pinned commit (docs/zoo.md).
  if (std::string_view(HEAPBENCH_ZOO_PINS).size() != 0) add("heapbench_zoo", HEAPBENCH_ZOO_PINS);
  add("gpu_index", std::to_string(d.index));
  add("gpu_name", d.name);
  add("gpu_compute_capability", fmt::format("{}.{}", d.cc_major, d.cc_minor));
  add("gpu_sm_count", std::to_string(d.sm_count));
  add("gpu_sm_clock_khz", std::to_string(d.sm_clock_khz));
  add("gpu_mem_clock_khz", std::to_string(d.mem_clock_khz));
  add("gpu_memory_bytes", std::to_string(d.total_memory));
  add("cuda_driver_version", std::to_string(d.driver_version));
  if (const std::string release = driver_release(); !release.empty()) add("gpu_driver_release", release);
  add("cuda_runtime_version", std::to_string(d.runtime_version));
  if (!d.pci_bus_id.empty()) add("gpu_pci_bus_id", d.pci_bus_id);
  if (energy) {
    for (const auto& [key, value] : energy->context()) add(key.c_str(), value);
  }
  add("heapbench_kernel_budget_s", fmt::format("{:g}", o.kernel_budget_s));
  add("heapbench_sweep", o.sweep);
  // The stopping rule every case of the file ran under (docs/metrics.md).
  add("heapbench_max_noise", fmt::format("{:g}", o.rule.max_noise));
  add("heapbench_min_rounds", std::to_string(o.rule.min_rounds));
  add("heapbench_max_time_s", fmt::format("{:g}", o.rule.max_time_s));
}

}  // namespace heapbench
