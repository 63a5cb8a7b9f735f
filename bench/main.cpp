// heapbench on CUDA devices.
#include "app.hpp"

int main(int argc, char** argv) {
  return heapbench::run_heapbench(
      argc, argv, {heapbench::probe_device, heapbench::make_cuda_backend, heapbench::check::gpu::cuda_check_hooks,
       [](const heapbench::DeviceInfo& d) { return heapbench::energy::open_nvml(d.pci_bus_id); }});
}
