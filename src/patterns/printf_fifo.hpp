#pragma once
// The printf family's host side: what one round observed (raw counts the device
// and the captured output give), the parser of the captured output, and the
// figures (docs/metrics.md). No CUDA here, so all of it is tested without a GPU.
//
// The kernel: each of T threads prints kPrintfLinesPerThread lines
//   "hb <id> <id+1> ... <id+n-1>\n"
// with n = size / 8 unsigned 64-bit arguments (size: 8 to 64 bytes of
// arguments per call) and id = thread x kPrintfLinesPerThread + line, so every
// line says which call printed it and carries its own check.
#include <cstdint>
#include <string_view>

#include "measure/reducer.hpp"

namespace heapbench {

inline constexpr std::uint64_t kPrintfLinesPerThread = 8;

struct PrintfLines {
  std::uint64_t delivered = 0;  // distinct, well-formed lines of this round
  std::uint64_t garbled = 0;    // lines that are not a well-formed line of this round, or repeat one
};

// Parses captured output. `calls` is the number of printf calls made (ids are
// below it); `args` the arguments per line.
PrintfLines parse_printf_lines(std::string_view text, std::uint64_t calls, std::uint64_t args);

struct PrintfRaw {
  std::uint64_t calls = 0;          // printf calls made
  std::uint64_t args = 0;           // arguments per call
  std::uint64_t ret_documented = 0; // calls that returned the number of arguments (the documented value)
  std::uint64_t ret_negative = 0;   // calls that returned < 0
  std::int64_t ret_other = 0;       // one return value that was neither, 0 if none
  PrintfLines lines;                // what reached stdout
  std::uint64_t fifo_bytes = 0;     // cudaLimitPrintfFifoSize as the device reports it
  double kernel_seconds = 0;        // GPU time of the printing kernel
  double flush_seconds = 0;         // host time of the synchronisation that delivered the lines
};

struct PrintfFigures {
  double printf_per_s = 0;       // calls / kernel seconds
  double lines_delivered = 0;
  double lines_lost = 0;         // calls - delivered
  double loss_rate = 0;          // lost / calls
  // fifo_bytes / delivered, only where lines were lost (else 0): the FIFO bytes
  // one delivered line took. It is the footprint of a line only when the host did
  // not drain the FIFO while the kernel ran (short kernels); long overflowing
  // kernels deliver more than one FIFO-full and read lower (docs/metrics.md).
  double bytes_per_line = 0;
  double ret_documented = 0;     // fraction of calls returning the number of arguments
  double flush_lines_per_s = 0;  // delivered / flush seconds
};

PrintfFigures printf_figures(const PrintfRaw& raw);

// The printf counters over the rounds of a case (not the heap's vocabulary):
// printf_per_s, loss_rate, ret_documented and flush_lines_per_s over the summed
// counts and times; lines_delivered, lines_lost, lines_garbled as means per
// round; bytes_per_line over the rounds that lost lines; ret_other_value where
// a call returned neither documented value; fifo_bytes.
std::unique_ptr<Reducer> printf_reducer();

}  // namespace heapbench
