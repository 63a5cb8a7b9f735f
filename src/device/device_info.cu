#include <fmt/format.h>

#include "heapbench/cuda_check.cuh"
#include "device/device.hpp"

namespace heapbench {

DeviceInfo probe_device(int index) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    throw NoDeviceError(no_device_reason(cudaGetErrorName(err), cudaGetErrorString(err)));
  }
  if (count == 0) throw NoDeviceError("no CUDA device: the driver reports none");
  if (index >= count) {
    throw NoDeviceError(fmt::format("--device={}: only {} CUDA device(s) present (0..{})", index, count, count - 1));
  }
  // No cudaSetDevice: since CUDA 12 it creates the device's context (0.12 s on an
  // H200), which a parent under isolation never uses; HeapSession sets the device.
  cudaDeviceProp prop{};
  HB_CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  DeviceInfo d;
  d.index = index;
  d.name = prop.name;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.sm_count = prop.multiProcessorCount;
  d.total_memory = prop.totalGlobalMem;
  // CUDA 13 removed clockRate/memoryClockRate from cudaDeviceProp; the attributes remain.
  HB_CUDA_CHECK(cudaDeviceGetAttribute(&d.sm_clock_khz, cudaDevAttrClockRate, index));
  HB_CUDA_CHECK(cudaDeviceGetAttribute(&d.mem_clock_khz, cudaDevAttrMemoryClockRate, index));
  HB_CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
  HB_CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
  char bus_id[32] = {};  // "dddd:bb:dd.f" and its terminator fit in 13
  HB_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, index));
  d.pci_bus_id = bus_id;
  return d;
}

}  // namespace heapbench
