#pragma once
// `heapbench advise ...`: heap-size advice for a workload (bench/advise.cpp).
#include "app.hpp"

namespace heapbench {

// argv[0] is "advise". Exit codes: 0 advice given; 1 no heap up to the limit
// held the workload, or a device failure; 2 bad command line (before any
// kernel runs); 3 no usable device.
int run_advise(int argc, char** argv, const DeviceHooks& hooks);

}  // namespace heapbench
