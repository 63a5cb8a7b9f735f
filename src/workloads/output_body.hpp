#pragma once
// The output workload's per-thread arithmetic and its verifier, shared by the
// GPU kernels (src/workloads/output.cu) and the host tests
// (tests/host/workloads_test.cpp), which run the same functions on the CPU
// against strategies broken on purpose.
//
// Thread t of n produces output_bytes(t, lo, hi) bytes, drawn uniformly from
// [lo, hi] by a seeded hash of t (the same on every run and every strategy).
// Every strategy hands out 16-byte aligned outputs (CUDA's malloc promises 16;
// the carving strategies pad each output to 16 bytes), and thread t writes
// output_word(t, i) into word i of its output. The verifier reads every output
// back: an output that is missing, misaligned or overlaps another (whose owner
// then reads the other's words) is an error, never a figure.
#include <cstdint>

#include "cases/mixed_sizes.hpp"  // mix64, HEAPBENCH_HD

namespace heapbench::workloads {

inline constexpr std::uint64_t kOutputSeed = 0x6f7574707574ull;  // "output"
inline constexpr std::uint64_t kOutputAlign = 16;

HEAPBENCH_HD constexpr std::uint64_t output_bytes(std::uint64_t t, std::uint64_t lo, std::uint64_t hi) {
  return lo + mix64(t * 0x9E3779B97F4A7C15ull + kOutputSeed) % (hi - lo + 1);
}

// What a carving strategy sets aside for an output: its bytes rounded up to 16.
HEAPBENCH_HD constexpr std::uint64_t padded(std::uint64_t bytes) {
  return (bytes + kOutputAlign - 1) / kOutputAlign * kOutputAlign;
}

// Word i of thread t's output: distinct threads write distinct words at the
// same i (an odd multiplier is a bijection), so of two overlapping outputs at
// least one reads back a word it did not write.
HEAPBENCH_HD constexpr std::uint32_t output_word(std::uint64_t t, std::uint64_t i) {
  return static_cast<std::uint32_t>(t * 0x9E3779B1u) ^ static_cast<std::uint32_t>(i * 0x85EBCA77u + 0x27d4eb2fu);
}

// Writes thread t's `bytes` bytes at p (16-byte aligned): whole words, then the tail.
HEAPBENCH_HD inline void write_output(unsigned char* p, std::uint64_t bytes, std::uint64_t t) {
  auto* w = reinterpret_cast<std::uint32_t*>(p);
  const std::uint64_t words = bytes / 4;
  for (std::uint64_t i = 0; i < words; ++i) w[i] = output_word(t, i);
  const std::uint32_t last = output_word(t, words);
  for (std::uint64_t j = words * 4; j < bytes; ++j) p[j] = static_cast<unsigned char>(last >> (8 * (j % 4)));
}

// Words (the tail counting as one) of thread t's output at p that do not read back.
HEAPBENCH_HD inline std::uint64_t output_mismatches(const unsigned char* p, std::uint64_t bytes, std::uint64_t t) {
  const auto* w = reinterpret_cast<const std::uint32_t*>(p);
  const std::uint64_t words = bytes / 4;
  std::uint64_t bad = 0;
  for (std::uint64_t i = 0; i < words; ++i) bad += w[i] != output_word(t, i);
  const std::uint32_t last = output_word(t, words);
  bool tail_bad = false;
  for (std::uint64_t j = words * 4; j < bytes; ++j) tail_bad |= p[j] != static_cast<unsigned char>(last >> (8 * (j % 4)));
  return bad + (tail_bad ? 1 : 0);
}

// What the verifier found of one thread's output: a table entry is the
// output's address, 0 (the strategy could not obtain it: NULL) or 1 (the
// thread found the kernel's deadline passed and did not try).
struct OutputCheck {
  bool present = false;     // an output to read
  bool not_started = false;
  bool misaligned = false;
  bool corrupted = false;   // did not read back what thread t wrote
};

HEAPBENCH_HD inline OutputCheck check_output(const void* entry, std::uint64_t t, std::uint64_t lo, std::uint64_t hi) {
  OutputCheck c;
  const auto addr = reinterpret_cast<std::uintptr_t>(entry);
  if (addr == 1) {
    c.not_started = true;
    return c;
  }
  if (addr == 0) return c;
  c.present = true;
  if (addr % kOutputAlign != 0) {
    c.misaligned = true;  // not read: a misaligned word access would fault on the GPU
    return c;
  }
  c.corrupted = output_mismatches(static_cast<const unsigned char*>(entry), output_bytes(t, lo, hi), t) != 0;
  return c;
}

}  // namespace heapbench::workloads
