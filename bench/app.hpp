#pragma once
// heapbench's program, reaching the device through hooks: the real binary
// passes the CUDA ones (bench/main.cpp); tests pass a device that needs no GPU.
#include <functional>
#include <memory>
#include <vector>

#include "heapbench/backend.hpp"
#include "heapbench/check_hooks.hpp"
#include "heapbench/device.hpp"
#include "heapbench/energy.hpp"

namespace heapbench {

struct DeviceHooks {
  // Throws NoDeviceError (one-line reason) or DeviceError.
  std::function<DeviceInfo(int device)> probe;
  std::function<std::unique_ptr<Backend>(int device)> make_backend;
  // `heapbench check`: the allocators it can check and the battery's runner (none: no battery).
  std::function<check::CheckHooks()> check;
  // The energy counter of the device a run measures (none: the results say
  // that no energy was read).
  std::function<energy::Opened(const DeviceInfo& device)> energy;
};

int run_heapbench(int argc, char** argv, const DeviceHooks& hooks);

// `heapbench NAME ...` runs `run` with argv from NAME on; --help lists them in
// this order. A new subcommand is one line in the list (bench/app.cpp).
struct Subcommand {
  const char* name;
  const char* summary;  // one line, for --help
  int (*run)(int argc, char** argv, const DeviceHooks& hooks);
};
const std::vector<Subcommand>& subcommands();

}  // namespace heapbench
