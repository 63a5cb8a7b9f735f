#pragma once
// The graph workload's graphs, on the host: generated ones (R-MAT, grid), a
// Matrix Market file the user names (--graph=FILE.mtx), the seeded batches of
// edge insertions and deletions a round applies, and the reference adjacency
// the device's result is checked against. Plain C++, tested on the host.
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cases/graph_names.hpp"

namespace heapbench::workloads {

// A directed graph in compressed sparse rows: vertex u's out-neighbours are
// targets[offsets[u] .. offsets[u+1]), in ascending order, without self-loops
// or duplicates.
struct Csr {
  std::uint64_t vertices = 0;
  std::vector<std::uint64_t> offsets;  // vertices + 1 entries
  std::vector<std::uint32_t> targets;
  std::string content_hash;  // read from a file: its lines' hash (ContentHash, plan/input_file.hpp); else ""
  std::uint64_t edges() const { return targets.size(); }
};

// A Matrix Market file that cannot be read as a graph: the message is one line,
// "FILE:LINE: what is wrong" (or "FILE: ..." where no line is to blame).
struct GraphFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The largest graph a file may hold: vertices (heapbench's thread limit, one
// thread per vertex) and edges after symmetric entries are mirrored.
inline constexpr std::uint64_t kMaxGraphVertices = 1ull << 26;
inline constexpr std::uint64_t kMaxGraphEdges = 1ull << 31;

// Reads a Matrix Market coordinate file (real, double, integer, complex or
// pattern; general, symmetric, skew-symmetric or hermitian) as a graph: entry
// (i, j) is the edge i-1 -> j-1, a symmetric file's entries go both ways,
// values are ignored, self-loops and repeated edges dropped. Vertices: the
// larger of rows and columns. A regular file only (a FIFO or a device is
// refused before it is opened). With `pinned` (a content_hash an earlier read
// gave), a file that hashes differently, or no longer reads, is refused as
// changed: it was replaced during the run. Throws GraphFileError.
Csr read_matrix_market(const std::string& path, const std::string& pinned = "");

// The graph axis' name for a file: its stem with every character other than
// letters, digits, '_' and '-' replaced by '_' ("road-usa.mtx" -> "road-usa").
// Throws GraphFileError for a stem that is empty or names a generated graph.
std::string graph_name_of_file(const std::string& path);

// The generated graphs (axis values "rmat" and "grid": cases/graph_names.hpp), `vertices` vertices.
using ::heapbench::is_generated_graph;
using ::heapbench::kGeneratedGraphs;

// R-MAT (Graph500's a=0.57, b=0.19, c=0.19): vertices x kRmatEdgeFactor edges
// drawn over the next power of two, those outside the graph, self-loops and
// repeats dropped. Seeded: the same graph on every run.
inline constexpr std::uint64_t kRmatEdgeFactor = 8;
Csr rmat_graph(std::uint64_t vertices, std::uint64_t seed);
// A grid ceil(sqrt(vertices)) wide, each vertex joined both ways to its right
// and lower neighbours (row-major, the last row partial).
Csr grid_graph(std::uint64_t vertices);

// The graph a case names: generated at `vertices`, or read from `file`
// (pinned to that hash where one is given).
Csr make_graph(std::string_view name, const std::string& file, std::uint64_t vertices, const std::string& pinned = "");

// One batch of updates, grouped by source vertex in CSR form: vertex u inserts
// insert_targets[insert_offsets[u] .. insert_offsets[u+1]) in that order (each
// an edge it does not have), then deletes delete_targets[...] likewise (each
// an edge it has by then).
struct UpdateBatch {
  std::vector<std::uint64_t> insert_offsets, delete_offsets;  // vertices + 1 entries each
  std::vector<std::uint32_t> insert_targets, delete_targets;
};

// kUpdateBatches batches of about vertices x kUpdateShare insertions and as
// many deletions, seeded, valid against the graph as the batches before left
// it; `final` receives the adjacency after all of them, in the order the
// device keeps it (each vertex's initial neighbours, insertions appended, a
// deletion closing its gap), for the verifier.
inline constexpr int kUpdateBatches = 4;
inline constexpr double kUpdateShare = 0.5;
std::vector<UpdateBatch> make_updates(const Csr& graph, std::uint64_t seed, Csr& final);

// The blocks a round allocates (and frees) when no call fails: graph_body.hpp's
// capacity rule replayed over the degrees the batches leave.
std::uint64_t blocks_allocated(const Csr& graph, const std::vector<UpdateBatch>& batches);

}  // namespace heapbench::workloads
