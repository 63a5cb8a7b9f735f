#pragma once
// heapbench's one supervisor of child processes: every child it starts (the
// heap groups of --isolate and --devices, the rows of `heapbench check` and its
// compute-sanitizer runs) is started, watched and reaped here, and a child
// asks to die with its parent through die_with_parent().
#include <sys/types.h>

#include <functional>
#include <optional>
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

// A child started behind a gate: it may prepare (start, read its plan, load
// the CUDA driver) while another runs, and waits, before it touches the
// device, for open_gate's line (gate_line() in the child reads it). Under
// isolation the next heap group's child is started so while this one runs.
class GatedChild {
 public:
  GatedChild() = default;
  GatedChild(GatedChild&& other) noexcept;
  GatedChild& operator=(GatedChild&& other) noexcept;
  GatedChild(const GatedChild&) = delete;
  GatedChild& operator=(const GatedChild&) = delete;
  ~GatedChild();  // a child never let through is told to leave and is reaped

  // Starts spec's child (its on_start is called by open()); `failed` says why not.
  static GatedChild start(const ChildSpec& spec);
  bool started() const { return pid_ > 0; }
  const std::string& failed() const { return failed_; }
  // Lets the child through with `line` (one line, no newline; "" for none) and
  // waits for it as supervise() does, with spec's on_start and tick.
  ChildEnd open(const ChildSpec& spec, const std::string& line);

 private:
  void let_go();  // a child not let through: its gate closed, the child reaped
  pid_t pid_ = 0;
  int gate_ = -1;  // the write end of the child's gate
  std::string failed_;
};

// In a child: the line its parent let it through with (GatedChild::open), or
// nullopt when the parent closed the gate without one (the child is not
// wanted: it should leave at once). Without a gate (not started by GatedChild),
// an empty line at once.
std::optional<std::string> gate_line();

// In a child: die of `sig` when the parent dies, even if the parent is killed
// with SIGKILL, so no child keeps a GPU busy for nobody; and at once if the
// parent that started it is already gone.
void die_with_parent(int sig);

}  // namespace heapbench
