// heapbench's program: Google Benchmark's command line plus heapbench's own
// flags (--sizes, --threads, --heaps, ...; see --help), over the device that
// DeviceHooks reach. The steps: plan (orchestrate/run_plan.cpp: parse, plan
// the cases, check the filter and the devices), register the cases with Google
// Benchmark (measure/case_loop.cpp), then run them in this process
// (orchestrate/run_in_process.cpp) or in children, one per heap group and
// device (orchestrate/run_isolated.cpp). Exit statuses: orchestrate/exit_codes.hpp.
#include "app.hpp"

#include <CLI/CLI.hpp>
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>
#include <iostream>
#include <streambuf>
#include <optional>
#include <sstream>
#include <string_view>
#include <system_error>

#include "measure/case_loop.hpp"
#include "orchestrate/exit_codes.hpp"
#include "inputs.hpp"
#include "plan/benchmark_flags.hpp"  // count_matching
#include "plan/help_formatter.hpp"
#include "cases/catalog.hpp"
#include "plan/suggest.hpp"
#include "orchestrate/orchestrate.hpp"
#include "orchestrate/merge.hpp"  // clean_leftovers
#include "orchestrate/run_plan.hpp"
#include "orchestrate/runners.hpp"
#include "subcommand_list.hpp"
#include "orchestrate/supervise.hpp"

namespace heapbench {

CLI::Option* ParsedCommand::add_help(CLI::App& app, const char* text) { return app.add_flag("-h,--help", help_, text); }

bool ParsedCommand::printed_help(const CLI::App& app) const {
  if (help_) fmt::print("{}", help_of(app));
  return help_;
}

namespace {

// --benchmark_list_tests: on stderr (stdout is the list), the APIs the sweep
// names that this build's toolkit could not build, whose cases are therefore
// not listed: the default sweep has 440 cases where every API is built, 424
// without <nvfunctional>.
void note_apis_left_out(const Options& o, std::size_t listed) {
  // A part of the sweep that takes every API this build has (no --apis): the
  // APIs it lacks are left out of it. (--apis naming one is refused, saying why.)
  const bool every_api = std::any_of(o.sweeps.begin(), o.sweeps.end(), [](const Sweep& s) {
    const std::vector<std::string_view>& built = built_api_names();
    return s.apis.size() == built.size() && std::equal(s.apis.begin(), s.apis.end(), built.begin());
  });
  std::vector<std::string> left_out;
  for (const ApiTraits& t : api_traits_list()) {
    if (every_api && !t.built) left_out.emplace_back(t.name);
  }
  if (left_out.empty()) return;
  std::string why;
  for (const std::string& name : left_out) why += fmt::format("; {}: {}", name, not_built_reason(name));
  fmt::print(stderr, "heapbench: {} case(s) listed; the cases of {} are not, as this build does not have {} (--help "
             "says so too){}\n", listed, fmt::join(left_out, ", "), left_out.size() == 1 ? "it" : "them", why);
}

// Google Benchmark's flags (and --benchmark_out, the results file's scratch
// name); false, after saying why, for one this version does not take.
bool initialize_benchmark(const Options& o, ResultsFile* out) {
  // Google Benchmark keeps argv[0] (its executable_name) for the whole run: the
  // strings live as long as the process.
  static std::vector<std::string> bargs;
  bargs = o.benchmark_args;
  if (out) bargs.push_back("--benchmark_out=" + out->partial_path());
  static std::vector<char*> bargv;
  bargv.clear();
  for (auto& a : bargs) bargv.push_back(a.data());
  bargv.push_back(nullptr);
  int bargc = static_cast<int>(bargv.size()) - 1;
  benchmark::Initialize(&bargc, bargv.data());
  // options.cpp passes on only the flags Google Benchmark has; should this
  // version lack one, say so in heapbench's words, not in its own.
  if (bargc > 1) {
    fmt::print(stderr, "heapbench: {}: Google Benchmark did not take it (see --help)\n", bargv[1]);
    return false;
  }
  return true;
}

// The energy meter of a run in this process. A child of isolation takes the
// resolution its parent measured (resolution_for_children), not sampling again.
void open_energy_meter(const DeviceHooks& hooks, const Devices& d, RunConfig& cfg) {
  energy::Opened opened =
      hooks.energy ? hooks.energy(d.last) : energy::Opened{nullptr, "this program reads no energy counter"};
  const auto known = opened.reader ? energy::inherited_resolution(opened.reader->device()) : std::nullopt;
  cfg.energy->open(std::move(opened), energy::steady_clock(), 2.0, known);
}

// Under isolation on one device: the energy counter's resolution is the
// device's, measured once (about 0.6 s on an H200) for every child, which
// gets it at its gate (orchestrate.hpp) while the first children start.
std::function<std::string()> resolution_for_children(const DeviceHooks& hooks, const Devices& d) {
  if (d.indices.size() != 1 || !hooks.energy) return {};
  return [&hooks, device = d.last] {
    energy::Meter once;
    once.open(hooks.energy(device), energy::steady_clock());
    return once.reading() ? energy::format_resolution(once.device(), once.resolution()) : std::string();
  };
}

// In a child of isolation: waits at its gate (the parent may have started it
// while another child ran) for the resolution its parent measured; false when
// the parent let it go without running.
bool pass_gate() {
  const std::optional<std::string> line = gate_line();
  if (!line) return false;
  if (!line->empty()) setenv(energy::kResolutionVar, line->c_str(), 1);
  return true;
}

// Everything after the results file is open (`out`: nullptr without one).
int register_and_run(const Plan& plan, const DeviceHooks& hooks, ResultsFile* out, const Stopwatch& clock) {
  const Options& o = plan.options;
  std::unique_ptr<Backend> backend = hooks.make_backend(o.device);
  RunConfig cfg{backend.get(), o.kernel_budget_s, o.profile ? o.profile_iterations : 0, nullptr, o.rule, nullptr};
  if (o.child() && out) cfg.stop = std::make_shared<DeviceErrorStop>();
  cfg.energy = std::make_shared<energy::Meter>("the cases ran in children of this process");
  std::vector<std::string> names;
  for (const auto& c : plan.cases) names.push_back(benchmark_name(c, cfg));

  if (!initialize_benchmark(o, out)) return kExitUsage;
  const std::string filter = benchmark::GetBenchmarkFilter();
  if (const int code = check_filter(names, filter); code != kExitOk) return code;

  register_cases(plan.cases, cfg);
  if (o.list_tests) {
    benchmark::RunSpecifiedBenchmarks();
    if (!o.child()) note_apis_left_out(o, count_matching(names, filter));
    return kExitOk;
  }

  const auto devices = check_devices(plan, hooks.probe);
  if (const int* code = std::get_if<int>(&devices)) return *code;
  const Devices& d = std::get<Devices>(devices);
  const PlannedRun run{plan, names, filter, clock};
  if (plan.isolated) return run_isolated(run, d.indices, *out, resolution_for_children(hooks, d));
  if (o.child() && !pass_gate()) return kExitOk;
  open_energy_meter(hooks, d, cfg);
  return run_in_process(run, d.last, cfg, out);
}

}  // namespace

// The subcommands, in the order of their CMake lines (heapbench_subcommand):
// each file of bench/subcommands/ defines one (subcommand.hpp).
const std::vector<const Subcommand*>& subcommands() {
  static const std::vector<const Subcommand*> list = {HEAPBENCH_SUBCOMMANDS};
  return list;
}

namespace {

// heapbench --help lists each subcommand with its one-line summary; the
// subcommand's own --help opens with its description.
class SummaryFormatter final : public RunHelpFormatter {
 public:
  std::string make_subcommand(const CLI::App* sub) const override {
    for (const Subcommand* s : subcommands()) {
      if (sub->get_name() == s->name) {
        std::stringstream out;
        CLI::detail::format_help(out, sub->get_name(), s->summary, column_width_);
        return out.str();
      }
    }
    return RunHelpFormatter::make_subcommand(sub);
  }
};

// heapbench's one CLI::App: the run's flags at its root (RunCommandLine), each
// subcommand's below it, built by its own ParsedCommand; each keeps what the
// parse fills. A subcommand comes first on the line: only the one the first
// word names takes part in the parse (the others, disabled, are words the run
// refuses), so `heapbench --sizes=64 advise` is refused as before.
class CommandTree {
 public:
  explicit CommandTree(std::string_view first) {
    run_.build(root_);
    root_.formatter(std::make_shared<SummaryFormatter>());
    root_.require_subcommand(0, 1);  // `advise check`: "check" is a stray word of advise's
    for (const Subcommand* s : subcommands()) {
      CLI::App* app = root_.add_subcommand(s->name);
      commands_.emplace_back(app, s->build(*app));
      app->disabled(first != s->name);
      if (first == s->name) named_ = app;
    }
  }
  CommandTree(const CommandTree&) = delete;
  CommandTree& operator=(const CommandTree&) = delete;

  CLI::App& root() { return root_; }
  // After the parse: every subcommand enabled again, as --help's usage line
  // names them ("[SUBCOMMAND]").
  void list_every_subcommand() {
    for (const auto& command : commands_) command.first->disabled(false);
  }
  const RunCommandLine& run() const { return run_; }
  // The subcommand the first word names, or nullptr.
  const CLI::App* named() const { return named_; }
  // After the parse: the subcommand the tree got and what runs it, or nullptr (the run).
  std::pair<const CLI::App*, ParsedCommand*> got() const {
    for (const auto& [app, command] : commands_) {
      if (root_.got_subcommand(app)) return {app, command.get()};
    }
    return {nullptr, nullptr};
  }

 private:
  CLI::App root_;
  RunCommandLine run_{file_readers()};
  std::vector<std::pair<CLI::App*, std::unique_ptr<ParsedCommand>>> commands_;
  const CLI::App* named_ = nullptr;
};

// std::cout's writes (Google Benchmark's reporters) passed on to its own
// buffer, with the reason of the first that fails kept: by the time the run
// ends and the failure is seen, errno says something else.
class ReasonKeepingBuf final : public std::streambuf {
 public:
  explicit ReasonKeepingBuf(std::streambuf* to) : to_(to) {}
  int first_errno() const { return first_errno_; }

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    errno = 0;
    const int_type r = to_->sputc(traits_type::to_char_type(c));
    if (traits_type::eq_int_type(r, traits_type::eof())) keep();
    return r;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    errno = 0;
    const std::streamsize r = to_->sputn(s, n);
    if (r != n) keep();
    return r;
  }
  int sync() override {
    errno = 0;
    const int r = to_->pubsync();
    if (r != 0) keep();
    return r;
  }

 private:
  void keep() {
    if (first_errno_ == 0) first_errno_ = errno;
  }
  std::streambuf* to_;
  int first_errno_ = 0;
};

// Puts a ReasonKeepingBuf in front of std::cout's buffer for the run, and
// takes it away again before the process flushes std::cout at exit.
class KeepOutputReason {
 public:
  KeepOutputReason() : kept_(std::cout.rdbuf()), buf_(kept_) { std::cout.rdbuf(&buf_); }
  ~KeepOutputReason() { std::cout.rdbuf(kept_); }
  KeepOutputReason(const KeepOutputReason&) = delete;
  KeepOutputReason& operator=(const KeepOutputReason&) = delete;
  int first_errno() const { return buf_.first_errno(); }

 private:
  std::streambuf* kept_;
  ReasonKeepingBuf buf_;
};

// After an output error has been said: standard output pointed at /dev/null
// and its error cleared, so no later flush (an enclosing run_heapbench's, as
// `heapbench replay` runs heapbench within itself; the exit's) says it again.
void silence_stdout() {
  std::fflush(stdout);
  if (const int fd = ::open("/dev/null", O_WRONLY); fd >= 0) {
    ::dup2(fd, STDOUT_FILENO);
    ::close(fd);
  }
  std::clearerr(stdout);
  std::cout.clear();
}

// What standard output was given, flushed: on an error (a full disk, a closed
// pipe, a file size limit) one line naming it, and kExitCannotWrite in the
// place of success. Without this, a short output lost at exit (--version,
// --benchmark_list_tests into /dev/full) ended with exit 0.
int finish_output(int code, const std::string& who, const KeepOutputReason& reason) {
  // std::cout writes through stdout (sync_with_stdio): its flush is stdout's, and errno says why it failed.
  errno = 0;
  std::cout.flush();
  int err = errno;
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout.good();
  if (!failed) return code;
  if (err == 0) err = errno;
  if (err == 0) err = reason.first_errno() != 0 ? reason.first_errno() : output_closed() ? EPIPE : 0;
  fmt::print(stderr, "{}: cannot write standard output: {}\n", who, err != 0 ? std::strerror(err) : "a write failed");
  silence_stdout();
  return code == kExitOk ? kExitCannotWrite : code;
}

int run_program(int argc, char** argv, const DeviceHooks& hooks);

}  // namespace

int run_heapbench(int argc, char** argv, const DeviceHooks& hooks) {
  // A closed pipe and a file size limit fail a write (EPIPE, EFBIG) as a full
  // disk does, instead of ending the process before it can say so.
  watch_output();
  const KeepOutputReason reason;
  std::string who = "heapbench";
  for (const Subcommand* s : subcommands()) {
    if (argc > 1 && std::string_view(argv[1]) == s->name) who += std::string(" ") + s->name;
  }
  int code = kExitNoResults;
  try {
    code = run_program(argc, argv, hooks);
  } catch (const std::system_error& e) {
    // fmt::print into a standard output that cannot be written.
    if (std::ferror(stdout)) {
      fmt::print(stderr, "{}: cannot write standard output: {}\n", who, e.code().message());
      silence_stdout();
      return kExitCannotWrite;
    }
    fmt::print(stderr, "{}: {}\n", who, e.what());
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: {}\n", who, e.what());
  }
  return finish_output(code, who, reason);
}

namespace {

// The sweep's lines for stderr (a trace's unmatched releases): the parent's, said once.
void say_notes(const Options& o) {
  if (o.child()) return;
  for (const Sweep& s : o.sweeps) {
    if (!s.note.empty()) fmt::print(stderr, "heapbench: {}\n", s.note);
  }
}

// The tree's one parse of the line: true, or false after saying why in the
// words of the command the line named.
bool parse_line(CommandTree& tree, int argc, char** argv) {
  if (argc > 1 && argv[1][0] != '-' && tree.named() == nullptr) {
    std::vector<std::string> names;
    for (const Subcommand* s : subcommands()) names.emplace_back(s->name);
    fmt::print(stderr, "heapbench: '{}' is not a subcommand{} (heapbench --help lists them)\n", argv[1],
               did_you_mean(argv[1], names));
    return false;
  }
  try {
    parse_argv(tree.root(), argc, argv);
  } catch (const UsageError& e) {
    if (const CLI::App* sub = tree.named()) {
      fmt::print(stderr, "heapbench {}: {} (see heapbench {} --help)\n", sub->get_name(), e.what(), sub->get_name());
    } else {
      fmt::print(stderr, "heapbench: {} (see --help)\n", e.what());
    }
    return false;
  }
  return true;
}

int run_program(int argc, char** argv, const DeviceHooks& hooks) {
  CommandTree tree(argc > 1 ? argv[1] : "");
  if (!parse_line(tree, argc, argv)) return kExitUsage;
  if (const auto [app, command] = tree.got(); command != nullptr) return command->run(*app, hooks);
  tree.list_every_subcommand();

  const Stopwatch clock;  // the run's wall time: what the measurement summary divides by
  auto planned = plan_run(tree.root(), tree.run(), argc, argv);
  if (const int* code = std::get_if<int>(&planned)) return *code;
  const Plan& plan = std::get<Plan>(planned);
  const Options& o = plan.options;
  if (o.child()) die_with_parent(SIGTERM);
  say_notes(o);

  // Google Benchmark writes its own --benchmark_out into a scratch file
  // (results_file.hpp); the results are SnapshotReporter's or the merger's.
  std::optional<ResultsFile> out;
  if (o.out && !o.list_tests) {
    try {
      out.emplace(*o.out);
    } catch (const std::exception& e) {
      fmt::print(stderr, "heapbench: {}\n", e.what());
      return kExitUsage;
    }
    out->remove_scratch_on_signal();
    if (!o.child()) {
      try {
        if (const std::string said = clean_leftovers(*out); !said.empty()) fmt::print(stderr, "heapbench: {}\n", said);
      } catch (const std::exception& e) {
        fmt::print(stderr, "heapbench: {}\n", e.what());
        return kExitCannotWrite;
      }
    }
  }
  const int code = register_and_run(plan, hooks, out ? &*out : nullptr, clock);
  if (out) out->discard();
  return code;
}

}  // namespace
}  // namespace heapbench
