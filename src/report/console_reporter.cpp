#include "report/console_reporter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <type_traits>

#include "report/counter_units.hpp"
#include "report/results_file.hpp"
#include "report/run_error.hpp"

namespace heapbench {
namespace {

constexpr int kTimeWidth = 14;

const char* color(bool on, const char* code) { return on ? code : ""; }
constexpr const char* kGreen = "\033[32m";
constexpr const char* kYellow = "\033[33m";
constexpr const char* kRed = "\033[31m";
constexpr const char* kCyan = "\033[36m";
constexpr const char* kReset = "\033[m";

// A cv row's figures are ratios of the stddev to the mean, whatever the counter.
bool percentage_row(const benchmark::BenchmarkReporter::Run& run) {
  return run.run_type == benchmark::BenchmarkReporter::Run::RT_Aggregate &&
         run.aggregate_unit == benchmark::kPercentage;
}

std::string counter_text(const benchmark::BenchmarkReporter::Run& run, const std::string& name, double value) {
  return percentage_row(run) ? format_in(CounterUnit::fraction, value) : format_counter(name, value);
}

std::size_t column_width(const std::string& counter) { return std::max<std::size_t>(10, counter.size()); }

}  // namespace

const char* const kDebugLibraryNote =
    "Note: this Google Benchmark library was built as Debug (as Debian's and Ubuntu's are): that slows only its own "
    "host-side bookkeeping; heapbench's times are GPU times stamped in its kernels.";

std::string explain_debug_warning(std::string text) {
  const std::string warning = "***WARNING*** Library was built as DEBUG. Timings may be affected.";
  if (const auto at = text.find(warning); at != std::string::npos) text.replace(at, warning.size(), kDebugLibraryNote);
  return text;
}

std::string without_provenance(const std::string& text) {
  // How the file was made (src/report/context.cpp): the user typed the command
  // line, and the build's flags are the file's to keep, not the console's.
  static constexpr const char* kFileOnly[] = {"heapbench_command_line:", "heapbench_environment:",
                                              "heapbench_build_type:", "heapbench_cxx_", "heapbench_cuda_"};
  std::istringstream in(text);
  std::string out, line;
  while (std::getline(in, line)) {
    const bool file_only = std::any_of(std::begin(kFileOnly), std::end(kFileOnly),
                                       [&](const char* key) { return line.rfind(key, 0) == 0; });
    if (!file_only) out += line + '\n';
  }
  if (!text.empty() && text.back() != '\n' && !out.empty()) out.pop_back();
  return out;
}

bool ConsoleReporter::ReportContext(const Context& context) {
  // The base class's own work (field width, header state, context text),
  // with the text caught and amended.
  std::ostringstream caught;
  std::ostream& err = GetErrorStream();
  SetErrorStream(&caught);
  const bool go_on = benchmark::ConsoleReporter::ReportContext(context);
  SetErrorStream(&err);
  name_field_width_ = std::max(name_field_width_, layout_.min_name_width);
  if (layout_.context_and_header) {
    err << without_provenance(explain_debug_warning(caught.str()));
  } else {
    printed_header_ = true;  // the first group's header serves
  }
  return go_on;
}

void ConsoleReporter::ReportRuns(const std::vector<Run>& runs) {
  benchmark::ConsoleReporter::ReportRuns(runs);
  if (layout_.only_output && output_closed()) throw ResultsWriteError("cannot write standard output: Broken pipe (its reader is gone)");
}

void ConsoleReporter::PrintHeader(const Run& run) {
  std::string line = fmt::format("{:<{}} {:>{}}", "Benchmark", name_field_width_, "GPU time/round", kTimeWidth);
  if (output_options_ & OO_Tabular) {
    for (const auto& [name, counter] : run.counters) line += fmt::format(" {:>{}}", name, column_width(name));
  } else if (!run.counters.empty()) {
    line += " Counters";
  }
  const std::string rule(line.size(), '-');
  GetOutputStream() << rule << '\n' << line << '\n' << rule << '\n';
}

void ConsoleReporter::PrintRunData(const Run& run) {
  const bool c = output_options_ & OO_Color;
  std::ostream& out = GetOutputStream();
  out << fmt::format("{}{:<{}}{} ", color(c, kGreen), run.benchmark_name(), name_field_width_, color(c, kReset));
  if (const std::string* error = run_error(run)) {
    out << fmt::format("{}ERROR: {}{}\n", color(c, kRed), *error, color(c, kReset));
    return;
  }
  // Per round in seconds: heapbench registers every case in ms.
  const double per_unit = run.time_unit == benchmark::kSecond        ? 1
                          : run.time_unit == benchmark::kMillisecond ? 1e-3
                          : run.time_unit == benchmark::kMicrosecond ? 1e-6
                                                                     : 1e-9;
  const std::string time = percentage_row(run) ? format_in(CounterUnit::fraction, run.real_accumulated_time)
                                               : format_in(CounterUnit::seconds, run.GetAdjustedRealTime() * per_unit);
  out << fmt::format("{}{:>{}}{}", color(c, kYellow), time, kTimeWidth, color(c, kReset));
  for (const auto& [name, counter] : run.counters) {
    const std::string value = counter_text(run, name, counter.value);
    if (output_options_ & OO_Tabular) {
      out << fmt::format(" {}{:>{}}{}", color(c, kCyan), value, column_width(name), color(c, kReset));
    } else {
      // name=value pairs are separated by spaces: none inside a value (8MiB, 0.313%).
      std::string packed = value;
      packed.erase(std::remove(packed.begin(), packed.end(), ' '), packed.end());
      out << fmt::format(" {}{}={}{}", color(c, kCyan), name, packed, color(c, kReset));
    }
  }
  if (!run.report_label.empty()) out << ' ' << run.report_label;
  out << '\n';
}

}  // namespace heapbench
