// Configure-time probe (cmake/toolkit_probes.cmake): puts the CCCL version that
// the CUDA compiler sees into the object as a string, which CMake reads back
// without running anything (the way CMake finds compiler versions).
#include <cuda/std/version>

#define HB_STR2(x) #x
#define HB_STR(x) HB_STR2(x)

extern const char heapbench_cccl_version[];
const char heapbench_cccl_version[] =
    "HEAPBENCH_CCCL_VERSION[" HB_STR(CCCL_VERSION) "]";  // MMMmmmppp, e.g. 3005000 (CCCL 2.2 and later)
