#pragma once
// heapbench's program, reaching the device through hooks: the real binary
// passes the CUDA ones (bench/main.cpp); tests pass a device that needs no GPU.
#include <vector>

#include "device_hooks.hpp"

namespace heapbench {

int run_heapbench(int argc, char** argv, const DeviceHooks& hooks);

// `heapbench NAME ...` runs `run` with argv from NAME on (argv[0] is NAME);
// it returns an exit status (exit_codes.hpp).
struct Subcommand {
  const char* name;
  const char* summary;  // one line, for --help
  int (*run)(int argc, char** argv, const DeviceHooks& hooks);
};
// Every subcommand, in the order --help lists them.
const std::vector<const Subcommand*>& subcommands();

}  // namespace heapbench

// A subcommand is a file of bench/subcommands/, <stem>.cpp, that ends with
//   HEAPBENCH_SUBCOMMAND(<stem>, "one line for --help", run_<stem>)
// and a heapbench_subcommand(<stem>) line in CMakeLists.txt, which lists it in
// subcommands() (through the generated subcommand_list.hpp). Its flags are its
// own (a CLI::App of its own: subcommand.hpp has what the device ones share).
#define HEAPBENCH_SUBCOMMAND(stem, summary, run)                 \
  namespace heapbench::commands {                                \
  extern const Subcommand stem;                                  \
  const Subcommand stem{#stem, summary, run};                    \
  }
