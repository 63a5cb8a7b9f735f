#pragma once
// What the subcommands that run on a device (advise, check) do alike: parse
// their flags and refuse a bad one, probe the device, and describe it in the
// JSON they write.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <optional>

#include "device_hooks.hpp"
#include "plan/options.hpp"
#include "report/results_file.hpp"

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

// A file a subcommand writes (advise --out, check --json and --markdown),
// checked, locked and written as the main program's results file
// (results_file.hpp): refused before any device work if it cannot be written,
// replaced whole by a rename, so a failed write leaves the earlier content.
class SubcommandFile {
 public:
  SubcommandFile(const char* subcommand, const char* flag) : subcommand_(subcommand), flag_(flag) {}
  SubcommandFile(const SubcommandFile&) = delete;
  SubcommandFile& operator=(const SubcommandFile&) = delete;
  // Nothing to do for nullopt; false after saying why `path` cannot be written.
  bool open(const std::optional<std::string>& path);
  // kExitOk (also when none was opened), or kExitCannotWrite after saying why.
  int write(const std::string& content) const;

 private:
  const char* subcommand_;
  const char* flag_;
  std::optional<ResultsFile> file_;
};

// Whether two paths name one file (the same path spelled twice, or a link to it).
bool same_file(const std::string& a, const std::string& b);

// The device, or nullopt after printing why it cannot be used.
std::optional<DeviceInfo> probe_for(const char* name, const DeviceHooks& hooks, int device);

// The device and the build that ran on it, as the subcommands' JSON names them.
nlohmann::json device_context(const DeviceInfo& device);

}  // namespace heapbench
