#include "report/context.hpp"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <regex>
#include <string>
#include <string_view>

#include "cases/catalog.hpp"  // zoo_pins()
#include "report/version.hpp"

extern char** environ;

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

// `arg` as a POSIX shell reads it back: as it is where it has no character a
// shell treats specially, else in single quotes (a quote inside as '\'').
std::string shell_quoted(const std::string& arg) {
  const bool plain = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](unsigned char c) {
    return std::isalnum(c) || std::strchr("_./:=,+@%-", c) != nullptr;
  });
  if (plain) return arg;
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Besides heapbench's own (HEAPBENCH_*), the variables that change what a run
// measures or shows: those heapbench reads (getenv: TERM for the console's
// colour; CUDA_HOME and CUDA_PATH, where check looks for compute-sanitizer)
// and those the CUDA runtime reads for the devices and launches it gives
// heapbench. tests/cli/console_test.py checks that every getenv of the sources
// is here, or is PATH (check's search), HEAPBENCH_PARENT_PID or
// HEAPBENCH_ENERGY_RESOLUTION (internal: from parent to child).
constexpr const char* kRecordedVariables[] = {
    "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_LAUNCH_BLOCKING", "CUDA_MODULE_LOADING",
    "CUDA_DEVICE_MAX_CONNECTIONS", "CUDA_CACHE_DISABLE", "CUDA_HOME", "CUDA_PATH", "TERM"};

}  // namespace

std::string command_line(const Options& o) {
  std::vector<std::string> argv{o.benchmark_args.empty() ? std::string("heapbench") : o.benchmark_args.front()};
  argv.insert(argv.end(), o.raw_args.begin(), o.raw_args.end());
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + shell_quoted(a);
  return out;
}

std::string recorded_environment() {
  std::vector<std::string> set;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    const bool listed = std::find_if(std::begin(kRecordedVariables), std::end(kRecordedVariables),
                                     [&](const char* v) { return name == v; }) != std::end(kRecordedVariables);
    const bool ours = name.rfind("HEAPBENCH_", 0) == 0 && name != "HEAPBENCH_PARENT_PID" && name != energy::kResolutionVar;
    if (listed || ours) set.push_back(entry);
  }
  std::sort(set.begin(), set.end());
  std::string out;
  for (const auto& s : set) out += (out.empty() ? "" : " ") + shell_quoted(s);
  return out;
}

void add_results_context(const DeviceInfo& d, const Options& o, const energy::Meter* energy) {
  auto add = [](const char* key, const std::string& value) { benchmark::AddCustomContext(key, value); };
  add("heapbench_schema_version", std::to_string(kSchemaVersion));
  add("heapbench_version", kVersion);
  add("heapbench_git_commit", kGitCommit);
  // How the file was made: the command line as given, the environment that
  // bears on it, the build (docs/json.md, "The context").
  add(kCommandLineKey, command_line(o));
  add("heapbench_environment", recorded_environment());
  add("heapbench_build_type", kBuildType);
  add("heapbench_cxx_compiler", kCxxCompiler);
  add("heapbench_cxx_flags", kCxxFlags);
  add("heapbench_cuda_compiler", kCudaCompiler);
  add("heapbench_cuda_flags", kCudaFlags);
  add("heapbench_cuda_architectures", kCudaArchitectures);
  // The published allocators built in, each at its pinned commit (docs/zoo.md).
  if (!zoo_pins().empty()) add("heapbench_zoo", std::string(zoo_pins()));
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
