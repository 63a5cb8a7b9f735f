#pragma once
// The graph workload's per-vertex bodies, for the GPU kernels
// (src/workloads/graph.cu) and the host tests, which run the same bodies on
// the CPU against an allocator of the host and strategies broken on purpose.
//
// Each vertex keeps its out-neighbours in one block of capacity_for(degree)
// 4-byte entries (a power of two, at least kMinCapacity). An insertion that
// finds the block full moves the list to a block twice as large (allocate,
// copy, free the old one); a deletion closes its gap, and a list down to a
// quarter of its block moves to one half as large. The verifier compares every
// vertex's list, in order, with the host's reference (graph_input.hpp).
#include <cstdint>

#include "cases/mixed_sizes.hpp"  // HEAPBENCH_HD

namespace heapbench::workloads {

inline constexpr std::uint32_t kMinCapacity = 4;
inline constexpr std::uint64_t kEntryBytes = 4;

struct VertexList {
  std::uint32_t* adj;
  std::uint32_t degree;
  std::uint32_t capacity;
};

HEAPBENCH_HD constexpr std::uint32_t capacity_for(std::uint64_t degree) {
  std::uint32_t c = kMinCapacity;
  while (c < degree) c <<= 1;
  return c;
}

// What one body call did with the allocator.
struct GraphStep {
  std::uint32_t allocs = 0, nulls = 0, frees = 0;
};

// Moves v's list into a new block of `capacity` entries. false (v unchanged,
// a NULL counted) where the allocator has none.
template <class A>
HEAPBENCH_HD inline bool move_list(const A& a, VertexList& v, std::uint32_t capacity, GraphStep& step) {
  auto* p = static_cast<std::uint32_t*>(a.allocate(capacity * kEntryBytes, 16));
  if (p == nullptr) {
    ++step.nulls;
    return false;
  }
  ++step.allocs;
  for (std::uint32_t i = 0; i < v.degree; ++i) p[i] = v.adj[i];
  if (v.adj != nullptr) {
    a.deallocate(v.adj);
    ++step.frees;
  }
  v.adj = p;
  v.capacity = capacity;
  return true;
}

// Vertex u's list from CSR row u.
template <class A>
HEAPBENCH_HD inline GraphStep graph_init(const A& a, VertexList& v, const std::uint64_t* offsets,
                                         const std::uint32_t* targets, std::uint64_t u) {
  GraphStep step;
  v = VertexList{nullptr, 0, 0};
  const std::uint64_t degree = offsets[u + 1] - offsets[u];
  if (!move_list(a, v, capacity_for(degree), step)) return step;
  for (std::uint64_t i = 0; i < degree; ++i) v.adj[i] = targets[offsets[u] + i];
  v.degree = static_cast<std::uint32_t>(degree);
  return step;
}

// Appends targets[begin .. end) to v's list, growing its block as needed.
template <class A>
HEAPBENCH_HD inline GraphStep graph_insert(const A& a, VertexList& v, const std::uint32_t* targets, std::uint64_t begin,
                                           std::uint64_t end) {
  GraphStep step;
  if (begin == end) return step;
  const std::uint64_t degree = v.degree + (end - begin);
  if (degree > v.capacity && !move_list(a, v, capacity_for(degree), step)) return step;
  for (std::uint64_t i = begin; i < end; ++i) v.adj[v.degree++] = targets[i];
  return step;
}

// Removes each of targets[begin .. end) from v's list (its first occurrence,
// keeping the others' order), then shrinks a list down to a quarter of its block.
template <class A>
HEAPBENCH_HD inline GraphStep graph_delete(const A& a, VertexList& v, const std::uint32_t* targets, std::uint64_t begin,
                                           std::uint64_t end) {
  GraphStep step;
  if (begin == end) return step;
  for (std::uint64_t k = begin; k < end; ++k) {
    std::uint32_t i = 0;
    while (i < v.degree && v.adj[i] != targets[k]) ++i;
    if (i == v.degree) continue;  // not there: the verifier finds the list differs
    for (; i + 1 < v.degree; ++i) v.adj[i] = v.adj[i + 1];
    --v.degree;
  }
  if (v.capacity > kMinCapacity && v.degree <= v.capacity / 4) move_list(a, v, v.capacity / 2, step);
  return step;
}

template <class A>
HEAPBENCH_HD inline GraphStep graph_release(const A& a, VertexList& v) {
  GraphStep step;
  if (v.adj != nullptr) {
    a.deallocate(v.adj);
    ++step.frees;
  }
  v = VertexList{nullptr, 0, 0};
  return step;
}

// Vertex u's list against the reference's row u: false where it differs.
HEAPBENCH_HD inline bool graph_check(const VertexList& v, const std::uint64_t* offsets, const std::uint32_t* targets,
                                     std::uint64_t u) {
  const std::uint64_t degree = offsets[u + 1] - offsets[u];
  if (v.degree != degree || v.degree > v.capacity || (degree > 0 && v.adj == nullptr)) return false;
  if (reinterpret_cast<std::uintptr_t>(v.adj) % 4 != 0) return false;
  for (std::uint64_t i = 0; i < degree; ++i) {
    if (v.adj[i] != targets[offsets[u] + i]) return false;
  }
  return true;
}

}  // namespace heapbench::workloads
