#include "orchestrate/supervise.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <utility>

extern char** environ;

namespace heapbench {
namespace {

constexpr const char* kParentPidVar = "HEAPBENCH_PARENT_PID";
constexpr const char* kGateVar = "HEAPBENCH_GATE_FD";  // a GatedChild's gate, in the child

// How often a running child is looked at: the lag between a child's exit and
// the next one's start (11 of them in the default sweep), and of the ticks.
constexpr useconds_t kPollMicros = 10 * 1000;

// This process's environment, naming it as the child's parent.
std::vector<std::string> child_environment() {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, kParentPidVar, std::strlen(kParentPidVar)) != 0) env.emplace_back(*e);
  }
  env.push_back(fmt::format("{}={}", kParentPidVar, getpid()));
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

std::string ChildEnd::how() const {
  if (WIFSIGNALED(status)) return fmt::format("was killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) return fmt::format("exited with status {}", WEXITSTATUS(status));
  return {};
}

namespace {

// Starts spec's child; with gate >= 0 that descriptor is the child's gate
// (its number in HEAPBENCH_GATE_FD). 0 and `failed` set when it cannot start.
pid_t spawn(const ChildSpec& spec, int gate, std::string& failed) {
  std::vector<std::string> args = spec.args, env = child_environment();
  if (gate >= 0) env.push_back(fmt::format("{}={}", kGateVar, gate));
  const std::vector<char*> argv = pointers(args), envp = pointers(env);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!spec.output.empty()) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, spec.output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (spec.with_stderr) posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  }
  // A descriptor dup2'ed onto itself loses FD_CLOEXEC in the child only (glibc 2.29 on).
  if (gate >= 0) posix_spawn_file_actions_adddup2(&actions, gate, gate);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    failed = fmt::format("could not be started: {}", std::strerror(rc));
    return 0;
  }
  return pid;
}

// Writes the gate's line. A child that died before its gate opened shows as
// such when it is waited for; the SIGPIPE its closed gate raises is taken
// here, in this thread, not by the process's handler (which would take it
// for a closed standard output).
void write_gate(int gate, const std::string& text) {
  sigset_t pipe_only, before;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &before);
  const ssize_t wrote = write(gate, text.data(), text.size());
  if (wrote < 0 && errno == EPIPE) {
    const timespec none{0, 0};
    while (sigtimedwait(&pipe_only, nullptr, &none) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
}

// Waits for a started child as supervise() does.
ChildEnd wait_for(const ChildSpec& spec, pid_t pid, std::chrono::steady_clock::time_point t0) {
  ChildEnd end;
  if (spec.on_start) spec.on_start(pid);
  while (true) {
    const pid_t r = waitpid(pid, &end.status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) {
      end.failed = fmt::format("could not be waited for: {}", std::strerror(errno));
      break;
    }
    if (r == 0) {
      if (!end.killed && spec.tick && spec.tick()) {
        end.killed = true;
        kill(pid, SIGKILL);
      }
      usleep(kPollMicros);
    }
  }
  end.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return end;
}

}  // namespace

ChildEnd supervise(const ChildSpec& spec) {
  const auto t0 = std::chrono::steady_clock::now();
  ChildEnd end;
  const pid_t pid = spawn(spec, -1, end.failed);
  return pid == 0 ? end : wait_for(spec, pid, t0);
}

GatedChild GatedChild::start(const ChildSpec& spec) {
  GatedChild child;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    child.failed_ = fmt::format("could not be started: no pipe for its gate: {}", std::strerror(errno));
    return child;
  }
  child.pid_ = spawn(spec, fds[0], child.failed_);
  close(fds[0]);
  if (child.pid_ == 0) {
    close(fds[1]);
  } else {
    child.gate_ = fds[1];
  }
  return child;
}

ChildEnd GatedChild::open(const ChildSpec& spec, const std::string& line) {
  ChildEnd end;
  if (pid_ <= 0) {
    end.failed = failed_.empty() ? "could not be started" : failed_;
    return end;
  }
  write_gate(gate_, line + "\n");
  close(gate_);
  gate_ = -1;
  const pid_t pid = pid_;
  pid_ = 0;
  return wait_for(spec, pid, std::chrono::steady_clock::now());
}

GatedChild::GatedChild(GatedChild&& other) noexcept { *this = std::move(other); }

GatedChild& GatedChild::operator=(GatedChild&& other) noexcept {
  if (this != &other) {
    let_go();
    pid_ = std::exchange(other.pid_, 0);
    gate_ = std::exchange(other.gate_, -1);
    failed_ = std::move(other.failed_);
  }
  return *this;
}

GatedChild::~GatedChild() { let_go(); }

void GatedChild::let_go() {
  if (gate_ >= 0) close(gate_);  // end of file at the gate: the child leaves without touching the device
  gate_ = -1;
  if (pid_ > 0) {
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = 0;
}

std::optional<std::string> gate_line() {
  const char* text = std::getenv(kGateVar);
  if (text == nullptr) return std::string();
  const int fd = std::atoi(text);
  unsetenv(kGateVar);  // not for this process's own children
  std::string line;
  char c = 0;
  bool ended = false;
  while (true) {
    const ssize_t r = read(fd, &c, 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    if (c == '\n') {
      ended = true;
      break;
    }
    line += c;
  }
  close(fd);
  if (!ended) return std::nullopt;
  return line;
}

void die_with_parent(int sig) {
  // The parent's thread that started this child waits for it, so this fires
  // exactly when the parent (or the tool it runs this child under) dies.
  prctl(PR_SET_PDEATHSIG, sig);
  // The parent may have died before the line above: then it is gone.
  const char* parent = std::getenv(kParentPidVar);
  if (parent != nullptr && kill(static_cast<pid_t>(std::atoll(parent)), 0) != 0 && errno == ESRCH) std::raise(sig);
}

}  // namespace heapbench
