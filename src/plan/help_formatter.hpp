#pragma once
// CLI11's help for the run's app (the root of heapbench's tree): Google
// Benchmark's flags whose values heapbench checks are options of that app
// (add_benchmark_flags), in a group of their own that CLI11's help leaves out:
// --help lists them with Google Benchmark's other flags (options.cpp's help_text).
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace heapbench {

// The group of add_benchmark_flags' options.
inline constexpr const char* kCheckedBenchmarkFlagsGroup = "Google Benchmark's flags that heapbench checks";

class RunHelpFormatter : public CLI::Formatter {
 public:
  std::string make_group(std::string group, bool is_positional, std::vector<const CLI::Option*> opts) const override {
    if (group == kCheckedBenchmarkFlagsGroup) return {};
    return CLI::Formatter::make_group(std::move(group), is_positional, std::move(opts));
  }
};

}  // namespace heapbench
