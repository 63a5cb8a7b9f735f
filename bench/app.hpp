#pragma once
// heapbench's program, reaching the device through hooks: the real binary
// passes the CUDA ones (bench/main.cpp); tests pass a device that needs no GPU.
#include <vector>

#include "device_hooks.hpp"

namespace heapbench {

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
