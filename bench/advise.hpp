#pragma once
// `heapbench advise ...`: heap-size advice for a workload (bench/advise.cpp).
#include "device_hooks.hpp"

namespace heapbench {

// argv[0] is "advise". Returns an exit status (exit_codes.hpp): kExitOk,
// kExitNoAdvice, kExitUsage, kExitNoDevice.
int run_advise(int argc, char** argv, const DeviceHooks& hooks);

}  // namespace heapbench
