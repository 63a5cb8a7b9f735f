// heapbench's program over the real CUDA backend, with one fault that exists
// only here: a case whose name contains $HEAPBENCH_FAULT_CASE launches, before
// its allocating kernel, a kernel that stores through an invalid pointer. The
// GPU then reports cudaErrorIllegalAddress, which is sticky: the context is
// unusable until a reset. tests/gpu/fault_test.py checks that the case becomes
// an error result and every other case still runs, in one process and under
// isolation.
#include <cuda_runtime.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "app.hpp"
#include "cases/case_naming.hpp"
#include "measure/backend.hpp"
#include "device/device.hpp"

namespace heapbench {
namespace {

__global__ void store_through_invalid_pointer(int* p) { *p = 42; }

class FaultingRound final : public Round {
 public:
  explicit FaultingRound(std::unique_ptr<Round> inner) : inner_(std::move(inner)) {}
  void begin_batch() override { inner_->begin_batch(); }
  void begin() override { inner_->begin(); }
  void allocate() override {
    store_through_invalid_pointer<<<1, 1>>>(reinterpret_cast<int*>(0x10));
    const cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess) throw DeviceError(std::string("injected fault: ") + cudaGetErrorString(err));
    inner_->allocate();
  }
  void use() override { inner_->use(); }
  void release() override { inner_->release(); }
  IterationResult collect() override { return inner_->collect(); }
  bool has_use_phase() const override { return inner_->has_use_phase(); }
  bool has_free_phase() const override { return inner_->has_free_phase(); }
  std::unique_ptr<Reducer> reducer() const override { return inner_->reducer(); }

 private:
  std::unique_ptr<Round> inner_;
};

class FaultingBackend final : public Backend {
 public:
  explicit FaultingBackend(int device) : inner_(make_cuda_backend(device)) {
    const char* f = std::getenv("HEAPBENCH_FAULT_CASE");
    fault_ = f != nullptr ? f : "";
  }
  Heap ensure_limit(std::uint64_t bytes) override { return inner_->ensure_limit(bytes); }
  void invalidate() override { inner_->invalidate(); }
  std::uint64_t probe_capacity(std::uint64_t heap_bytes) override { return inner_->probe_capacity(heap_bytes); }
  void begin_batch(bool hold) override { inner_->begin_batch(hold); }
  BatchTiming end_batch() override { return inner_->end_batch(); }
  double rated_sm_mhz() const override { return inner_->rated_sm_mhz(); }
  std::unique_ptr<Round> make_round(const Case& c, double budget_s) override {
    auto round = inner_->make_round(c, budget_s);
    if (!fault_.empty() && case_name(c).find(fault_) != std::string::npos) {
      return std::make_unique<FaultingRound>(std::move(round));
    }
    return round;
  }

 private:
  std::unique_ptr<Backend> inner_;
  std::string fault_;
};

}  // namespace
}  // namespace heapbench

int main(int argc, char** argv) {
  return heapbench::run_heapbench(argc, argv, {heapbench::probe_device, [](int device) -> std::unique_ptr<heapbench::Backend> {
                                                 return std::make_unique<heapbench::FaultingBackend>(device);
                                               }});
}
