// `heapbench check`: a conformance verdict for device allocators (docs/check.md).
//
// The parent runs every row of every allocator in a process of its own (this
// program again, with --child-out): a row that crashes the context (an illegal
// address) or hangs in an allocator that never returns costs that row only. A
// row's process bounds each launch (a %globaltimer deadline in the bodies, a
// host watchdog around the launch) and reports a hang itself; the parent kills
// a process that does not answer at all. The sanitizer row runs a small
// battery under compute-sanitizer the same way.
//
// Prints one table per allocator as it is judged; --json and --markdown write
// the same verdicts. Exit status: 0 no row failed, 1 some row failed, 2 bad
// command line, 3 no device.
#include "app.hpp"
#include "subcommand.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "orchestrate/exit_codes.hpp"
#include "check/check_battery.hpp"
#include "plan/options.hpp"
#include "report/version.hpp"
#include "orchestrate/supervise.hpp"

namespace heapbench {
namespace {

using namespace check;
namespace fs = std::filesystem;

constexpr std::uint64_t kSanitizerHeap = 8ull << 20;  // at least kMinCheckHeap; small, so the largest block is quick to check
constexpr int kSanitizerErrorExit = 86;  // compute-sanitizer --error-exitcode: it found an error

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string tail_of(const fs::path& file, std::size_t chars) {
  std::ifstream f(file);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string s = ss.str();
  if (s.size() > chars) s = "..." + s.substr(s.size() - chars);
  for (char& c : s) {
    if (c == '\n') c = ' ';
  }
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// What compute-sanitizer found, from its log: the first line of each error
// report ("========= Invalid __global__ read ...", "========= Program hit ...")
// and its summary, not the host frames at the log's end.
std::string sanitizer_findings(const fs::path& file) {
  std::ifstream f(file);
  std::vector<std::string> found;
  std::string line;
  const std::string mark = "========= ";
  while (std::getline(f, line)) {
    if (line.rfind(mark, 0) != 0 || line.size() <= mark.size() || line[mark.size()] == ' ') continue;
    const std::string what = line.substr(mark.size());
    if (what.rfind("COMPUTE-SANITIZER", 0) == 0 || what.rfind("Saved host backtrace", 0) == 0) continue;
    if (std::find(found.begin(), found.end(), what) == found.end()) found.push_back(what);
    if (found.size() == 4) break;
  }
  return found.empty() ? tail_of(file, 600) : fmt::format("{}", fmt::join(found, " | "));
}

// A child with its output and errors in `log`, killed after `timeout_s` (supervise.hpp).
ChildEnd spawn_and_wait(const std::vector<std::string>& args, const fs::path& log, double timeout_s) {
  ChildSpec spec;
  spec.args = args;
  spec.output = log.string();
  spec.with_stderr = true;
  const auto t0 = std::chrono::steady_clock::now();
  spec.tick = [t0, timeout_s] { return since(t0) > timeout_s; };
  ChildEnd end = supervise(spec);
  if (!end.failed.empty()) throw std::runtime_error(fmt::format("{} {}", args[0], end.failed));
  return end;
}

std::string how_it_ended(const ChildEnd& end) {
  if (WIFSIGNALED(end.status)) return end.how();
  return fmt::format("exited with status {} without writing its row", WEXITSTATUS(end.status));
}

std::vector<RowResult> read_rows(const fs::path& file) {
  std::ifstream f(file);
  const nlohmann::json j = nlohmann::json::parse(f);
  std::vector<RowResult> rows;
  for (const auto& r : j) rows.push_back(row_from_json(r));
  return rows;
}

// A row's file (and plan), as every file heapbench writes: a temporary name, then a rename.
void write_json_file(const std::string& path, const nlohmann::json& j) { write_atomically(path, j.dump(2) + '\n'); }

// A parent's view of the limits: each launch may take the budget (the soak its
// time) and a row makes a few dozen; a process that has not answered by then
// is stuck beyond its own watchdog.
double row_timeout_s(const CheckOptions& o) { return 60 + 20 * o.kernel_budget_s + o.soak_s; }

// A row process's command line: `program` (the row process itself, or a tool that runs
// it), then its plan (`slice`, written to `plan`) and the file it writes its rows to.
// Throws when the plan cannot be written.
std::vector<std::string> row_process_line(std::vector<std::string> program, const RowSlice& slice,
                                          const fs::path& plan, const fs::path& out) {
  write_json_file(plan.string(), to_json(slice));
  for (std::string& a : row_process_args(plan.string(), out.string())) program.push_back(std::move(a));
  return program;
}

RowResult run_row_process(const CheckOptions& o, const std::string& api, std::uint64_t heap, Row row,
                          const fs::path& dir) {
  const fs::path out = dir / fmt::format("{}_{}_{}.json", api, heap >> 20, row_name(row));
  const fs::path log = dir / fmt::format("{}_{}_{}.log", api, heap >> 20, row_name(row));
  const fs::path plan = dir / fmt::format("{}_{}_{}.plan", api, heap >> 20, row_name(row));
  // The row's whole command line: what it runs is the plan's (RowSlice), never flags parsed again.
  std::vector<std::string> args;
  try {
    args = row_process_line({"/proc/self/exe"}, row_slice(o, api, heap, {row}), plan, out);
  } catch (const std::exception& e) {
    return died(row, fmt::format("its plan could not be written ({})", e.what()), "");
  }
  const ChildEnd s = spawn_and_wait(args, log, row_timeout_s(o));
  RowResult r;
  if (s.killed) {
    r = hung(row, s.seconds, "the row's process was killed");
  } else if (WIFEXITED(s.status) && WEXITSTATUS(s.status) == 0 && fs::exists(out)) {
    try {
      r = read_rows(out).at(0);
    } catch (const std::exception& e) {
      r = died(row, fmt::format("wrote an unreadable row ({})", e.what()), tail_of(log, 300));
    }
  } else {
    r = died(row, how_it_ended(s), tail_of(log, 300));
  }
  r.seconds = s.seconds;
  return r;
}

std::optional<std::string> find_sanitizer() {
  std::vector<fs::path> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    for (std::string d; std::getline(ss, d, ':');) dirs.emplace_back(d);
  }
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* v = std::getenv(var)) dirs.push_back(fs::path(v) / "bin");
  }
  dirs.emplace_back("/usr/local/cuda/bin");
  for (const fs::path& d : dirs) {
    const fs::path p = d / "compute-sanitizer";
    if (access(p.c_str(), X_OK) == 0) return p.string();
  }
  return std::nullopt;
}

// One compute-sanitizer tool over some rows of the battery.
struct SanitizerRun {
  const char* tool;
  std::vector<Row> rows;
  std::uint64_t threads;
};

std::string rows_text(const std::vector<Row>& rows) {
  std::vector<std::string_view> names;
  for (Row r : rows) names.push_back(row_name(r));
  return fmt::format("{}", fmt::join(names, ","));
}

// What `run`'s row process runs over one allocator: its rows, on a small heap, with the
// budget the tool's slower launches need.
RowSlice sanitizer_slice(const SanitizerRun& run, const CheckOptions& o, const std::string& api) {
  RowSlice slice = row_slice(o, api, kSanitizerHeap, run.rows);
  slice.threads = run.threads;
  slice.kernel_budget_s = o.kernel_budget_s * 10;  // the tool slows every launch
  return slice;
}

// The tool's part of `run`'s command line: the row process follows it (row_process_line).
std::vector<std::string> sanitizer_command(const std::string& tool, const SanitizerRun& run) {
  return {tool,
          "--tool",
          run.tool,
          "--error-exitcode",
          std::to_string(kSanitizerErrorExit),
          // The battery checks every CUDA call itself; under the tool
          // the child's heap-limit call is refused (the tool's own
          // kernels ran first), which is no finding about the allocator.
          "--report-api-errors",
          "no",
          "--print-limit",
          "10",
          // /proc/self/exe would name compute-sanitizer inside it: give the real path.
          fs::read_symlink("/proc/self/exe").string()};
}

// Why the run fails the row (no answer, errors found, the battery ended
// badly), or nothing when it ended clean.
std::optional<std::string> sanitizer_failure(const SanitizerRun& run, const ChildEnd& s, const fs::path& log) {
  if (s.killed) return fmt::format("{}: no answer within {:.0f} s", run.tool, s.seconds);
  if (WIFEXITED(s.status) && WEXITSTATUS(s.status) == kSanitizerErrorExit) {
    return fmt::format("{} found errors in rows {}: {}", run.tool, rows_text(run.rows), sanitizer_findings(log));
  }
  if (!(WIFEXITED(s.status) && WEXITSTATUS(s.status) == 0)) {
    return fmt::format("under {}, the battery {}: {}", run.tool, how_it_ended(s), tail_of(log, 400));
  }
  return std::nullopt;
}

// The overlap, lifetimes and edge rows (memcheck) and the overlap row
// (racecheck), small, under compute-sanitizer: PASS when it reports no error.
RowResult run_sanitizer(const CheckOptions& o, const CheckHooks& hooks, const std::string& api, const fs::path& dir) {
  RowResult r;
  r.row = Row::sanitizer;
  if (!hooks.no_sanitizer.empty()) {
    r.evidence = hooks.no_sanitizer;
    return r;
  }
  if (!o.sanitizer) {
    r.evidence = "--no-sanitizer";
    return r;
  }
  const auto tool = find_sanitizer();
  if (!tool) {
    r.evidence = "compute-sanitizer is not on PATH, in $CUDA_HOME/bin or in /usr/local/cuda/bin";
    return r;
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> parts;
  for (const SanitizerRun& run : {SanitizerRun{"memcheck", {Row::overlap, Row::lifetimes, Row::edge}, 4096},
                                  SanitizerRun{"racecheck", {Row::overlap}, 1024}}) {
    const fs::path out = dir / fmt::format("{}_{}.json", api, run.tool);
    const fs::path log = dir / fmt::format("{}_{}.log", api, run.tool);
    const fs::path plan = dir / fmt::format("{}_{}.plan", api, run.tool);
    std::vector<std::string> command;
    try {
      command = row_process_line(sanitizer_command(*tool, run), sanitizer_slice(run, o, api), plan, out);
    } catch (const std::exception& e) {
      r.verdict = check::Verdict::fail;
      r.evidence = fmt::format("{}: its plan could not be written ({})", run.tool, e.what());
      break;
    }
    const ChildEnd s = spawn_and_wait(command, log, 10 * row_timeout_s(o));
    if (auto why = sanitizer_failure(run, s, log)) {
      r.verdict = check::Verdict::fail;
      r.evidence = *why;
      break;
    }
    parts.push_back(
        fmt::format("{} ({}, {} threads): no error, {:.1f} s", run.tool, rows_text(run.rows), run.threads, s.seconds));
  }
  if (r.verdict != check::Verdict::fail) {
    r.verdict = check::Verdict::pass;
    r.evidence = fmt::format("{}", fmt::join(parts, "; "));
  }
  r.seconds = since(t0);
  return r;
}

const CheckApi& api_named(const CheckHooks& hooks, const std::string& name) {
  for (const CheckApi& a : hooks.apis) {
    if (a.name == name) return a;
  }
  throw std::logic_error("no allocator " + name);
}

RowPlan plan_for(const CheckOptions& o, const CheckApi& api, std::uint64_t heap, Row row) {
  RowPlan p;
  p.row = row;
  // An allocator that cannot be set up on less (gallatin: one 16 MiB segment) gets its least heap.
  p.heap_bytes = std::max<std::uint64_t>(heap_for(row, heap, o.threads, api.caps.takes_align), api.caps.min_heap);
  p.threads = o.threads;
  p.soak_s = o.soak_s;
  p.budget_s = o.kernel_budget_s;
  p.caps = api.caps;
  p.free_null = api.free_null;
  p.device = o.device;
  return p;
}


// In a row's process: the rows asked, in order, into --child-out.
int run_child(const CheckOptions& o, const CheckHooks& hooks) {
  die_with_parent(SIGKILL);  // a stuck row dies with its parent, not holding the GPU
  const CheckApi& api = api_named(hooks, o.apis.at(0));
  nlohmann::json rows = nlohmann::json::array();
  for (Row row : o.rows) {
    RowPlan plan = plan_for(o, api, o.heaps.at(0), row);
    const auto t0 = std::chrono::steady_clock::now();
    plan.on_hang = [&](const Hang& h) {
      // A launch is still running (a thread spinning in the allocator): write
      // the row and leave at once, with nothing torn down that would wait for it.
      RowResult r = hung(row, h.seconds, h.what());
      r.seconds = since(t0);
      r.heap_bytes = plan.heap_bytes;
      rows.push_back(to_json(r));
      write_json_file(*o.child_out, rows);
      std::fflush(stdout);
      std::_Exit(kExitOk);
    };
    RowResult r;
    bool stuck = false;
    try {
      r = hooks.run_row(api, plan);
    } catch (const Hang& h) {  // a grid without on_hang, or a capacity fill past the budget
      r = hung(row, h.seconds, h.what());
      stuck = true;
    } catch (const std::exception& e) {
      r.row = row;
      r.verdict = check::Verdict::fail;
      r.evidence = fmt::format("error: {}", e.what());
      r.reports_full = false;
    }
    r.seconds = since(t0);
    r.heap_bytes = plan.heap_bytes;
    rows.push_back(to_json(r));
    write_json_file(*o.child_out, rows);
    if (stuck) {
      // A launch is still running (a thread spinning in the allocator): leave
      // without waiting for it or tearing anything down.
      std::fflush(stdout);
      std::_Exit(kExitOk);
    }
  }
  return kExitOk;
}

void print_api(const ApiVerdict& v) {
  fmt::print("{}", format_table({v}));
  std::fflush(stdout);
}

// Every row of `o` for one allocator on one heap, each in a process of its own.
ApiVerdict check_api(const CheckOptions& o, const CheckHooks& ch, const std::string& name, std::uint64_t heap,
                     const fs::path& dir) {
  const CheckApi& api = api_named(ch, name);
  ApiVerdict v;
  v.api = name;
  v.heap_bytes = heap;
  std::optional<RowResult> exhaustion;
  for (Row row : o.rows) {
    RowResult r;
    const bool fills = row == Row::recovery || row == Row::leak || row == Row::remote_free;
    if (auto why = unsupported(row, api.caps, name)) {
      r.row = row;
      r.verdict = check::Verdict::not_supported;
      r.evidence = *why;
    } else if (fills && exhaustion && !exhaustion->reports_full) {
      r.row = row;
      r.verdict = check::Verdict::not_run;
      r.evidence = "measures capacity by filling the heap, which needs a heap that answers NULL when full "
                   "(see exhaustion)";
    } else if (row == Row::sanitizer) {
      r = run_sanitizer(o, ch, name, dir);
    } else {
      r = run_row_process(o, name, heap, row, dir);
    }
    if (row == Row::exhaustion) exhaustion = r;
    v.rows.push_back(std::move(r));
  }
  return v;
}

// The header of the results files: the device and the battery's settings.
nlohmann::json check_context(const DeviceInfo& device, const CheckOptions& o) {
  nlohmann::json context = device_context(device);
  context["threads"] = o.threads;
  context["soak_s"] = o.soak_s;
  context["kernel_budget_s"] = o.kernel_budget_s;
  return context;
}

// Every allocator on every heap, each printed as it is judged; `dir`, where
// the rows' processes write, removed however it ends. Nothing after an error,
// which is printed.
std::optional<std::vector<ApiVerdict>> check_every_api(const CheckOptions& o, const CheckHooks& ch,
                                                       const fs::path& dir) {
  std::vector<ApiVerdict> verdicts;
  try {
    for (std::uint64_t heap : o.heaps) {
      for (const std::string& name : o.apis) {
        ApiVerdict v = check_api(o, ch, name, heap, dir);
        print_api(v);
        verdicts.push_back(std::move(v));
      }
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "heapbench check: {}\n", e.what());
    std::error_code ec;
    fs::remove_all(dir, ec);
    return std::nullopt;
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return verdicts;
}

// Prints the run's time and whether a row failed, then writes the files
// asked for. The exit status: a file's error first, then whether a row failed.
int report_verdicts(const std::vector<ApiVerdict>& verdicts, const nlohmann::json& context,
                    std::chrono::steady_clock::time_point t0, const SubcommandFile& json_file,
                    const SubcommandFile& markdown_file) {
  bool failed = false;
  for (const ApiVerdict& v : verdicts) failed |= v.failed();
  fmt::print("took {:.1f} s: {}\n", since(t0), failed ? "some row FAILED" : "no row failed");
  if (const int code = json_file.write(verdicts_json(verdicts, context).dump(2) + '\n'); code != kExitOk) return code;
  if (const int code = markdown_file.write(format_markdown(verdicts, context)); code != kExitOk) return code;
  return failed ? kExitCheckFailed : kExitOk;
}

// The battery `o` asks for, on the allocators `ch` reaches.
int check_allocators(const CheckOptions& o, const CheckHooks& ch, const DeviceHooks& hooks) {
  if (o.child_plan) {
    CheckOptions row;
    try {
      std::ifstream in(*o.child_plan);
      if (!in) throw std::invalid_argument("cannot be read");
      row = options_of_slice(o, row_slice_from_json(nlohmann::json::parse(in)));
    } catch (const std::exception& e) {
      fmt::print(stderr, "heapbench check: --child-plan={}: {}\n", *o.child_plan, e.what());
      return kExitUsage;
    }
    return run_child(row, ch);
  }
  // Refused before any device work, as advise --out is (the verdicts were
  // lost after the whole battery for an unwritable path).
  if (o.json && o.markdown && same_file(*o.json, *o.markdown)) {
    fmt::print(stderr, "heapbench check: --json={} and --markdown={}: the same file; give two\n", *o.json, *o.markdown);
    return kExitUsage;
  }
  SubcommandFile json_file("check", "--json"), markdown_file("check", "--markdown");
  if (!json_file.open(o.json) || !markdown_file.open(o.markdown)) return kExitUsage;

  const std::optional<DeviceInfo> probed = probe_for("check", hooks, o.device);
  if (!probed) return kExitNoDevice;
  const DeviceInfo& device = *probed;
  const nlohmann::json context = check_context(device, o);
  fmt::print("heapbench check on {} (device {}): {} row(s) x {} allocator(s), each row in a process of its own\n",
             device.name, device.index, o.rows.size(), o.apis.size());

  const fs::path dir = fs::temp_directory_path() / fmt::format("heapbench_check.{}", getpid());
  fs::create_directories(dir);
  const auto t0 = std::chrono::steady_clock::now();
  const std::optional<std::vector<ApiVerdict>> verdicts = check_every_api(o, ch, dir);
  if (!verdicts) return kExitNoResults;
  return report_verdicts(*verdicts, context, t0, json_file, markdown_file);
}

// `heapbench check`: its flags in its app of heapbench's tree (CheckCommandLine).
class CheckCommand final : public ParsedCommand {
 public:
  explicit CheckCommand(CLI::App& app) { flags_.build(app); }

  int run(const CLI::App& app, const DeviceHooks& hooks) override {
    if (!hooks.check) {
      fmt::print(stderr, "heapbench check: this binary has no battery to run\n");
      return kExitUsage;
    }
    const CheckHooks ch = hooks.check();
    std::vector<std::string> known;
    for (const CheckApi& a : ch.apis) known.push_back(a.name);
    const std::optional<CheckOptions> parsed = parse_subcommand("check", [&] { return flags_.options(app, known); });
    if (!parsed) return kExitUsage;
    if (parsed->help) {
      fmt::print("{}", parsed->help_text);
      return kExitOk;
    }
    return check_allocators(*parsed, ch, hooks);
  }

 private:
  CheckCommandLine flags_;
};

}  // namespace
}  // namespace heapbench

HEAPBENCH_SUBCOMMAND(check, "A conformance verdict for device allocators: PASS / FAIL / NOT SUPPORTED per property "
                            "(docs/check.md)", heapbench::CheckCommand)
