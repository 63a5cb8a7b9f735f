#pragma once
#include "heapbench/device.hpp"
#include "heapbench/energy.hpp"
#include "heapbench/options.hpp"

namespace heapbench {
// Records the device and the build in the results file (AddCustomContext), so
// files from different GPUs, drivers and commits can be told apart and compared.
// `energy`: whether and from which NVML device the energy was read (null: not said).
void add_results_context(const DeviceInfo& d, const Options& o, const energy::Meter* energy = nullptr);
}  // namespace heapbench
