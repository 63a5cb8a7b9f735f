#include "heapbench/catalog.hpp"

#include <algorithm>

namespace heapbench {

bool is_pattern(std::string_view name) { return std::find(kPatterns.begin(), kPatterns.end(), name) != kPatterns.end(); }
bool is_api(std::string_view name) { return std::find(kApis.begin(), kApis.end(), name) != kApis.end(); }
namespace {
// The built API named `api`, or nullptr.
const ApiTraits* built_api(std::string_view api) {
  const ApiTraits* t = find_api_traits(api);
  return t != nullptr && t->built ? t : nullptr;
}
}  // namespace

bool takes_align(std::string_view api) {
  const ApiTraits* t = find_api_traits(api);
  return t != nullptr && t->takes_align;
}
bool supported(std::string_view pattern, std::string_view api) {
  const ApiTraits* t = built_api(api);
  if (!is_pattern(pattern) || t == nullptr) return false;
  if ((limit_of(pattern) == Limit::printf_fifo) != (t->source == Source::printf_fifo)) return false;
  if (t->is_call_path()) return pattern == "per_thread" || pattern == "per_thread_latency";
  return t->source != Source::stack || pattern == "per_thread";
}

bool is_capacity_family(std::string_view pattern) { return pattern.rfind("capacity", 0) == 0; }

bool is_call_path(std::string_view api) {
  const ApiTraits* t = find_api_traits(api);
  return t != nullptr && t->is_call_path();
}

std::string not_built_reason(std::string_view api) {
  if (is_api(api)) return {};
  if (api == "cuda_std_aligned") {
#if HEAPBENCH_CUDA_STD_ALIGNED_ALLOC_ON_DEVICE
    return "turned off when heapbench was configured (HEAPBENCH_CUDA_STD_ALIGNED=OFF)";
#else
    return std::string("the CUDA toolkit's libcu++ (CCCL ") + HEAPBENCH_CCCL_VERSION +
           ") has no device cuda::std::aligned_alloc: it is glibc's host function before CCCL 3 (CUDA 13)";
#endif
  }
  if (const ApiTraits* t = find_api_traits(api); t != nullptr && t->call_path == CallPath::nvfunction) {
    return "<nvfunctional> was not found when heapbench was configured (HEAPBENCH_NVFUNCTIONAL)";
  }
  return {};
}

bool valid_size(std::string_view pattern, std::uint64_t size) {
  if (pattern == "printf") return size >= 8 && size <= 64 && size % 8 == 0;
  return size > 0;
}

Limit limit_of(std::string_view pattern) { return pattern == "printf" ? Limit::printf_fifo : Limit::malloc_heap; }

}  // namespace heapbench
