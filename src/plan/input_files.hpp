#pragma once
// What a run takes from a --trace or --graph file, and who reads it. Reading a
// trace is replay/'s business and a Matrix Market graph workloads/'s, both
// above plan/ (docs/development.md, "Layers"): the program hands plan/ these
// readers (bench/inputs.cpp) and the options parser calls them, so that plan/
// includes neither. A reader throws std::exception with one line for a file it
// refuses; the parser names the flag and the file before it.
#include <cstdint>
#include <functional>
#include <string>

namespace heapbench {

// A trace (heapbench/trace.cuh), as the replay's cases need it.
struct TraceFacts {
  std::string name;                  // its cases' trace name (from the file's name)
  std::string note;                  // one line for the parent's stderr ("": none): releases it will not replay
  std::string content_hash;          // the bytes as read: every later read is held to them
  std::uint64_t max_size = 0;        // the largest request: the case's size
  std::uint64_t max_threads = 0;     // the largest launch: the case's threads
  std::uint64_t heap_bytes = 0;      // the heap it was recorded with
  std::uint64_t device_bytes = 0;    // the replay plan's device memory beside the heap
};

// A graph file, as the graph workload's cases need it.
struct GraphFacts {
  std::string name;                  // its cases' graph name (from the file's name)
  std::string content_hash;
  std::uint64_t vertices = 0;        // one thread per vertex
};

// Empty readers: the program reads no such file (--trace / --graph refused, saying so).
struct InputReaders {
  std::function<TraceFacts(const std::string& path)> trace;
  std::function<GraphFacts(const std::string& path)> graph;
};

}  // namespace heapbench
