// heapbench::app::Report recording a program's allocating launches (issue 51,
// docs/trace.md "A program's trace"): built by heapbench_add_app, its
// recording build (report_trace_record) run with HEAPBENCH_APP_TRACE=<file>
// writes a trace of three launches -- grow (2-D, 256 threads), release_half and
// grow_half as one launch() of two kernels, release_all -- and none for the
// launch() that allocates nothing ("quiet") or is declared not to allocate
// ("walk"). tests/gpu/app_report_trace_test.py checks the file and replays it.
// The Report lives in this host file; the kernels in report_trace_kernels.cu.
// Exits 77 without a GPU.
#include <cstdio>
#include <exception>

#include <cuda_runtime.h>

#include "heapbench/app_report.hpp"
#include "report_trace.hpp"

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no CUDA device\n");
    return 77;
  }
  try {
    report_trace::set_up();
    heapbench::app::Report report("report_trace");
    report.begin();
    report.launch("grow", true, [] { report_trace::launch_grow(); });
    report.launch("regrow", true, [] {
      report_trace::launch_release_half();
      report_trace::launch_grow_half();
    });
    report.launch("walk", false, [] { report_trace::launch_nothing(); });
    report.launch("quiet", true, [] { report_trace::launch_nothing(); });
    report.launch("release", true, [] { report_trace::launch_release_all(); });
    report.end();
    const unsigned long long released = report_trace::released();
    report.output(released);
    report.figure("released", static_cast<double>(released));
    report.write(report_trace::nulls());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "report_trace: %s\n", e.what());
    return 1;
  }
  return 0;
}
