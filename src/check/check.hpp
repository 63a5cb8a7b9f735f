#pragma once
// `heapbench check`: a conformance verdict for a device allocator (docs/check.md).
// This header is the host side of it, plain C++: the rows of the battery, what
// each row measures, the judges that turn a measurement into PASS / FAIL /
// NOT SUPPORTED, and the verdict's console, markdown and JSON forms. The
// battery that measures (check/check_battery.hpp) runs the same per-thread
// bodies in CUDA kernels (src/check/check.cu) and on an emulated grid of CPU
// threads (tests/check/), and hands its measurements to these judges, so
// everything that decides a verdict is tested on the CPU.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "heapbench/api_traits.hpp"

namespace CLI {
class App;
}

namespace heapbench::check {

enum class Row {
  overlap,      // 2^20 threads, fixed and mixed sizes, all live at once: no two blocks share a byte
  alignment,    // every block at the alignment the API promises, at every size (and every align it takes)
  exhaustion,   // a full heap answers NULL, within the kernel budget, and the blocks held keep their bytes
  recovery,     // after every block is freed, each size class is served as much as before
  leak,         // many rounds of fill and free: the heap serves as much after as before
  lifetimes,    // blocks allocated in one kernel keep their bytes in the next; freed by another thread in a third
  remote_free,  // blocks freed by a thread of another warp and block come back: the heap serves as much again
  edge,         // free(NULL), size 0, the largest block, a request past the heap, sizes around class boundaries
  soak,         // random mixed-size churn for a fixed time, every block checked before it is freed
  sanitizer,    // the battery's kernels under compute-sanitizer (memcheck, racecheck)
};

inline constexpr std::array kRows = {Row::overlap,   Row::alignment,   Row::exhaustion, Row::recovery, Row::leak,
                                     Row::lifetimes, Row::remote_free, Row::edge,       Row::soak,     Row::sanitizer};

std::string_view row_name(Row row);   // "overlap", "remote_free", ...: --rows, JSON
std::string_view row_title(Row row);  // one line for the table: what PASS means
std::optional<Row> find_row(std::string_view name);

enum class Verdict { pass, fail, not_supported, not_run };
std::string_view verdict_text(Verdict v);  // "PASS", "FAIL", "NOT SUPPORTED", "NOT RUN"

struct RowResult {
  Row row = Row::overlap;
  Verdict verdict = Verdict::not_run;
  std::string evidence;  // the counts, the first offending address pair, the time a call took
  double seconds = 0;    // wall time of the row (its process included)
  std::uint64_t heap_bytes = 0;  // the heap (or arena) the row ran on: heap_for()
  // Exhaustion only: the heap answered NULL within the budget. The rows that
  // measure capacity by filling the heap (recovery, leak, remote_free) need it;
  // without it they are NOT RUN, so one broken property costs one row.
  bool reports_full = true;
  nlohmann::json figures = nlohmann::json::object();  // the numbers behind the evidence
};

nlohmann::json to_json(const RowResult& r);
RowResult row_from_json(const nlohmann::json& j);  // throws nlohmann::json::exception on a malformed row

// What an API can be asked, from its traits.
struct Capabilities {
  bool frees = true;           // deallocate gives the block back (bump: a no-op)
  bool takes_align = false;    // allocate honours its align argument
  std::uint64_t min_alignment = 16;
  std::uint64_t min_heap = 0;  // the least heap it can be set up on (ApiTraits::min_heap): raises every row's heap
};
Capabilities capabilities(const ApiTraits& t, std::uint64_t min_alignment);

// NOT SUPPORTED, with the reason, for a row the API's traits rule out; nullopt otherwise.
std::optional<std::string> unsupported(Row row, const Capabilities& caps, std::string_view api);

// ---- measurements and their judges --------------------------------------

// A block as the battery saw it: its address, the size asked, the alignment it
// must have, the thread (or slot) that owns it and stamped it.
struct Block {
  std::uint64_t addr = 0;
  std::uint64_t size = 0;
  std::uint64_t align = 1;
  std::uint64_t owner = 0;
};

struct OverlapFinding {
  std::uint64_t pairs = 0;          // neighbouring blocks (by address) that share bytes
  std::uint64_t same_address = 0;   // of them, blocks handed out at the same address (double allocation)
  std::optional<std::pair<Block, Block>> first;  // the lowest-addressed offending pair
};
// Sorts by address and compares neighbours: O(n log n), 2^20 blocks in well under a second.
OverlapFinding find_overlaps(std::vector<Block> blocks);

struct Misalignment {
  std::uint64_t count = 0;
  std::optional<Block> first;
};
Misalignment find_misaligned(const std::vector<Block>& blocks);

// One launch set of the overlap, lifetimes or boundary checks: blocks that were
// live together, and what reading every owner's stamp back found.
struct BlockSet {
  std::string label;               // "fixed 64 B", "mixed 16-1024 B", ...
  std::uint64_t attempts = 0;      // allocation calls made
  std::uint64_t not_started = 0;   // calls skipped: the kernel budget ran out first
  std::vector<Block> blocks;       // the non-NULL answers
  std::uint64_t mismatched_words = 0;  // words that did not read back their owner's stamp
  std::uint64_t mismatched_blocks = 0;
  std::optional<std::uint64_t> first_mismatch;  // index into blocks
  double seconds = 0;              // wall time of its launches
};

RowResult judge_overlap(const std::vector<BlockSet>& sets);
RowResult judge_alignment(const BlockSet& set);
RowResult judge_lifetimes(const BlockSet& set);

// A fill: threads allocate `size` until NULL, into at most `max_blocks` slots
// (heap / 16 + threads: more blocks than a heap of 16-byte blocks could hold
// means the allocator never said it was full).
struct Fill {
  std::uint64_t heap_bytes = 0;
  std::uint64_t size = 0;
  std::uint64_t max_blocks = 0;
  std::uint64_t blocks = 0;         // blocks handed out (up to max_blocks)
  std::uint64_t beyond = 0;         // non-NULL answers past max_blocks
  std::uint64_t nulls = 0;          // threads that got NULL (each stops at its first)
  std::uint64_t not_started = 0;    // threads stopped by the kernel budget before a NULL
  std::uint64_t mismatched_blocks = 0;  // blocks that did not keep their stamp (when stamped)
  std::optional<std::uint64_t> first_mismatch_addr;
  double seconds = 0;
  bool finished = true;             // false: the launch did not end within the budget (a hang)
  bool held_too_much() const { return beyond > 0 || blocks * size > heap_bytes; }
};

RowResult judge_exhaustion(const Fill& fill, double budget_s);

// Capacity in blocks of one size, measured by a fill (which must have ended
// with a NULL within the budget, or the number means nothing).
struct Capacity {
  std::uint64_t size = 0;
  std::uint64_t before = 0;
  std::uint64_t after = 0;
};
// After must be at least (1 - tolerance) x before at every size.
inline constexpr double kCapacityTolerance = 0.02;
RowResult judge_recovery(const std::vector<Capacity>& classes);
RowResult judge_leak(const Capacity& c, int rounds);
RowResult judge_remote_free(const Capacity& c, std::uint64_t mismatched_blocks);

struct Edge {
  bool free_null_asked = false;     // the API's contract includes free(NULL)
  std::uint64_t zero_a = 0, zero_b = 0;  // two allocate(0) answers
  std::uint64_t heap_bytes = 0;
  std::uint64_t past_heap = 0;      // the answer to allocate(heap + 1)
  std::uint64_t largest = 0;        // the largest size served (bisection over single calls)
  std::uint64_t largest_mismatched = 0;  // words at its ends (first and last 64 KiB) that did not read back
  BlockSet boundaries;              // 2^k - 1, 2^k + 1 for k = 4 ... 16, several of each, all live
};
RowResult judge_edge(const Edge& e);

struct Soak {
  double seconds = 0;
  std::uint64_t threads = 0;
  std::uint64_t allocations = 0, nulls = 0, frees = 0;
  std::uint64_t mismatched_blocks = 0, misaligned = 0;
};
RowResult judge_soak(const Soak& s);

// A row's process that did not answer: it hung past `seconds`, or died.
RowResult hung(Row row, double seconds, std::string_view during);
RowResult died(Row row, std::string_view how, std::string_view stderr_tail);

// ---- the battery's shape (check/check_battery.hpp runs it) -------------

inline constexpr std::uint64_t kOverlapFixedSize = 64;    // the fixed-size set
inline constexpr std::uint64_t kMixedMax = 256;           // mixed sets: mixed_size(tid, 256), 16 ... 256 B
inline constexpr std::uint64_t kMixedMean = 136;
inline constexpr std::uint64_t kLifetimesThreads = 1 << 16;
inline constexpr std::uint64_t kSoakThreads = 1 << 14;
inline constexpr std::uint64_t kSoakHeld = 4;             // blocks a soaking thread holds at most
inline constexpr std::uint64_t kSoakMaxSize = 1024;       // soak sizes: 16 ... 1024 B
inline constexpr std::uint64_t kExhaustionSize = 1024;    // the fill that meets the full heap
// Threads of every fill: every one ends with a call that meets the full heap,
// and CUDA's malloc is slow at that, more so on a larger heap. On an H200
// (results/H200_2026-11-29_capacity.json) fills by 1024 threads took 0.26 s on
// an 8 MiB heap at every size up to 1 KiB, and ran past a 5 s budget on 64 MiB.
inline constexpr std::uint64_t kFillThreads = 1 << 10;
inline constexpr std::uint64_t kCapacitySize = 256;       // leak and remote_free measure capacity in these
inline constexpr std::array<std::uint64_t, 4> kRecoverySizes = {16, 256, 4096, 65536};
inline constexpr int kLeakRounds = 8;
inline constexpr std::array<std::uint64_t, 17> kAlignmentSizes = {1,   8,   15,   16,   17,   31,   33,   63,   65,
                                                                  127, 129, 255,  257,  1000, 4095, 4097, 65537};
inline constexpr std::array<std::uint64_t, 9> kAlignments = {16, 32, 64, 128, 256, 512, 1024, 2048, 4096};
inline constexpr std::uint64_t kAlignmentCopies = 64;     // threads per (size, alignment)
inline constexpr std::uint64_t kMinCheckHeap = 4 << 20;   // --heaps: the edge row's boundary blocks need ~1 MiB
inline constexpr std::uint64_t kBoundaryCopies = 4;       // threads per size of 2^k +- 1 (edge row)

// Threads of the rows whose size follows --threads (no more than it).
std::uint64_t lifetimes_threads(std::uint64_t threads);
std::uint64_t soak_threads(std::uint64_t threads);
// The heap `row` runs on: `heap` (--heaps) for the rows that fill it or probe
// its edges; for the rows that need every call served, at least 4x their
// demand, rounded up to whole MiB.
std::uint64_t heap_for(Row row, std::uint64_t heap, std::uint64_t threads, bool takes_align);

// ---- the verdict ----------------------------------------------------------

struct ApiVerdict {
  std::string api;
  std::uint64_t heap_bytes = 0;  // the heap (or arena) the filling rows ran on
  std::vector<RowResult> rows;
  bool failed() const;
};

std::string format_table(const std::vector<ApiVerdict>& verdicts);
std::string format_markdown(const std::vector<ApiVerdict>& verdicts, const nlohmann::json& context);
nlohmann::json verdicts_json(const std::vector<ApiVerdict>& verdicts, const nlohmann::json& context);
inline constexpr int kCheckSchemaVersion = 1;

// ---- the command line -----------------------------------------------------

struct CheckOptions {
  std::vector<std::string> apis;       // --apis (default: every allocator with a handle)
  std::vector<std::uint64_t> heaps;    // --heaps: the heap of the filling rows, bytes (default 8 MiB, CUDA's own)
  std::vector<Row> rows;               // --rows (default: all)
  std::uint64_t threads = 1ull << 20;  // --threads: the overlap row's threads
  double soak_s = 2.0;                 // --soak-ms
  double kernel_budget_s = 10.0;       // --kernel-budget-ms: deadline of one launch
  int device = 0;                      // --device
  std::optional<std::string> json;     // --json FILE
  std::optional<std::string> markdown; // --markdown FILE
  bool sanitizer = true;               // --no-sanitizer turns the sanitizer row off (NOT RUN)
  bool help = false;
  std::string help_text;               // with --help: what it prints, from the app that parsed
  // A row's process (one row of one API): the plan it takes its row from (--child-plan, every
  // field above is the plan's: RowSlice) and where it writes the row (--child-out).
  std::optional<std::string> child_plan;
  std::optional<std::string> child_out;
};

// What a row's process runs, handed to it in a plan file by the check that
// starts it: never a command line of flags to parse again. One row for each
// process of the battery; the sanitizer row's processes run several.
struct RowSlice {
  std::string api;
  std::uint64_t heap = 0;  // bytes
  std::vector<Row> rows;
  std::uint64_t threads = 0;
  double soak_s = 0;
  double kernel_budget_s = 0;
  int device = 0;
};
RowSlice row_slice(const CheckOptions& o, const std::string& api, std::uint64_t heap, std::vector<Row> rows);
// A row's process's whole command line after the program's path: the plan it
// runs and the file it writes its rows to (the check's row processes and the
// sanitizer's battery both start it so).
std::vector<std::string> row_process_args(const std::string& plan, const std::string& out);
nlohmann::json to_json(const RowSlice& s);
// Throws std::invalid_argument (one line) for a plan this heapbench did not write.
RowSlice row_slice_from_json(const nlohmann::json& j);
// The options of a row's process: `s` as CheckOptions (child_plan and child_out kept from `o`).
CheckOptions options_of_slice(const CheckOptions& o, const RowSlice& s);

struct CheckParsed;

// heapbench check's flags, built into its subcommand's CLI::App of
// heapbench's tree (bench/subcommands/check.cpp) and read back once the tree
// has parsed; the values CLI11 fills live in here.
class CheckCommandLine {
 public:
  CheckCommandLine();
  ~CheckCommandLine();
  CheckCommandLine(const CheckCommandLine&) = delete;
  CheckCommandLine& operator=(const CheckCommandLine&) = delete;
  // The description and flags, into `app` (named by the caller).
  void build(CLI::App& app);
  // After `app` parsed (argv[0] "check"): the options. `known_apis` are the
  // names --apis may take (those with a handle in this binary). Throws
  // UsageError (plan/options.hpp).
  CheckOptions options(const CLI::App& app, const std::vector<std::string>& known_apis) const;

 private:
  std::unique_ptr<CheckOptions> o_;
  std::unique_ptr<CheckParsed> p_;
};


}  // namespace heapbench::check
