// What the device heap does with requests at its edges: malloc(0), free(NULL),
// a request larger than the heap, alignments beyond what it promises. Measured,
// printed for docs/metrics.md, and none of them may crash. A probe of the
// toolkit's heap, not of heapbench: it lives here, not in the device library.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "device/device.hpp"
#include "heapbench/case.hpp"

namespace heapbench {
namespace {

struct EdgeRaw {
  void* zero_a;
  void* zero_b;
  int free_null_returned;
  void* oversize;
  void* align_64k;
  void* align_16m;
  void* align_npot;
};

__global__ void edge_cases(EdgeRaw* out, std::uint64_t heap_bytes) {
  out->zero_a = malloc(0);
  out->zero_b = malloc(0);
  free(nullptr);
  out->free_null_returned = 1;
  out->oversize = malloc(heap_bytes + 1);
  out->align_64k = __nv_aligned_device_malloc(64, 64 * 1024);
  out->align_16m = __nv_aligned_device_malloc(64, 16 * 1024 * 1024);
  out->align_npot = __nv_aligned_device_malloc(64, 48);
  for (void* p : {out->zero_a, out->zero_b, out->oversize, out->align_64k, out->align_16m, out->align_npot}) {
    if (p != nullptr) free(p);
  }
}

const char* alignment_result(void* p, std::uint64_t align) {
  if (p == nullptr) return "NULL";
  return reinterpret_cast<std::uintptr_t>(p) % align == 0 ? "aligned" : "misaligned";
}

TEST(EdgeCases, MeasuredNotCrashedOn) {
  HeapSession s(0);
  s.ensure_heap(8 * kMiB);
  EdgeRaw* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, sizeof(EdgeRaw)), cudaSuccess);
  ASSERT_EQ(cudaMemset(d, 0, sizeof(EdgeRaw)), cudaSuccess);
  edge_cases<<<1, 1>>>(d, 8 * kMiB);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  EdgeRaw h{};
  ASSERT_EQ(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaFree(d), cudaSuccess);
  std::printf("EDGE malloc(0) -> %s\n", h.zero_a == nullptr ? "NULL" : "non-NULL");
  std::printf("EDGE malloc(0) twice -> %s\n",
              h.zero_a != nullptr && h.zero_b != nullptr && h.zero_a != h.zero_b ? "distinct pointers" : "same pointer");
  std::printf("EDGE free(NULL) -> returned\n");
  std::printf("EDGE malloc(heap + 1) -> %s\n", h.oversize == nullptr ? "NULL" : "non-NULL");
  std::printf("EDGE __nv_aligned_device_malloc(64, 64 KiB) -> %s\n", alignment_result(h.align_64k, 64 * 1024));
  std::printf("EDGE __nv_aligned_device_malloc(64, 16 MiB) on an 8 MiB heap -> %s\n",
              alignment_result(h.align_16m, 16 * 1024 * 1024));
  // For a non-power-of-two alignment "aligned" means a multiple of 48.
  std::printf("EDGE __nv_aligned_device_malloc(64, 48) (not a power of two) -> %s\n", alignment_result(h.align_npot, 48));
  EXPECT_EQ(h.oversize, nullptr);
  EXPECT_EQ(h.free_null_returned, 1);
}

}  // namespace
}  // namespace heapbench
