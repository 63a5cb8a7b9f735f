#pragma once
// heapbench's exit statuses, the one list: the program (bench/app.cpp),
// `heapbench advise` (bench/subcommands/advise.cpp) and the parent of isolation, which
// reads its children's (src/orchestrate/orchestrate.cpp). tests/robust pins the values;
// README.md tells users.
namespace heapbench {

enum ExitCode : int {
  kExitOk = 0,            // results written (advise: advice given)
  kExitNoResults = 1,     // no case ran
  kExitNoAdvice = 1,      // advise: no heap up to the limit held the workload, or a device failure
  kExitCheckFailed = 1,   // check: some row failed
  kExitUsage = 2,         // bad command line, refused before any kernel runs
  kExitNoDevice = 3,      // no usable device
  // A child of isolation only: it stopped after a case that ended in a device
  // error (its context may be unusable), once that case's result was written;
  // the parent runs the rest of the child's heap group in a new process.
  kExitDeviceError = 4,
  // The results file could not be written (a full disk): it keeps its last
  // complete version. From a child, the parent stops the run.
  kExitCannotWrite = 5,
};

}  // namespace heapbench
