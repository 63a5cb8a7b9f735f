// printf: device printf into its FIFO (cudaLimitPrintfFifoSize), which the
// host drains only at synchronisation points; what does not fit is lost.
//
// Workload, one round: T threads each print kPrintfLinesPerThread lines of
// size / 8 unsigned 64-bit arguments ("hb <id> <id+1> ...\n", id unique per
// call) in one launch (timed: printf_per_s). Then stdout is redirected to a
// scratch file around cudaDeviceSynchronize, which delivers what the FIFO held
// (timed on the host: flush_lines_per_s); the captured text is parsed on the
// host (parse_printf_lines) into lines delivered, lost and garbled. Every call's
// return value is checked against the documented one, the number of arguments.
//
// The case's heap axis is the FIFO size ("fifo:<MiB>" in the name): the harness
// resets the device when it changes, as the FIFO, like the heap, cannot be
// resized once a kernel has printed.
#ifdef HEAPBENCH_PATTERN_TRAITS_ONLY  // the traits, read in namespace heapbench::patterns (pattern_traits.hpp)
// Its size is the bytes of arguments per call: whole 8-byte arguments from 8 to 64.
inline constexpr PatternTraits printf_traits =
    PatternTraits{"printf", "not the heap: device printf into its FIFO (cudaLimitPrintfFifoSize), lines delivered and lost"}
        .limited_by(Limit::printf_fifo, source_bit(Source::printf_fifo))
        .sizes(8, 64, 8)
        // Into a full FIFO a launch waits for the host to drain it: 32,768 threads x 8
        // lines into 1 MiB took 2.4-5.2 s on the H200 and once passed the 5 s default.
        .budget_times(4);
inline constexpr PatternList<1> printf_fifo_patterns = {&printf_traits};
#else
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

#include "cases/catalog.hpp"
#include "patterns/printf_fifo.hpp"
#include "device/round.cuh"

namespace heapbench::detail {
namespace {

// Which arguments one line carries is fixed at compile time by its format, so
// each count has its own call.
__device__ int print_line(unsigned long long id, unsigned args) {
  const unsigned long long i = id;
  switch (args) {
    case 1: return printf("hb %llu\n", i);
    case 2: return printf("hb %llu %llu\n", i, i + 1);
    case 3: return printf("hb %llu %llu %llu\n", i, i + 1, i + 2);
    case 4: return printf("hb %llu %llu %llu %llu\n", i, i + 1, i + 2, i + 3);
    case 5: return printf("hb %llu %llu %llu %llu %llu\n", i, i + 1, i + 2, i + 3, i + 4);
    case 6: return printf("hb %llu %llu %llu %llu %llu %llu\n", i, i + 1, i + 2, i + 3, i + 4, i + 5);
    case 7: return printf("hb %llu %llu %llu %llu %llu %llu %llu\n", i, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6);
    default:
      return printf("hb %llu %llu %llu %llu %llu %llu %llu %llu\n", i, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6,
                    i + 7);
  }
}

struct ReturnStats {
  unsigned long long negative;
  unsigned long long other;
  long long other_value;
};

// stdout (fd 1) into an unnamed scratch file, and back. The CUDA runtime writes
// device printf output through the process's stdout when it drains the FIFO.
class StdoutCapture {
 public:
  StdoutCapture() = default;
  StdoutCapture(const StdoutCapture&) = delete;
  StdoutCapture& operator=(const StdoutCapture&) = delete;
  ~StdoutCapture() { restore(); }

  void start() {
    std::cout.flush();
    std::fflush(stdout);
    file_ = std::tmpfile();
    if (file_ == nullptr) throw std::runtime_error("printf: cannot create a scratch file for stdout");
    saved_ = dup(STDOUT_FILENO);
    if (saved_ < 0 || dup2(fileno(file_), STDOUT_FILENO) < 0) {
      restore();
      throw std::runtime_error("printf: cannot redirect stdout");
    }
  }

  // Puts stdout back and returns what was written meanwhile.
  std::string finish() {
    std::fflush(stdout);
    std::string text;
    if (file_ != nullptr) {
      const off_t end = lseek(fileno(file_), 0, SEEK_END);
      text.resize(end > 0 ? static_cast<std::size_t>(end) : 0);
      if (!text.empty() && pread(fileno(file_), text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
        restore();
        throw std::runtime_error("printf: cannot read the captured output back");
      }
    }
    restore();
    return text;
  }

 private:
  void restore() {
    if (saved_ >= 0) {
      std::fflush(stdout);
      dup2(saved_, STDOUT_FILENO);
      close(saved_);
      saved_ = -1;
    }
    if (file_ != nullptr) {
      std::fclose(file_);
      file_ = nullptr;
    }
  }
  std::FILE* file_ = nullptr;
  int saved_ = -1;
};

}  // namespace

// Outside the unnamed namespace: a function enclosing an extended __device__
// lambda must have a name the host compiler can refer to.
class PrintfRunner final : public TimedLaunchRound {
 public:
  PrintfRunner(const Case& c, double budget_s)
      : buffers_(c, 1), budget_ns_(budget_ns(budget_s)), c_(c), args_(c.size / 8) {
    if (!patterns::printf_traits.valid_size(c.size)) {
      throw std::invalid_argument(fmt::format("printf: size {} is not 8 to 64 bytes of arguments in whole 8-byte arguments", c.size));
    }
    size_t fifo = 0;
    HB_CUDA_CHECK(cudaDeviceGetLimit(&fifo, cudaLimitPrintfFifoSize));
    if (fifo != c.printf_fifo()) {
      const cudaError_t err = cudaDeviceSetLimit(cudaLimitPrintfFifoSize, static_cast<size_t>(c.printf_fifo()));
      if (err != cudaSuccess) {
        (void)cudaGetLastError();
        throw std::runtime_error(fmt::format("printf: setting the FIFO to {} MiB failed ({}): a kernel has printed since the "
                                             "last device reset", c.printf_fifo() / kMiB, cudaGetErrorString(err)));
      }
      HB_CUDA_CHECK(cudaDeviceGetLimit(&fifo, cudaLimitPrintfFifoSize));
    }
    fifo_bytes_ = fifo;
    ret_buffer_ = DeviceBuffer<ReturnStats>(1);  // after the FIFO limit, as before
    ret_ = ret_buffer_.get();
  }

  void begin() override {
    buffers_.begin(budget_ns_);
    HB_CUDA_CHECK(cudaMemset(ret_, 0, sizeof(ReturnStats)));
    // Drain anything printed before, so the capture holds this round's lines only.
    HB_CUDA_CHECK(cudaDeviceSynchronize());
  }

  // The timed launch: every thread prints its lines.
  void launch() override {
    capture_.start();
    const RoundArgs& a = buffers_.args();
    const unsigned args = static_cast<unsigned>(args_);
    DeviceStats* stats = a.stats;
    ReturnStats* ret = ret_;
    launched_ = std::chrono::steady_clock::now();
    timer_.start();
    launch_each(a, [=] __device__(std::uint64_t tid, bool active) {
      if (!active) return;
      for (std::uint64_t k = 0; k < kPrintfLinesPerThread; ++k) {
        if (!before_deadline(stats)) {
          atomicAdd(&stats->not_started, static_cast<unsigned long long>(kPrintfLinesPerThread - k));
          return;
        }
        const int r = print_line(tid * kPrintfLinesPerThread + k, args);
        if (r != static_cast<int>(args)) {
          atomicAdd(r < 0 ? &ret->negative : &ret->other, 1ull);
          if (r >= 0) atomicExch(reinterpret_cast<unsigned long long*>(&ret->other_value), static_cast<unsigned long long>(r));
        }
      }
    });
    timer_.stop();
  }

  // The drain's time, then what it captured, parsed. The runtime drains the
  // FIFO into stdout at the first synchronisation or launch after the kernel:
  // the harness's (BatchControl::end launches a kernel and synchronises before
  // collect() calls this). So the drain is timed as the host time from the
  // launch to here, less the kernel's own (flush_lines_per_s); the launch's
  // and the clock stamps' few microseconds are in it too.
  IterationResult finish() override {
    const double launch_to_here_s = seconds_since(launched_);
    const cudaError_t err = cudaDeviceSynchronize();
    std::fflush(stdout);
    const std::string text = capture_.finish();
    HB_CUDA_CHECK(err);
    const double kernel_s = timer_.seconds();
    const double flush_s = launch_to_here_s > kernel_s ? launch_to_here_s - kernel_s : 0.0;

    const DeviceStats s = buffers_.read_stats();
    ReturnStats rs{};
    HB_CUDA_CHECK(cudaMemcpy(&rs, ret_, sizeof rs, cudaMemcpyDeviceToHost));
    IterationResult out;
    out.not_started = s.not_started;
    PrintfRaw raw;
    raw.calls = c_.threads * kPrintfLinesPerThread - s.not_started;
    raw.args = args_;
    raw.ret_negative = rs.negative;
    raw.ret_other = rs.other ? rs.other_value : 0;
    raw.ret_documented = raw.calls - rs.negative - rs.other;
    raw.lines = parse_printf_lines(text, c_.threads * kPrintfLinesPerThread, args_);
    raw.fifo_bytes = fifo_bytes_;
    raw.kernel_seconds = kernel_s;
    raw.flush_seconds = flush_s;
    out.timed_seconds = raw.kernel_seconds;
    // The drain is timed and reported (flush_lines_per_s): measuring, as capacity's refills are.
    out.measuring_seconds = flush_s;
    out.observed.put(raw);
    return out;
  }

  std::unique_ptr<Reducer> reducer() const override { return printf_reducer(); }

 private:
  RoundBuffers buffers_;
  std::uint64_t budget_ns_;
  Case c_;
  std::uint64_t args_;
  std::uint64_t fifo_bytes_ = 0;
  DeviceBuffer<ReturnStats> ret_buffer_;
  ReturnStats* ret_ = nullptr;
  StdoutCapture capture_;
  EventTimer timer_;
  std::chrono::steady_clock::time_point launched_;
};

std::unique_ptr<Round> make_printf_fifo(const PatternTraits&, const Case& c, double budget_s) { return std::make_unique<PrintfRunner>(c, budget_s); }

}  // namespace heapbench::detail
#endif  // HEAPBENCH_PATTERN_TRAITS_ONLY
