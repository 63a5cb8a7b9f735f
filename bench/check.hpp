#pragma once
// `heapbench check ...`: a conformance verdict for device allocators (bench/check.cpp).
#include "device_hooks.hpp"

namespace heapbench {

// argv[0] is "check". Returns an exit status (exit_codes.hpp): kExitOk,
// kExitCheckFailed, kExitUsage, kExitNoDevice.
int run_check(int argc, char** argv, const DeviceHooks& hooks);

}  // namespace heapbench
