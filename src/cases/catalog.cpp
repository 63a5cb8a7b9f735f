#include "cases/catalog.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cases/enum_keys.hpp"

namespace heapbench {

bool is_pattern(std::string_view name) { return find_pattern_traits(name) != nullptr; }
bool is_api(std::string_view name) {
  const std::vector<std::string_view>& built = built_api_names();
  return std::find(built.begin(), built.end(), name) != built.end();
}
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
bool supported(const PatternTraits& pattern, const ApiTraits& api) {
  return api.built && pattern.takes(api.source) && (!api.is_call_path() || pattern.call_paths);
}
bool supported(std::string_view pattern, std::string_view api) {
  const PatternTraits* p = find_pattern_traits(pattern);
  const ApiTraits* t = built_api(api);
  return p != nullptr && t != nullptr && supported(*p, *t);
}

bool is_capacity_family(std::string_view pattern) {
  const PatternTraits* p = find_pattern_traits(pattern);
  return p != nullptr && p->fills_heap;
}

bool is_call_path(std::string_view api) {
  const ApiTraits* t = find_api_traits(api);
  return t != nullptr && t->is_call_path();
}

std::string not_built_reason(std::string_view api) {
  if (is_api(api)) return {};
  const ApiTraits* t = find_api_traits(api);  // the name looked up once; the traits say the rest
  if (t == nullptr) return {};
  // api_traits_list() holds copies of the api:: entries: compare by the entry's name, not its address.
  if (t->name == api::kCudaStdAligned.name) {
#if HEAPBENCH_CUDA_STD_ALIGNED_ALLOC_ON_DEVICE
    return "turned off when heapbench was configured (HEAPBENCH_CUDA_STD_ALIGNED=OFF)";
#else
    return std::string("the CUDA toolkit's libcu++ (CCCL ") + HEAPBENCH_CCCL_VERSION +
           ") has no device cuda::std::aligned_alloc: it is glibc's host function before CCCL 3 (CUDA 13)";
#endif
  }
  if (t->call_path == CallPath::nvfunction) {
    return "<nvfunctional> was not found when heapbench was configured (HEAPBENCH_NVFUNCTIONAL)";
  }
  return {};
}

std::string not_built_note() {
  std::vector<std::pair<std::string, std::vector<std::string_view>>> unbuilt;
  for (const auto& t : api_traits_list()) {
    if (t.built) continue;
    const std::string why = not_built_reason(t.name);
    auto same = std::find_if(unbuilt.begin(), unbuilt.end(), [&](const auto& u) { return u.first == why; });
    if (same == unbuilt.end()) same = unbuilt.emplace(unbuilt.end(), why, std::vector<std::string_view>{});
    same->second.push_back(t.name);
  }
  std::string note;
  for (const auto& [why, apis] : unbuilt) note += fmt::format("; {} not built: {}", fmt::join(apis, ","), why);
  return note;
}

std::string contract_skip_reason(const Case& c, const ApiTraits& t) {
  if (!t.has_handle()) return {};
  if (t.min_heap != 0 && c.malloc_heap() < t.min_heap) {
    return fmt::format("not supported: {} needs a heap of at least {} bytes, the case has {}", t.name, t.min_heap,
                       c.malloc_heap());
  }
  // per_warp and per_block ask for one block of size x the threads that share it.
  const std::uint64_t sharing = c.pattern != nullptr ? std::max<std::uint64_t>(c.pattern->threads_per_call, 1) : 1;
  if (t.max_size != 0 && c.size > t.max_size / sharing) {  // c.size x sharing > max_size, without overflow
    return sharing == 1 ? fmt::format("not supported: {} serves blocks of at most {} bytes, the case asks for {}",
                                      t.name, t.max_size, c.size)
                        : fmt::format("not supported: {} serves blocks of at most {} bytes, the case asks for {} "
                                      "({} B for each of the {} threads that share a block)",
                                      t.name, t.max_size, c.size * sharing, c.size, sharing);
  }
  if (!t.null_when_full && c.pattern != nullptr && c.pattern->fills_heap) {
    return fmt::format("not supported: {} cannot return NULL when its heap runs out (it traps), and {} fills the "
                       "heap to the first NULL", t.name, c.pattern->name);
  }
  return {};
}
std::string contract_skip_reason(const Case& c) {
  return c.api == nullptr ? std::string() : contract_skip_reason(c, *c.api);
}

std::string known_fault(const Case& c) {
  // Measured on the H200 (CUDA 13.0, driver 580): malloc of the warps' 16-byte-padded
  // totals of 4..64 bytes a lane, freed by lane 0 in a later launch, ends in an
  // unspecified launch failure within tens of rounds, also in a standalone program
  // that shares no code with heapbench (docs/notes/repro/warp_aggregated_malloc.cu).
  if (c.pattern_name() == "output" && c.api_name() == "warp_aggregated") {
    return "a known fault of CUDA's device heap under this strategy's calls, reproduced without heapbench: "
           "docs/notes/warp-aggregated.md";
  }
  return {};
}

bool valid_size(std::string_view pattern, std::uint64_t size) {
  const PatternTraits* p = find_pattern_traits(pattern);
  return p != nullptr && p->valid_size(size);
}

Limit limit_of(std::string_view pattern) {
  const PatternTraits* p = find_pattern_traits(pattern);
  return p != nullptr ? p->limit : Limit::malloc_heap;
}

// constexpr at namespace scope: each table is this file's own.
constexpr EnumKey<Source> kSourceKeys[] = {
    {Source::device_heap, "device_heap"},
    {Source::own_arena, "own_arena"},
    {Source::stack, "stack"},
    {Source::printf_fifo, "printf_fifo"},
    {Source::strategy, "strategy"},
};
std::string_view source_key(Source source) { return key_of<kSourceKeys>(source); }

constexpr EnumKey<CallPath> kCallPathKeys[] = {
    {CallPath::direct, "direct"},
    {CallPath::function_pointer, "function_pointer"},
    {CallPath::nvfunction, "nvfunction"},
};
std::string_view call_path_key(CallPath path) { return key_of<kCallPathKeys>(path); }
std::vector<std::string_view> source_keys() { return keys_of<kSourceKeys>(); }
std::vector<std::string_view> call_path_keys() { return keys_of<kCallPathKeys>(); }

nlohmann::ordered_json apis_json() {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  int order = 0;
  for (const ApiTraits& t : api_traits_list()) {
    if (!t.built) continue;
    nlohmann::ordered_json a = {{"order", order++},
                                {"source", source_key(t.source)},
                                {"baseline", t.baseline},
                                {"display_name", t.label()},
                                {"takes_align", t.takes_align},
                                {"frees", t.frees},
                                {"call_path", call_path_key(t.call_path)}};
    if (t.is_call_path()) a["inner"] = t.inner;
    out[std::string(t.name)] = std::move(a);
  }
  return out;
}

}  // namespace heapbench
