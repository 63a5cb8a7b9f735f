#pragma once
// The errors an allocator adapter's owner throws (docs/allocators.md). Plain
// C++, no CUDA header: the harness catches them, reports the case as a device
// error and goes on with the sweep.
#include <stdexcept>

namespace heapbench {

// A failed device call. The device context may hold a sticky error, so the
// harness calls Backend::invalidate() before the next case.
struct DeviceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A failed CUDA call: message has the call's text, file, line and CUDA's error string.
struct CudaError : DeviceError {
  using DeviceError::DeviceError;
};

}  // namespace heapbench
