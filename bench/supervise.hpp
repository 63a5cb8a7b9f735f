#pragma once
// heapbench's one supervisor of child processes: every child it starts (the
// heap groups of --isolate and --devices, the rows of `heapbench check` and its
// compute-sanitizer runs) is started, watched and reaped here, and a child
// asks to die with its parent through die_with_parent().
#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace heapbench {

struct ChildSpec {
  // args[0] is the program: "/proc/self/exe" for this one, else looked up on PATH.
  std::vector<std::string> args;
  // "": the parent's standard output; else the child's standard output goes
  // to this file (created or truncated), with its standard error too when
  // `with_stderr` ("/dev/null": dropped).
  std::string output;
  bool with_stderr = false;
  // Called once the child has started, with its pid (signal forwarding).
  std::function<void(pid_t)> on_start;
  // Called every poll while the child runs; returning true has it killed
  // with SIGKILL (it ran past its time: stuck in a kernel, where no other
  // signal is acted on soon), once.
  std::function<bool()> tick;
};

struct ChildEnd {
  std::string failed;  // the child could not be started or waited for: why ("" when it ran)
  bool killed = false; // tick() had it killed
  int status = 0;      // waitpid's (valid when `failed` is "")
  double seconds = 0;  // from its start to its end
  // "was killed by signal N (name)" or "exited with status N"; "" for status 0.
  std::string how() const;
};

// Starts the child (naming this process in its environment, for
// die_with_parent) and waits for it, polling every 10 ms.
ChildEnd supervise(const ChildSpec& spec);

// In a child: die of `sig` when the parent dies, even if the parent is killed
// with SIGKILL, so no child keeps a GPU busy for nobody; and at once if the
// parent that started it is already gone.
void die_with_parent(int sig);

}  // namespace heapbench
