#pragma once
// Around a batch of rounds: the hold that keeps the stream's launches back to
// back, and the SM clock over the batch (Backend::begin_batch / end_batch).
#include <cstdint>

#include "device/device_buffer.cuh"
#include "measure/backend.hpp"

namespace heapbench::detail {

struct SmStamp {
  unsigned long long cycles;  // clock64() on that SM
  unsigned long long ns;      // %globaltimer at the same moment; 0: not stamped
};

class BatchControl {
 public:
  BatchControl();
  ~BatchControl();
  BatchControl(const BatchControl&) = delete;
  BatchControl& operator=(const BatchControl&) = delete;

  // Stamps the clocks; with `hold`, first launches a kernel that spins until
  // end() releases it (or kHoldTimeout passes), so what is enqueued meanwhile
  // waits and then runs without the host's launch latency between launches.
  void begin(bool hold);
  // Stamps the clocks again, releases the hold, waits for the GPU.
  BatchTiming end();
  // Lets a held stream go (after an error between begin() and end()).
  void release();
  // After a device reset: the pinned flag and the device buffers went with the
  // old context. Forgets them, so that nothing (the destructor included) writes
  // the freed flag.
  void abandon();

 private:
  static constexpr int kMaxSms = 1024;
  volatile int* flag_ = nullptr;   // pinned, mapped: the host writes, the hold kernel reads
  int* flag_device_ = nullptr;     // the same flag as the device sees it
  DeviceBuffer<int> hold_timed_out_;
  DeviceBuffer<SmStamp> stamps_;  // kMaxSms before, then kMaxSms after
  int sm_count_ = 0;
  bool held_ = false;
  bool open_ = false;
};

}  // namespace heapbench::detail
