#pragma once
// What the subcommands that run on a device (advise, check) do alike: parse
// their flags and refuse a bad one, probe the device, and describe it in the
// JSON they write.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <optional>

#include "device_hooks.hpp"
#include "heapbench/options.hpp"

namespace heapbench {

// `parse()` (a subcommand's parser), or nullopt after printing the usage error.
template <class Parse>
auto parse_subcommand(const char* name, Parse parse) -> std::optional<decltype(parse())> {
  try {
    return parse();
  } catch (const UsageError& e) {
    fmt::print(stderr, "heapbench {}: {} (see heapbench {} --help)\n", name, e.what(), name);
    return std::nullopt;
  }
}

// The device, or nullopt after printing why it cannot be used.
std::optional<DeviceInfo> probe_for(const char* name, const DeviceHooks& hooks, int device);

// The device and the build that ran on it, as the subcommands' JSON names them.
nlohmann::json device_context(const DeviceInfo& device);

}  // namespace heapbench
