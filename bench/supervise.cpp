#include "supervise.hpp"

#include <fcntl.h>
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

extern char** environ;

namespace heapbench {
namespace {

constexpr const char* kParentPidVar = "HEAPBENCH_PARENT_PID";

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

ChildEnd supervise(const ChildSpec& spec) {
  std::vector<std::string> args = spec.args, env = child_environment();
  const std::vector<char*> argv = pointers(args), envp = pointers(env);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!spec.output.empty()) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, spec.output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (spec.with_stderr) posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  }
  ChildEnd end;
  pid_t pid = 0;
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    end.failed = fmt::format("could not be started: {}", std::strerror(rc));
    return end;
  }
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

void die_with_parent(int sig) {
  // The parent's thread that started this child waits for it, so this fires
  // exactly when the parent (or the tool it runs this child under) dies.
  prctl(PR_SET_PDEATHSIG, sig);
  // The parent may have died before the line above: then it is gone.
  const char* parent = std::getenv(kParentPidVar);
  if (parent != nullptr && kill(static_cast<pid_t>(std::atoll(parent)), 0) != 0 && errno == ESRCH) std::raise(sig);
}

}  // namespace heapbench
