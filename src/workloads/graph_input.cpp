#include "workloads/graph_input.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <utility>

#include "workloads/graph_body.hpp"  // capacity_for
#include "cases/mixed_sizes.hpp"  // mix64
#include "plan/input_file.hpp"   // regular_input_size, shown_path
#include "cases/parse.hpp"        // name_of_file

namespace heapbench::workloads {
namespace {

std::uint64_t splitmix(std::uint64_t& state) { return mix64(state += 0x9E3779B97F4A7C15ull); }

// Edges (source, target) into CSR: sorted, self-loops and repeats dropped.
Csr to_csr(std::uint64_t vertices, std::vector<std::pair<std::uint32_t, std::uint32_t>>& edges) {
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  Csr g;
  g.vertices = vertices;
  g.offsets.assign(vertices + 1, 0);
  g.targets.reserve(edges.size());
  for (const auto& [u, v] : edges) {
    if (u == v) continue;
    ++g.offsets[u + 1];
    g.targets.push_back(v);
  }
  for (std::uint64_t u = 0; u < vertices; ++u) g.offsets[u + 1] += g.offsets[u];
  return g;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A whole decimal number of at most 2^63 - 1, or false.
bool read_uint(std::string_view word, std::uint64_t& out) {
  if (word.empty() || word.size() > 19) return false;
  const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), out);
  return ec == std::errc{} && end == word.data() + word.size();
}

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    const std::size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

struct Header {
  bool mirrored = false;  // symmetric, skew-symmetric or hermitian: each entry both ways
  std::size_t values = 0;  // numbers after i and j on each entry line
};

Header read_banner(const std::string& path, const std::string& line) {
  const auto w = words(line);
  const auto fail = [&](const std::string& why) { return GraphFileError(fmt::format("{}:1: {}", path, why)); };
  if (w.empty() || lower(std::string(w[0])) != "%%matrixmarket") {
    throw fail("not a Matrix Market file (its first line must start with %%MatrixMarket)");
  }
  if (w.size() != 5) throw fail("the banner needs five words: %%MatrixMarket matrix coordinate <field> <symmetry>");
  const std::string object = lower(std::string(w[1])), format = lower(std::string(w[2]));
  const std::string field = lower(std::string(w[3])), symmetry = lower(std::string(w[4]));
  if (object != "matrix") throw fail(fmt::format("object {} is not supported: only matrix", shown_words(w[1])));
  if (format != "coordinate") {
    throw fail(fmt::format("format {} is not supported: only coordinate (a sparse matrix) is a graph", shown_words(w[2])));
  }
  Header h;
  if (field == "pattern") {
    h.values = 0;
  } else if (field == "real" || field == "double" || field == "integer") {
    h.values = 1;
  } else if (field == "complex") {
    h.values = 2;
  } else {
    throw fail(fmt::format("field {} is not supported: real, double, integer, complex or pattern", shown_words(w[3])));
  }
  if (symmetry == "symmetric" || symmetry == "skew-symmetric" || symmetry == "hermitian") {
    h.mirrored = true;
  } else if (symmetry != "general") {
    throw fail(fmt::format("symmetry {} is not supported: general, symmetric, skew-symmetric or hermitian", shown_words(w[4])));
  }
  return h;
}

// One entry line: "i j [values]", 1-based, within the matrix.
std::pair<std::uint32_t, std::uint32_t> read_entry(const std::string& where, const std::string& line,
                                                   const Header& h, std::uint64_t rows, std::uint64_t cols) {
  const auto w = words(line);
  if (w.size() != 2 + h.values) {
    throw GraphFileError(fmt::format("{}: an entry needs {} numbers (row, column{}), this line has {}", where,
                                     2 + h.values, h.values ? ", value" : "", w.size()));
  }
  std::uint64_t i = 0, j = 0;
  if (!read_uint(w[0], i) || !read_uint(w[1], j)) {
    throw GraphFileError(fmt::format("{}: {} is not a row and a column (whole numbers from 1)", where,
                                     shown_words(fmt::format("{} {}", w[0], w[1]))));
  }
  if (i < 1 || i > rows || j < 1 || j > cols) {
    throw GraphFileError(fmt::format("{}: entry ({}, {}) is outside the {} x {} matrix", where, i, j, rows, cols));
  }
  return {static_cast<std::uint32_t>(i - 1), static_cast<std::uint32_t>(j - 1)};
}

// The size line's numbers: the matrix is rows x cols with this many entries.
struct Size {
  std::uint64_t rows = 0, cols = 0, entries = 0;
};

// The size line "rows columns entries", within what heapbench runs and holds.
Size read_size(const std::string& where, const std::vector<std::string_view>& w, const Header& h) {
  Size size;
  if (w.size() != 3 || !read_uint(w[0], size.rows) || !read_uint(w[1], size.cols) || !read_uint(w[2], size.entries)) {
    throw GraphFileError(fmt::format("{}: the size line must be three whole numbers: rows columns entries", where));
  }
  if (std::max(size.rows, size.cols) > kMaxGraphVertices) {
    throw GraphFileError(fmt::format("{}: {} vertices, more than the {} heapbench runs (one thread each)", where,
                                     std::max(size.rows, size.cols), kMaxGraphVertices));
  }
  if (size.entries > kMaxGraphEdges / (h.mirrored ? 2 : 1)) {
    throw GraphFileError(fmt::format("{}: {} entries, more than the {} edges heapbench holds", where, size.entries,
                                     kMaxGraphEdges));
  }
  return size;
}

}  // namespace

namespace {

// The size of the regular file `path`; a FIFO or a device is refused before it is opened.
std::uint64_t input_size(const std::string& path) {
  try {
    return regular_input_size(path);
  } catch (const InputFileError& e) {
    throw GraphFileError(e.what());
  }
}

Csr read_whole_matrix_market(const std::string& path_given) {
  const std::string path = shown_path(path_given);  // as messages show it: a newline in it is quoted
  const std::uint64_t file_bytes = input_size(path_given);
  std::ifstream in(path_given, std::ios::binary);
  if (!in) throw GraphFileError(fmt::format("{}: cannot be opened for reading", path));
  std::string line;
  ContentHash hash;  // of every line read, each with its end
  if (!std::getline(in, line)) throw GraphFileError(fmt::format("{}: empty file", path));
  hash.add(line.data(), line.size());
  hash.add("\n", 1);
  const Header h = read_banner(path, line);
  std::uint64_t lineno = 1;
  Size size;
  bool sized = false;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  std::uint64_t read = 0;
  while (std::getline(in, line)) {
    ++lineno;
    hash.add(line.data(), line.size());
    hash.add("\n", 1);
    const auto w = words(line);
    if (w.empty() || w[0].front() == '%') continue;  // blank lines and comments
    const std::string where = fmt::format("{}:{}", path, lineno);
    if (!sized) {
      size = read_size(where, w, h);
      // What the file can hold, not what it declares: an entry line is at least 4 bytes ("1 1\n").
      edges.reserve(std::min<std::uint64_t>(size.entries, file_bytes / 4 + 1) * (h.mirrored ? 2 : 1));
      sized = true;
      continue;
    }
    if (read == size.entries) {
      throw GraphFileError(fmt::format("{}: more entries than the {} the size line declares", where, size.entries));
    }
    const auto [u, v] = read_entry(where, line, h, size.rows, size.cols);
    edges.emplace_back(u, v);
    if (h.mirrored) edges.emplace_back(v, u);
    ++read;
  }
  if (in.bad()) throw GraphFileError(fmt::format("{}: read failed after line {}", path, lineno));
  if (!sized) throw GraphFileError(fmt::format("{}: ends before its size line (rows columns entries)", path));
  if (read < size.entries) {
    throw GraphFileError(fmt::format("{}:{}: ends after {} of the {} entries its size line declares", path, lineno,
                                     read, size.entries));
  }
  Csr g = to_csr(std::max(size.rows, size.cols), edges);
  g.content_hash = hash.hex();
  return g;
}

}  // namespace

Csr read_matrix_market(const std::string& path, const std::string& pinned) {
  return read_pinned<GraphFileError>(path, pinned, read_whole_matrix_market);
}

std::string graph_name_of_file(const std::string& path) {
  const std::string base = name_of_file(path);
  if (base.empty()) {
    throw GraphFileError(fmt::format("{}: the file's name has no stem to name its graph by", shown_path(path)));
  }
  if (is_generated_graph(base)) {
    throw GraphFileError(fmt::format("{}: '{}' names a generated graph; rename the file", shown_path(path), base));
  }
  return base;
}

Csr rmat_graph(std::uint64_t vertices, std::uint64_t seed) {
  int scale = 0;
  while ((1ull << scale) < vertices) ++scale;
  std::uint64_t state = seed;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  const std::uint64_t want = vertices * kRmatEdgeFactor;
  edges.reserve(want);
  for (std::uint64_t e = 0; e < want; ++e) {
    std::uint64_t u = 0, v = 0;
    for (int bit = 0; bit < scale; ++bit) {
      const double r = static_cast<double>(splitmix(state) >> 11) * 0x1.0p-53;
      const bool down = r >= 0.57 + 0.19, right = (r >= 0.57 && r < 0.76) || r >= 0.95;
      u = u << 1 | (down ? 1 : 0);
      v = v << 1 | (right ? 1 : 0);
    }
    if (u < vertices && v < vertices) edges.emplace_back(static_cast<std::uint32_t>(u), static_cast<std::uint32_t>(v));
  }
  return to_csr(vertices, edges);
}

Csr grid_graph(std::uint64_t vertices) {
  const auto width = static_cast<std::uint64_t>(std::ceil(std::sqrt(static_cast<double>(vertices))));
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  for (std::uint64_t u = 0; u < vertices; ++u) {
    for (const std::uint64_t v : {u + 1, u + width}) {
      if (v >= vertices || (v == u + 1 && v % width == 0)) continue;
      edges.emplace_back(static_cast<std::uint32_t>(u), static_cast<std::uint32_t>(v));
      edges.emplace_back(static_cast<std::uint32_t>(v), static_cast<std::uint32_t>(u));
    }
  }
  return to_csr(vertices, edges);
}

Csr make_graph(std::string_view name, const std::string& file, std::uint64_t vertices, const std::string& pinned) {
  if (name == "rmat") return rmat_graph(vertices, 0x726d6174ull);  // "rmat"
  if (name == "grid") return grid_graph(vertices);
  if (file.empty()) throw GraphFileError(fmt::format("graph '{}' is neither generated nor given by --graph", name));
  return read_matrix_market(file, pinned);
}

namespace {

// Each vertex's adjacency as the device keeps it, updated as the device does.
using Lists = std::vector<std::vector<std::uint32_t>>;

void group(const std::vector<std::pair<std::uint32_t, std::uint32_t>>& ops, std::uint64_t vertices,
           std::vector<std::uint64_t>& offsets, std::vector<std::uint32_t>& targets) {
  offsets.assign(vertices + 1, 0);
  for (const auto& op : ops) ++offsets[op.first + 1];
  for (std::uint64_t u = 0; u < vertices; ++u) offsets[u + 1] += offsets[u];
  targets.assign(ops.size(), 0);
  std::vector<std::uint64_t> next(offsets.begin(), offsets.end() - 1);
  for (const auto& op : ops) targets[next[op.first]++] = op.second;  // stable: each vertex's ops in drawn order
}

UpdateBatch one_batch(Lists& lists, std::uint64_t& state) {
  const std::uint64_t vertices = lists.size();
  const auto count = static_cast<std::uint64_t>(static_cast<double>(vertices) * kUpdateShare);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> inserts, deletes;
  for (std::uint64_t k = 0, tries = 0; k < count && tries < 8 * count; ++tries) {
    const auto u = static_cast<std::uint32_t>(splitmix(state) % vertices);
    const auto v = static_cast<std::uint32_t>(splitmix(state) % vertices);
    auto& l = lists[u];
    if (u == v || std::find(l.begin(), l.end(), v) != l.end()) continue;
    l.push_back(v);
    inserts.emplace_back(u, v);
    ++k;
  }
  // Deletions after this batch's insertions, of edges present by then.
  for (std::uint64_t k = 0, tries = 0; k < count && tries < 8 * count; ++tries) {
    const auto u = static_cast<std::uint32_t>(splitmix(state) % vertices);
    auto& l = lists[u];
    if (l.empty()) continue;
    const std::size_t i = splitmix(state) % l.size();
    deletes.emplace_back(u, l[i]);
    l.erase(l.begin() + static_cast<std::ptrdiff_t>(i));
    ++k;
  }
  UpdateBatch b;
  group(inserts, vertices, b.insert_offsets, b.insert_targets);
  group(deletes, vertices, b.delete_offsets, b.delete_targets);
  return b;
}

}  // namespace

std::vector<UpdateBatch> make_updates(const Csr& graph, std::uint64_t seed, Csr& final) {
  Lists lists(graph.vertices);
  for (std::uint64_t u = 0; u < graph.vertices; ++u) {
    lists[u].assign(graph.targets.begin() + static_cast<std::ptrdiff_t>(graph.offsets[u]),
                    graph.targets.begin() + static_cast<std::ptrdiff_t>(graph.offsets[u + 1]));
  }
  std::uint64_t state = seed;
  std::vector<UpdateBatch> batches;
  for (int b = 0; b < kUpdateBatches; ++b) batches.push_back(one_batch(lists, state));
  // Within a batch the device applies a vertex's insertions, then its
  // deletions; one_batch drew every insertion before any deletion, and each
  // vertex's deletions remove the first occurrence of their target, which is
  // the one it drew: the same lists either way.
  final = Csr{};
  final.vertices = graph.vertices;
  final.offsets.assign(graph.vertices + 1, 0);
  for (std::uint64_t u = 0; u < graph.vertices; ++u) {
    final.offsets[u + 1] = final.offsets[u] + lists[u].size();
    final.targets.insert(final.targets.end(), lists[u].begin(), lists[u].end());
  }
  return batches;
}

std::uint64_t blocks_allocated(const Csr& g, const std::vector<UpdateBatch>& batches) {
  std::uint64_t blocks = 0;
  for (std::uint64_t u = 0; u < g.vertices; ++u) {
    std::uint64_t degree = g.offsets[u + 1] - g.offsets[u];
    std::uint32_t capacity = capacity_for(degree);
    ++blocks;
    for (const auto& b : batches) {
      degree += b.insert_offsets[u + 1] - b.insert_offsets[u];
      if (degree > capacity) {
        capacity = capacity_for(degree);
        ++blocks;
      }
      const std::uint64_t deleted = b.delete_offsets[u + 1] - b.delete_offsets[u];
      degree -= deleted;
      if (deleted > 0 && capacity > kMinCapacity && degree <= capacity / 4) {
        capacity /= 2;
        ++blocks;
      }
    }
  }
  return blocks;
}

}  // namespace heapbench::workloads
