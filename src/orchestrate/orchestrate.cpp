#include "orchestrate/orchestrate.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <numeric>
#include <set>
#include <stdexcept>
#include <thread>
#include <tuple>

#include "orchestrate/exit_codes.hpp"
#include "cases/axis_values.hpp"
#include "heapbench/case.hpp"
#include "orchestrate/child_plan.hpp"
#include "orchestrate/merge.hpp"
#include "report/results_file.hpp"
#include "report/snapshot_reporter.hpp"  // error_entry
#include "orchestrate/supervise.hpp"

namespace heapbench {
namespace {

// A SIGINT/SIGTERM/SIGHUP to the parent is passed on to the running children
// (one per device at most), which die of it leaving their finished cases in
// their files; the parent merges those, starts no further group and then dies
// of the same signal. Lock-free atomics only: the handler may touch nothing else.
constexpr int kMaxChildren = 256;
std::atomic<pid_t> g_running[kMaxChildren];
std::atomic<int> g_stop{0};
std::atomic<bool> g_abandon{false};  // the results cannot be written: stop everything
static_assert(std::atomic<pid_t>::is_always_lock_free && std::atomic<int>::is_always_lock_free);

extern "C" void forward_to_children(int sig) {
  g_stop.store(sig);
  for (auto& pid : g_running) {
    const pid_t p = pid.load();
    if (p > 0) kill(p, sig);
  }
}

void install_forwarding() {
  struct sigaction sa {};
  sa.sa_handler = forward_to_children;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

void stop_all_children() {
  g_abandon.store(true);
  for (auto& pid : g_running) {
    const pid_t p = pid.load();
    if (p > 0) kill(p, SIGTERM);
  }
}

constexpr const char* kStoppedAfterDeviceError = "stopped after a device error";
constexpr const char* kCouldNotWrite = "could not write its results file";
constexpr const char* kOutputClosed = "standard output was closed (SIGPIPE: its reader is gone)";
constexpr const char* kTimedOut = "was killed (SIGKILL): a case ran past --case-timeout";

// A child of this program (supervise.hpp) with `args`, its output dropped when `quiet`.
ChildSpec child_spec(const std::vector<std::string>& args, bool quiet) {
  ChildSpec spec;
  spec.args = args;
  spec.args[0] = "/proc/self/exe";
  if (quiet) spec.output = "/dev/null";
  return spec;
}

// Lets a started child through its gate with `line` and runs it to completion,
// its pid in `slot` of the signal forwarding while it runs, calling `tick` at
// every poll; returns "" if it exited with status 0, else how it ended. A tick
// that returns true has the child killed with SIGKILL (a case ran past its
// time), and then it ended kTimedOut.
std::string run_child(GatedChild& child, int slot, const std::function<bool()>& tick, const std::string& line) {
  ChildSpec spec;
  spec.on_start = [slot](pid_t pid) {
    g_running[slot].store(pid);
    if (const int sig = g_stop.load()) kill(pid, sig);  // a signal that came while it was being started
    if (g_abandon.load()) kill(pid, SIGTERM);
  };
  spec.tick = tick;
  const ChildEnd end = child.open(spec, line);
  g_running[slot].store(0);
  if (!end.failed.empty()) return end.failed;
  if (end.killed) return kTimedOut;
  const int status = end.status;
  if (WIFEXITED(status) && WEXITSTATUS(status) == kExitDeviceError) return kStoppedAfterDeviceError;
  if (WIFEXITED(status) && WEXITSTATUS(status) == kExitCannotWrite) return kCouldNotWrite;
  return end.how();
}

// Identifies one version of a file: the child replaces its file by a rename.
using FileVersion = std::tuple<ino_t, long, long, off_t>;
FileVersion version_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return {st.st_ino, st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_size};
}

}  // namespace

namespace {

// Positions in a HeapGroup's cases: those a child is still to run.
using Left = std::vector<std::size_t>;

// One run of run_children: the children of every device (one thread each,
// their groups in turn), the merged results they feed, and the manifest that
// names their files. Every member below mutex_ is shared by those threads.
class Children {
 public:
  Children(const ChildRun& run, const std::string& out_path, const ChildrenSettings& settings)
      : run_(run), out_path_(out_path), settings_(settings), work_(out_path + ".groups"),
        manifest_path_((work_ / kManifestName).string()),
        merger_(settings.tag_devices, error_entry) {
    std::filesystem::create_directories(work_);
    merger_.carry(settings.carried);
    manifest_.tag_devices = settings.tag_devices;
  }

  ChildrenOutcome run(const std::vector<HeapGroup>& groups) {
    // The children's gate line (the energy counter's resolution) is made while
    // the first children start; each waits for it at its gate.
    gate_line_ = settings_.gate_line ? std::async(std::launch::async, settings_.gate_line).share()
                                     : std::async(std::launch::deferred, [] { return std::string(); }).share();
    std::map<int, std::vector<const HeapGroup*>> by_device;
    for (const auto& g : groups) by_device[g.device].push_back(&g);
    if (by_device.size() > static_cast<std::size_t>(kMaxChildren)) {
      throw std::runtime_error(fmt::format("--devices: at most {} devices at once", kMaxChildren));
    }
    install_forwarding();
    std::vector<std::thread> threads;
    int slot = 0;
    for (const auto& [device, groups] : by_device) {
      // Each thread reads the gate line through its own copy of the shared future.
      threads.emplace_back([this, device = device, groups = groups, slot = slot++, line = gate_line_] {
        run_device(device, groups, slot, line);
      });
    }
    for (auto& t : threads) t.join();
    remove_run_files(work_.string());  // only what this run wrote: anything else there stays
    outcome_.entries = merger_.entries();
    outcome_.runs_merged = merger_.runs_merged();
    outcome_.signal = g_stop.load();
    outcome_.document = merger_.document();
    return outcome_;
  }

 private:
  static bool stopping() { return g_stop.load() != 0 || g_abandon.load(); }

  // One device's groups in turn. A child that stops after a device error (its
  // context may be unusable) is followed by a new one for the cases it did not reach.
  // The next group's first child is started while a group's first child runs:
  // its process start and the CUDA driver's (about 0.1 s each on an H200) are
  // then behind it; it waits at its gate before it touches the device.
  void run_device(int device, const std::vector<const HeapGroup*>& groups, int slot,
                  const std::shared_future<std::string>& gate_line) {
    GatedChild next;
    for (std::size_t k = 0; k < groups.size(); ++k) {
      if (stopping()) break;
      const HeapGroup& g = *groups[k];
      Left remaining = every_case(g);
      for (int attempt = 0; !remaining.empty(); ++attempt) {
        GatedChild child = attempt == 0 && next.started() ? std::move(next) : start(device, g, remaining, attempt);
        if (!child.started() && child.failed().empty()) return;  // its plan or the manifest could not be written
        if (attempt == 0 && k + 1 < groups.size() && !stopping()) {
          next = start(device, *groups[k + 1], every_case(*groups[k + 1]), 0);
        }
        const std::string file = child_path(device, g, attempt, ".json");
        const std::string death = run_child(child, slot, watcher(device, file), gate_line.get());
        remaining = after_child(device, g, file, death, remaining);
      }
    }
  }

  static Left every_case(const HeapGroup& g) {
    Left all(g.cases.size());
    std::iota(all.begin(), all.end(), std::size_t{0});
    return all;
  }

  // A child's results file (".json") or plan (".plan") in the run's work folder.
  std::string child_path(int device, const HeapGroup& g, int attempt, const char* ext) const {
    return (work_ / fmt::format("device{}_heap{}_{}{}", device, g.heap / kMiB, attempt, ext)).string();
  }

  // The child for the cases `left` of `g`, started behind its gate; neither
  // started nor failed when its plan or the manifest cannot be written (the
  // run then stops).
  GatedChild start(int device, const HeapGroup& g, const Left& left, int attempt) {
    const std::string file = child_path(device, g, attempt, ".json");
    const std::string plan = child_path(device, g, attempt, ".plan");
    if (!record_child(device, file)) return GatedChild();
    const std::optional<std::string> input = write_plan(device, g, left, plan);
    if (!input) return GatedChild();
    return GatedChild::start(child_spec(command(plan, file, *input), settings_.quiet_children));
  }

  // The child's whole command line: never its parent's flags (its run is in the plan).
  static std::vector<std::string> command(const std::string& plan, const std::string& file, const std::string& input) {
    std::vector<std::string> child = {"heapbench", "--child-plan=" + plan, "--benchmark_out=" + file};
    if (!input.empty()) child.push_back("--child-input=" + input);
    return child;
  }

  // The cases `left` of `g`, measured on `device` as the run measures, in a
  // plan file for the next child; returns the file its cases read ("": none),
  // or nothing when the plan cannot be written (the run then stops, as when
  // the manifest cannot).
  std::optional<std::string> write_plan(int device, const HeapGroup& g, const Left& left, const std::string& path) {
    ChildPlan plan;
    for (std::size_t i : left) plan.cases.push_back(g.cases[i]);
    plan.context_and_header = g.context_and_header;
    plan.name_width = settings_.name_width;
    plan.run = run_;
    plan.run.device = device;
    try {
      write_child_plan(path, plan);
    } catch (const ResultsWriteError& e) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (outcome_.write_error.empty()) outcome_.write_error = e.what();
      cannot_write_ = true;
      stop_all_children();
      return std::nullopt;
    }
    return child_input_of(plan);
  }

  // The planned records of `left`, for the error entries of cases a child did not finish.
  static std::vector<PlannedEntry> entries(const HeapGroup& g, const Left& left) {
    std::vector<PlannedEntry> out;
    for (std::size_t i : left) out.push_back({g.names[i], axis_values(g.cases[i])});
    return out;
  }

  // Names the child's file in the manifest before it starts; false if the
  // manifest cannot be written (the run then stops).
  bool record_child(int device, const std::string& file) {
    std::lock_guard<std::mutex> lock(mutex_);
    manifest_.children.emplace_back(device, file);
    try {
      manifest_.write(manifest_path_);
    } catch (const ResultsWriteError& e) {
      if (outcome_.write_error.empty()) outcome_.write_error = e.what();
      cannot_write_ = true;
      stop_all_children();
      return false;
    }
    return true;
  }

  // While a child runs: each new version of its file with more finished cases
  // is merged and published. Returns true (kill the child) once it has gone
  // --case-timeout seconds since it started or last finished a case.
  std::function<bool()> watcher(int device, const std::string& file) {
    using Clock = std::chrono::steady_clock;
    return [this, device, file, seen = FileVersion{}, shown = std::size_t{0}, since = Clock::now()]() mutable {
      const std::chrono::duration<double> quiet = Clock::now() - since;
      if (settings_.case_timeout_s > 0 && quiet.count() > settings_.case_timeout_s) return true;
      const FileVersion now = version_of(file);
      if (now == seen) return false;
      seen = now;
      std::lock_guard<std::mutex> lock(mutex_);
      try {
        const std::size_t n = merger_.peek(device, file);
        if (n == shown) return false;
        shown = n;
        since = Clock::now();
      } catch (const std::exception&) {
        return false;  // read again when the child next replaces it
      }
      publish();
      return false;
    };
  }

  // After a child was killed for running past --case-timeout, with the lock
  // held: the first case it had not finished is the one that ran past (a child
  // runs its cases in order); it becomes an error result, and the cases after
  // it are returned for a new child.
  Left after_timeout(int device, const HeapGroup& g, Left left) {
    if (left.empty()) {
      fmt::print(stderr, "heapbench: the child for the {} MiB heap on device {} finished its cases but did not exit "
                 "within --case-timeout ({:g} s); it was killed\n", g.heap / kMiB, device, settings_.case_timeout_s);
      return left;
    }
    ++outcome_.timeouts;
    const std::size_t hung = left.front();
    left.erase(left.begin());
    merger_.add_missing(device, entries(g, {hung}), fmt::format("was killed (SIGKILL) after this case ran {:g} s without finishing "
                                                    "(--case-timeout): a thread that never returns from the allocator "
                                                    "is one cause", settings_.case_timeout_s));
    fmt::print(stderr, "heapbench: {} ran past --case-timeout ({:g} s) and is an error result; {}\n", g.names[hung],
               settings_.case_timeout_s,
               left.empty() || stopping() ? std::string("its heap group is done")
                                          : fmt::format("a new process runs its heap group's {} remaining case(s)",
                                                        left.size()));
    if (stopping()) {
      if (!g_abandon.load()) {
        merger_.add_missing(device, entries(g, left), "was stopped before this case: the run was interrupted");
      }
      left.clear();
    }
    return left;
  }

  // After a child ended (`death`: how, "" for status 0): its finished cases
  // merged; returns the cases a new child is to run (none: the group is done).
  Left after_child(int device, const HeapGroup& g, const std::string& file, const std::string& death,
                   const Left& remaining) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::set<std::string> done;
    try {
      done = merger_.add_runs(device, file);
    } catch (const std::exception& e) {
      fmt::print(stderr, "heapbench: {}\n", e.what());
    }
    Left left;
    for (std::size_t i : remaining) {
      if (!done.count(g.names[i])) left.push_back(i);
    }
    if (death == kTimedOut) {
      left = after_timeout(device, g, std::move(left));
      publish();
      return left;
    }
    const bool resume = death == kStoppedAfterDeviceError && !left.empty() && left.size() < remaining.size() &&
                        !stopping();
    // Stopping after a device error in the group's last case is no death: nothing was left undone.
    const std::string how = death == kStoppedAfterDeviceError && left.empty() ? "" : death;
    if (death == kCouldNotWrite) child_could_not_write(device, g);
    if (resume) {
      fmt::print(stderr, "heapbench: the child for the {} MiB heap on device {} stopped after a device error; "
                 "a new process runs its {} remaining case(s)\n", g.heap / kMiB, device, left.size());
    } else {
      if (!how.empty() && !g_abandon.load()) {
        ++outcome_.deaths;
        fmt::print(stderr, "heapbench: the child for the {} MiB heap on device {} {}; its unfinished cases are "
                   "error results\n", g.heap / kMiB, device, how);
      }
      // A run stopped because it cannot write (or its output is closed)
      // keeps its finished cases only: no error entry for what it did not run.
      if (!g_abandon.load()) merger_.add_missing(device, entries(g, left), how);
      left.clear();
    }
    publish();
    return left;
  }

  // With the lock held. The child's message is above. Its cases are written if
  // the parent still can (its output was closed: a pipe whose reader is gone);
  // a full disk fails this write too, and stops the writes.
  void child_could_not_write(int device, const HeapGroup& g) {
    publish();
    if (outcome_.write_error.empty()) {
      outcome_.write_error = fmt::format("the child for the {} MiB heap on device {} could not write its "
                                         "results file or its output (its message is above)", g.heap / kMiB, device);
    }
    stop_all_children();
  }

  // With the lock held: the merged results changed; write them, unless no
  // case has finished yet (an earlier file is then left as it was).
  // A write that failed stops further writes; a closed standard output stops
  // the run but not the writes, so every finished case still reaches the file.
  void publish() {
    if (settings_.on_change) settings_.on_change(merger_);
    if (output_closed() && outcome_.write_error.empty()) {
      outcome_.write_error = kOutputClosed;
      stop_all_children();
    }
    if (merger_.runs_merged() == 0 || cannot_write_) return;
    try {
      merger_.write(out_path_);
      if (!manifest_.wrote_results) {
        manifest_.wrote_results = true;
        manifest_.write(manifest_path_);
      }
    } catch (const ResultsWriteError& e) {
      outcome_.write_error = e.what();
      cannot_write_ = true;
      stop_all_children();
    }
  }

  const ChildRun& run_;
  const std::string& out_path_;
  const ChildrenSettings& settings_;
  const std::filesystem::path work_;
  const std::string manifest_path_;
  std::mutex mutex_;
  ResultsMerger merger_;
  RunManifest manifest_;
  ChildrenOutcome outcome_;
  bool cannot_write_ = false;
  std::shared_future<std::string> gate_line_;
};

}  // namespace

ChildrenOutcome run_children(const ChildRun& run, const std::vector<HeapGroup>& groups, const std::string& out_path,
                             const ChildrenSettings& settings) {
  return Children(run, out_path, settings).run(groups);
}

}  // namespace heapbench
