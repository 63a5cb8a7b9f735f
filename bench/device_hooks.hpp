#pragma once
// How heapbench's program reaches the device: the real binary passes the CUDA
// hooks (bench/main.cpp); tests pass a device that needs no GPU. Apart from
// app.hpp, so the subcommands (plan, advise, check) need not include the
// program's top header.
#include <functional>
#include <memory>

#include "measure/backend.hpp"
#include "check/check_hooks.hpp"
#include "device/device.hpp"
#include "measure/energy.hpp"

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

}  // namespace heapbench
