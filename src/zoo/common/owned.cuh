#pragma once
// What the zoo's owners share (docs/zoo.md): the check that turns a failed CUDA
// call into heapbench's device error, and a holder for an upstream host object
// whose destructor frees device memory. Not an adapter and not a family (this
// folder has no zoo.cmake); an owner's detail/ header includes it under __CUDACC__.
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "heapbench/cuda_error.hpp"  // heapbench::CudaError

namespace heapbench_zoo {

// A failed CUDA call as a device error of `api`: heapbench reports the case and goes on.
inline void check(cudaError_t e, std::string_view api, const char* call) {
  if (e != cudaSuccess) {
    throw heapbench::CudaError(std::string(api) + ": " + call + ": " + cudaGetErrorString(e));
  }
}

// Owns an upstream host object T whose destructor frees its device memory and
// ends the process if that fails -- exit() in Ouroboros, a throw from a
// destructor in mallocMC -- as it does in a context a trap has broken. Dropped
// in a sound context, T is destroyed; in a broken one, Disarm{}(ptr) first
// leaves its memory to the device reset that follows a device error. Either way
// no CUDA error is left for the next case. Dropped when the owner is destroyed,
// also when the owner's constructor throws after taking it.
template <class T, class Disarm>
class Owned {
 public:
  Owned() = default;
  ~Owned() { drop(); }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;

  T* operator->() const { return p_.get(); }
  T& operator*() const { return *p_; }

  // Takes `p` in place of what it holds, which must own no device memory any
  // more (it is destroyed with no synchronisation and no check).
  void replace(std::unique_ptr<T> p) { p_ = std::move(p); }

 private:
  void drop() noexcept {
    if (p_ && cudaDeviceSynchronize() != cudaSuccess) Disarm{}(p_);
    p_.reset();
    (void)cudaGetLastError();
  }
  std::unique_ptr<T> p_;
};

}  // namespace heapbench_zoo
