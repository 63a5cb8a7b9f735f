#pragma once
// The host side of recording (docs/trace.md): heapbench::trace::Recorder, the
// device buffer every recording translation unit appends to, and the trace
// file. Host C++ (the CUDA runtime's API only), so that a .cpp file may own a
// Recorder (heapbench/app_report.hpp's Report does); the recording calls are
// heapbench/trace.cuh's, in device code.
//
//   heapbench::trace::Recorder rec("my.hbt");       // a buffer of 2^22 events by default
//   rec.begin(grid, block);                         // or begin(): the shape taken from the events
//   my_kernel<<<grid, block>>>(...);
//   rec.end();                                      // waits, appends the launch; returns events dropped
//   rec.finish();                                   // the file appears under its name (also at destruction)
//
// The buffer is a __device__ variable of each translation unit that includes
// heapbench/trace.cuh built with HEAPBENCH_TRACE=1 (internal linkage: no
// relocatable device code needed); each such file registers itself at
// start-up, and a Recorder points every registered file's variable at its
// buffer, so kernels of any .cu file of the program record. One Recorder at a
// time: a second one takes the buffer over.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "heapbench/atomic_file.hpp"
#include "heapbench/trace_format.hpp"

#ifndef HEAPBENCH_TRACE
#define HEAPBENCH_TRACE 0
#endif

namespace heapbench::trace {

namespace detail {

// What a recording call reads: the buffer, its counter, its length.
struct DeviceLog {
  Event* events;
  unsigned long long* count;
  unsigned long long capacity;
};

// Every recording translation unit's function that sets its own DeviceLog
// (heapbench/trace.cuh registers one per file at start-up).
using LogBinder = void (*)(const DeviceLog&);
inline std::vector<LogBinder>& log_binders() {
  static std::vector<LogBinder> list;
  return list;
}

}  // namespace detail

// The device buffer, one launch record per begin()/end(), and the file
// (written to PATH.partial by heapbench/atomic_file.hpp, never through a link,
// renamed to PATH by finish()). Throws std::runtime_error for a failed CUDA
// call or write, and when no file of the program records. With
// HEAPBENCH_TRACE=0 it allocates nothing and writes no file.
class Recorder {
 public:
  explicit Recorder(std::string path, unsigned long long capacity = 1ull << 22)
      : path_(std::move(path)), capacity_(capacity) {
    if (!HEAPBENCH_TRACE) return;
    if (detail::log_binders().empty()) {
      throw std::runtime_error("heapbench::trace: no file of this program records: include heapbench/trace.cuh "
                               "(or heapbench/app.cuh) in the .cu files of the kernels, built with HEAPBENCH_TRACE=1");
    }
    check(cudaMalloc(&events_, capacity_ * sizeof(Event)), "cudaMalloc of the trace buffer");
    check(cudaMalloc(&count_, sizeof(unsigned long long)), "cudaMalloc of the trace counter");
    bind(detail::DeviceLog{events_, count_, capacity_});
    try {
      file_ = std::make_unique<AtomicFile>(path_, ".partial");
    } catch (const WriteError& e) {
      throw std::runtime_error(std::string("heapbench::trace: ") + e.what());
    }
    FileHeader h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.version = kVersion;
    h.header_bytes = sizeof(FileHeader);
    h.launch_header_bytes = sizeof(LaunchHeader);
    h.event_bytes = sizeof(Event);
    size_t heap = 0;
    if (cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize) == cudaSuccess) h.heap_bytes = heap;
    int device = 0;
    cudaDeviceProp prop{};
    if (cudaGetDevice(&device) == cudaSuccess && cudaGetDeviceProperties(&prop, device) == cudaSuccess) {
      std::strncpy(h.device, prop.name, sizeof h.device);
    }
    write(&h, sizeof h);
  }
  ~Recorder() {
    try {
      finish();
    } catch (...) {
    }
    if (events_ != nullptr) {
      try {
        bind(detail::DeviceLog{nullptr, nullptr, 0});  // later kernels record nothing, never into freed memory
      } catch (...) {
      }
      cudaFree(events_);
    }
    if (count_ != nullptr) cudaFree(count_);
  }
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // Before a launch: its shape, and an empty buffer.
  void begin(dim3 grid, dim3 block) {
    if (!HEAPBENCH_TRACE) return;
    shaped_ = true;
    grid_ = grid;
    block_ = block;
    clear();
  }
  // Before a launch whose shape the caller does not know (one or several
  // kernels): end() takes the smallest linear shape that holds every event's
  // block and thread (shape_of_events), and appends nothing for a launch that
  // recorded no event.
  void begin() {
    if (!HEAPBENCH_TRACE) return;
    shaped_ = false;
    clear();
  }
  // After it: waits for the device, appends the launch's record, and returns
  // the events the buffer had no room for (printing one line when there were
  // any, and, for a launch begun with its shape, one when it recorded none: its
  // kernels called none of the recording functions, or include no trace.cuh).
  unsigned long long end() {
    if (!HEAPBENCH_TRACE) return 0;
    check(cudaDeviceSynchronize(), "the recorded launch");
    unsigned long long made = 0;
    check(cudaMemcpy(&made, count_, sizeof made, cudaMemcpyDeviceToHost), "cudaMemcpy of the trace counter");
    const unsigned long long kept = made < capacity_ ? made : capacity_;
    std::vector<Event> events(kept);
    if (kept > 0) {
      check(cudaMemcpy(events.data(), events_, kept * sizeof(Event), cudaMemcpyDeviceToHost), "cudaMemcpy of the trace");
    }
    LaunchHeader h{kLaunchTag, launches_, {grid_.x, grid_.y, grid_.z}, {block_.x, block_.y, block_.z}, kept, made - kept};
    if (!shaped_) {
      if (made == 0) {
        ++empty_;
        return 0;
      }
      const LaunchShape s = shape_of_events(events.data(), kept);
      std::memcpy(h.grid, s.grid, sizeof h.grid);
      std::memcpy(h.block, s.block, sizeof h.block);
    }
    ++launches_;
    write(&h, sizeof h);
    write(events.data(), kept * sizeof(Event));
    if (made == 0) {
      std::fprintf(stderr, "heapbench::trace: launch %u recorded no event: its kernels called no recording function "
                           "of heapbench/trace.cuh built with HEAPBENCH_TRACE=1 (docs/trace.md)\n",
                   h.launch);
    }
    if (made > kept) {
      std::fprintf(stderr, "heapbench::trace: launch %u made %llu events, the buffer holds %llu: %llu dropped "
                           "(give Recorder a larger capacity)\n", h.launch, made, capacity_, made - kept);
    }
    return made - kept;
  }
  // Closes the file and renames it into place; later calls do nothing.
  void finish() {
    if (file_ == nullptr) return;
    const std::unique_ptr<AtomicFile> file = std::move(file_);
    try {
      file->commit();
    } catch (const WriteError& e) {
      throw std::runtime_error(std::string("heapbench::trace: ") + e.what());
    }
  }
  // Launches appended so far, and those begun without a shape that recorded
  // no event (not appended).
  std::uint32_t launches() const { return launches_; }
  std::uint32_t empty_launches() const { return empty_; }

 private:
  std::string path_;
  unsigned long long capacity_;
  Event* events_ = nullptr;
  unsigned long long* count_ = nullptr;
  std::unique_ptr<AtomicFile> file_;  // null once finished (or with HEAPBENCH_TRACE=0)
  dim3 grid_, block_;
  bool shaped_ = true;
  std::uint32_t launches_ = 0;
  std::uint32_t empty_ = 0;

  static void check(cudaError_t err, const char* what) {
    if (err != cudaSuccess) throw std::runtime_error(std::string("heapbench::trace: ") + what + ": " + cudaGetErrorString(err));
  }
  static void bind(const detail::DeviceLog& log) {
    for (detail::LogBinder b : detail::log_binders()) b(log);
  }
  void clear() { check(cudaMemset(count_, 0, sizeof(unsigned long long)), "cudaMemset of the trace counter"); }
  void write(const void* p, std::size_t bytes) {
    if (file_ == nullptr) throw std::runtime_error("heapbench::trace: " + path_ + " is finished: begin a new Recorder");
    try {
      file_->write(p, bytes);
    } catch (const WriteError& e) {
      throw std::runtime_error(std::string("heapbench::trace: ") + e.what());
    }
  }
};

}  // namespace heapbench::trace
