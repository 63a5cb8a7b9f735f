#include "device/batch_timing.cuh"

#include <atomic>
#include <vector>

#include "heapbench/cuda_check.cuh"
#include "device/device_util.cuh"
#include "measure/measure.hpp"

namespace heapbench::detail {
namespace {

// Long enough for any batch to be enqueued (32 rounds of under ten launches
// each take a few ms of host time), short enough that a batch abandoned by an
// exception does not stall the device for long.
constexpr std::uint64_t kHoldTimeoutNs = 1'000'000'000;

__global__ void hold_until_released(const volatile int* flag, std::uint64_t timeout_ns, int* timed_out) {
  const std::uint64_t start = globaltimer_ns();
  while (*flag == 0) {
    if (globaltimer_ns() - start > timeout_ns) {
      *timed_out = 1;
      return;
    }
    __nanosleep(1000);
  }
}

// Every SM that runs a block writes its (clock64, globaltimer) pair; the host
// compares each SM's pair before and after the batch (clock64 counts that SM's
// own cycles, so the two stamps of an SM must come from that SM).
__global__ void stamp_sm_clocks(SmStamp* out, int max_sms) {
  if (threadIdx.x != 0) return;
  unsigned smid = 0;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  if (smid >= static_cast<unsigned>(max_sms)) return;
  const auto cycles = static_cast<unsigned long long>(clock64());
  out[smid] = SmStamp{cycles, globaltimer_ns()};
}

}  // namespace

BatchControl::BatchControl() {
  int device = 0;
  HB_CUDA_CHECK(cudaGetDevice(&device));
  HB_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, device));
  int* flag = nullptr;
  HB_CUDA_CHECK(cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped));
  flag_ = flag;
  *flag_ = 1;
  HB_CUDA_CHECK(cudaHostGetDevicePointer(&flag_device_, flag, 0));
  hold_timed_out_ = DeviceBuffer<int>(1);
  stamps_ = DeviceBuffer<SmStamp>(2 * kMaxSms);
}

BatchControl::~BatchControl() {
  if (flag_ == nullptr) return;  // abandoned: its memory went with a reset
  release();
  cudaFreeHost(const_cast<int*>(flag_));
  (void)cudaGetLastError();
}

void BatchControl::abandon() {
  flag_ = nullptr;
  flag_device_ = nullptr;
  // The device buffers' cudaFree fails on the new context without harm; the error is cleared.
  hold_timed_out_ = DeviceBuffer<int>();
  stamps_ = DeviceBuffer<SmStamp>();
  (void)cudaGetLastError();
  held_ = false;
  open_ = false;
}

void BatchControl::release() {
  if (flag_ == nullptr) return;
  *flag_ = 1;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  held_ = false;
  open_ = false;
}

void BatchControl::begin(bool hold) {
  if (open_) release();
  HB_CUDA_CHECK(cudaMemsetAsync(stamps_.get(), 0, 2 * kMaxSms * sizeof(SmStamp)));
  HB_CUDA_CHECK(cudaMemsetAsync(hold_timed_out_.get(), 0, sizeof(int)));
  if (hold) {
    *flag_ = 0;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    hold_until_released<<<1, 1>>>(flag_device_, kHoldTimeoutNs, hold_timed_out_.get());
    HB_CUDA_CHECK_LAUNCH();
  }
  held_ = hold;
  open_ = true;
  // Two blocks per SM, so that every SM almost surely runs one.
  stamp_sm_clocks<<<2 * sm_count_, 32>>>(stamps_.get(), kMaxSms);
  HB_CUDA_CHECK_LAUNCH();
}

BatchTiming BatchControl::end() {
  stamp_sm_clocks<<<2 * sm_count_, 32>>>(stamps_.get() + kMaxSms, kMaxSms);
  HB_CUDA_CHECK_LAUNCH();
  const bool held = held_;
  release();
  HB_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<SmStamp> raw(2 * kMaxSms);
  HB_CUDA_CHECK(cudaMemcpy(raw.data(), stamps_.get(), raw.size() * sizeof(SmStamp), cudaMemcpyDeviceToHost));
  int timed_out = 0;
  HB_CUDA_CHECK(cudaMemcpy(&timed_out, hold_timed_out_.get(), sizeof timed_out, cudaMemcpyDeviceToHost));
  std::vector<ClockStamp> before(kMaxSms), after(kMaxSms);
  for (int i = 0; i < kMaxSms; ++i) {
    before[i] = {raw[i].cycles, raw[i].ns};
    after[i] = {raw[kMaxSms + i].cycles, raw[kMaxSms + i].ns};
  }
  BatchTiming t;
  t.sm_clock_mhz = mean_clock_mhz(before, after);
  t.hold_broke = held && timed_out != 0;
  return t;
}

}  // namespace heapbench::detail
