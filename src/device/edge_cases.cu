// What the device heap does with requests at its edges: malloc(0), free(NULL),
// a request larger than the heap, alignments beyond what it promises.
#include <string>

#include "cuda_check.cuh"
#include "device_buffer.cuh"
#include "heapbench/device.hpp"

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

std::string alignment_result(void* p, std::uint64_t align) {
  if (p == nullptr) return "NULL";
  return reinterpret_cast<std::uintptr_t>(p) % align == 0 ? "aligned" : "misaligned";
}

}  // namespace

EdgeCaseReport probe_edge_cases(std::uint64_t heap_bytes) {
  detail::DeviceBuffer<EdgeRaw> d(1);
  HB_CUDA_CHECK(cudaMemset(d.get(), 0, sizeof(EdgeRaw)));
  edge_cases<<<1, 1>>>(d.get(), heap_bytes);
  HB_CUDA_CHECK(cudaGetLastError());
  EdgeRaw h{};
  HB_CUDA_CHECK(cudaMemcpy(&h, d.get(), sizeof h, cudaMemcpyDeviceToHost));
  EdgeCaseReport r;
  r.malloc_zero_null = h.zero_a == nullptr;
  r.malloc_zero_distinct = h.zero_a != nullptr && h.zero_b != nullptr && h.zero_a != h.zero_b;
  r.free_null_returned = h.free_null_returned == 1;
  r.oversize_null = h.oversize == nullptr;
  r.align_64k_result = alignment_result(h.align_64k, 64 * 1024);
  r.align_16m_result = alignment_result(h.align_16m, 16 * 1024 * 1024);
  // For a non-power-of-two alignment "aligned" means a multiple of 48.
  r.align_npot_result = alignment_result(h.align_npot, 48);
  return r;
}

}  // namespace heapbench
