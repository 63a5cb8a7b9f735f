// How fine NVML's energy counter is on this GPU: the measured figure behind
// the threshold of docs/metrics.md ("Energy"). A kernel keeps every SM busy
// for --seconds while the host reads nvmlDeviceGetTotalEnergyConsumption in a
// tight loop; the counter's changes give its update interval and its smallest
// step. Prints one JSON object:
//   gpu_name, gpu_pci_bus_id, seconds, reads, updates,
//   update_s (median time between two changes), min_update_s, max_update_s,
//   min_step_mj, max_step_mj (smallest and largest non-zero change),
//   avg_power_w (energy between the first and the last change / their distance),
//   power_w (NVML's reading at the end), clock_event_reasons and their names,
//   min_section_s (the shortest section heapbench publishes energy for:
//   kMinUpdatesPerSection x update_s), energy_read_s, power_read_s,
//   reasons_read_s (the median wall time of one read of each, over 21 reads
//   with the GPU idle: what a case's section pays per read)
//
//   energy_probe [--device=N] [--seconds=S]
//
// Exit 0 with the JSON; 77 where there is no CUDA device; 1 where NVML cannot
// read the counter (the reason on stderr) or it changed fewer than twice; 2 on
// bad arguments.
#include <cuda_runtime.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

#include "measure/energy.hpp"

namespace {

#define PROBE_CHECK(call)                                                                                     \
  do {                                                                                                        \
    const cudaError_t e_ = (call);                                                                            \
    if (e_ != cudaSuccess) {                                                                                  \
      fmt::print(stderr, "energy_probe: {} failed at {}:{}: {}\n", #call, __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                                                           \
    }                                                                                                         \
  } while (0)

}  // namespace

// energy_probe_kernel.cu
cudaError_t launch_busy(int blocks, int threads, std::uint64_t ns, float* sink);

int main(int argc, char** argv) {
  CLI::App app{"NVML energy counter resolution under a busy kernel"};
  int device = 0;
  double seconds = 2.0;
  app.add_option("--device", device, "CUDA device index")->check(CLI::NonNegativeNumber);
  app.add_option("--seconds", seconds, "how long the kernel runs and the counter is sampled")
      ->check(CLI::Range(0.1, 60.0));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints --help, or the error in CLI11's words
    return code == 0 ? 0 : 2;
  }

  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("SKIPPED: no CUDA device\n");
    return 77;
  }
  if (device >= count) {
    fmt::print(stderr, "energy_probe: --device={}: only {} CUDA device(s)\n", device, count);
    return 2;
  }
  PROBE_CHECK(cudaSetDevice(device));
  cudaDeviceProp prop{};
  PROBE_CHECK(cudaGetDeviceProperties(&prop, device));
  char bus_id[32] = {};
  PROBE_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device));

  heapbench::energy::Opened opened = heapbench::energy::open_nvml(bus_id);
  if (!opened.reader) {
    fmt::print(stderr, "energy_probe: no energy counter: {}\n", opened.absent);
    return 1;
  }
  heapbench::energy::Reader& reader = *opened.reader;
  float* sink = nullptr;
  PROBE_CHECK(cudaMalloc(&sink, sizeof(float)));
  // Load the kernel before sampling: the first launch's module load is no part of the run.
  PROBE_CHECK(launch_busy(1, 1, 1000, sink));
  PROBE_CHECK(cudaDeviceSynchronize());

  const auto clock = heapbench::energy::steady_clock();
  PROBE_CHECK(launch_busy(prop.multiProcessorCount * 4, 256, static_cast<std::uint64_t>(seconds * 1e9), sink));
  std::vector<heapbench::energy::Sample> samples;
  std::optional<std::uint64_t> reasons;
  try {
    // From the launch on: avg_power_w includes the kernel's first moments.
    samples = heapbench::energy::sample(reader, clock, seconds, INT_MAX);
    reasons = reader.clock_event_reasons();
  } catch (const heapbench::energy::ReadError& e) {
    fmt::print(stderr, "energy_probe: {}\n", e.what());
    return 1;
  }
  const std::optional<double> power = reader.power_w();
  PROBE_CHECK(cudaDeviceSynchronize());
  // What one read of each costs, the GPU idle.
  const auto median_read_s = [&](auto read) {
    std::vector<double> t;
    for (int i = 0; i < 21; ++i) {
      const double a = clock();
      read();
      t.push_back(clock() - a);
    }
    std::nth_element(t.begin(), t.begin() + 10, t.end());
    return t[10];
  };
  double energy_read_s = 0, power_read_s = 0, reasons_read_s = 0;
  try {
    energy_read_s = median_read_s([&] { (void)reader.total_energy_mj(); });
    power_read_s = median_read_s([&] { (void)reader.power_w(); });
    reasons_read_s = median_read_s([&] { (void)reader.clock_event_reasons(); });
  } catch (const heapbench::energy::ReadError& e) {
    fmt::print(stderr, "energy_probe: {}\n", e.what());
    return 1;
  }
  PROBE_CHECK(cudaFree(sink));

  const heapbench::energy::Resolution r = heapbench::energy::analyse(samples);
  nlohmann::ordered_json out;
  out["gpu_name"] = prop.name;
  out["gpu_pci_bus_id"] = bus_id;
  out["nvml_device"] = reader.device();
  out["seconds"] = seconds;
  out["reads"] = r.reads;
  out["updates"] = r.updates;
  out["update_s"] = r.update_s;
  out["min_update_s"] = r.min_update_s;
  out["max_update_s"] = r.max_update_s;
  out["min_step_mj"] = r.min_step_mj;
  out["max_step_mj"] = r.max_step_mj;
  // Between the first and the last change: whole update intervals only.
  double first_t = 0, last_t = 0;
  std::uint64_t first_mj = 0, last_mj = 0;
  for (std::size_t i = 1; i < samples.size(); ++i) {
    if (samples[i].mj == samples[i - 1].mj) continue;
    if (first_t == 0) first_t = samples[i].t, first_mj = samples[i].mj;
    last_t = samples[i].t, last_mj = samples[i].mj;
  }
  if (last_t > first_t) out["avg_power_w"] = static_cast<double>(last_mj - first_mj) * 1e-3 / (last_t - first_t);
  if (power) out["power_w"] = *power;
  if (reasons) {
    out["clock_event_reasons"] = *reasons;
    out["clock_event_names"] = heapbench::energy::describe_clock_events(*reasons);
  }
  out["min_section_s"] = heapbench::energy::kMinUpdatesPerSection * r.update_s;
  out["energy_read_s"] = energy_read_s;
  out["power_read_s"] = power_read_s;
  out["reasons_read_s"] = reasons_read_s;
  std::printf("%s\n", out.dump(2).c_str());
  if (r.updates < 2) {
    fmt::print(stderr, "energy_probe: the counter changed {} time(s) in {} s: no interval to report\n", r.updates,
               seconds);
    return 1;
  }
  return 0;
}
