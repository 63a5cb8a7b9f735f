#pragma once
// The console table (--benchmark_format=console, the default): Google
// Benchmark's ConsoleReporter, extended through its PrintHeader/PrintRunData
// hooks, with
//  - one time column, the GPU time per round (stamped in the kernels; heapbench's manual
//    time): Google Benchmark's CPU column is host time, which under heapbench
//    is the host waiting for the GPU and launching, and its Iterations column
//    is 1 for every case (the case's rounds are the `rounds` counter);
//  - counters in their units (report/counter_units.hpp: 0.313 %, 8 MiB,
//    380 us), where Google Benchmark's shows 3.1309m, 8.38861M, 380.288u;
//    the results file keeps the raw values;
//  - Google Benchmark's "Library was built as DEBUG" warning replaced by what
//    it means here: a Debian or Ubuntu libbenchmark is built so, which slows
//    the library's own bookkeeping, not the GPU times heapbench reports.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <string>

namespace heapbench {

// Under isolation each heap group is a child process with a reporter of its
// own; for the parent's terminal to show one table, only the first group's
// prints the context and the header, and every group pads names to the width
// of the whole run's.
struct ConsoleLayout {
  bool context_and_header = true;
  std::size_t min_name_width = 0;
  // No results file: the table is the run's only output, and a closed one stops the run (ReportRuns).
  bool only_output = false;
};

class ConsoleReporter final : public benchmark::ConsoleReporter {
 public:
  explicit ConsoleReporter(OutputOptions options, ConsoleLayout layout = {})
      : benchmark::ConsoleReporter(options), layout_(layout) {}

  bool ReportContext(const Context& context) override;
  // With layout.only_output, stops the run (ResultsWriteError) once standard
  // output's reader is gone (SIGPIPE noted: `heapbench | head`), after the rows
  // so far: without a results file nothing else would stop a sweep nobody
  // reads. (With one, SnapshotReporter stops it once the case is written.)
  void ReportRuns(const std::vector<Run>& runs) override;

 protected:
  void PrintHeader(const Run& run) override;
  void PrintRunData(const Run& run) override;

 private:
  ConsoleLayout layout_;
};

// The line that stands in for Google Benchmark's DEBUG warning.
extern const char* const kDebugLibraryNote;

// Google Benchmark's context text less the lines of the results file's
// provenance (the command line, the environment, the build: src/report/context.cpp).
std::string without_provenance(const std::string& context_text);

// Google Benchmark's context text with its DEBUG warning replaced by kDebugLibraryNote.
std::string explain_debug_warning(std::string context_text);

}  // namespace heapbench
