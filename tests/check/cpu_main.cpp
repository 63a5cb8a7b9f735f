// `heapbench check` over the CPU: heapbench's own program (bench/app.cpp, so
// bench/subcommands/check.cpp's parent, its row processes and its verdicts are the real
// ones), with the battery's bodies run on CPU threads (cpu_grid.hpp) against
// the host allocators of host_allocators.hpp instead of kernels against device
// ones. tests/check/check_test.py runs it: the correct allocator must pass
// every row, each broken one must fail exactly the rows it breaks.
//   HEAPBENCH_CHECK_CPU_WORKERS  threads of a launch (default 4)
#include <cstdlib>
#include <string>

#include "app.hpp"
#include "cpu_grid.hpp"
#include "host_allocators.hpp"

namespace heapbench {
namespace {

using namespace check;

struct Entry {
  const char* name;
  cpu::Bug bug;
};
constexpr Entry kAllocators[] = {{"reference", cpu::Bug::none},
                                 {"double_alloc", cpu::Bug::double_alloc},
                                 {"never_null", cpu::Bug::never_null},
                                 {"hang_when_full", cpu::Bug::hang_when_full},
                                 {"leak", cpu::Bug::leak}};

RowResult run_row_on_cpu(const CheckApi& api, const RowPlan& plan) {
  cpu::Bug bug = cpu::Bug::none;
  for (const Entry& e : kAllocators) {
    if (api.name == e.name) bug = e.bug;
  }
  const char* w = std::getenv("HEAPBENCH_CHECK_CPU_WORKERS");
  cpu::Grid grid(plan.budget_s + plan.soak_s + 1, w ? static_cast<unsigned>(std::atoi(w)) : 4u, plan.on_hang);
  // Never deleted when a launch hangs: its detached threads still use it until
  // the process exits, which it then does at once.
  auto* heap = new cpu::Heap(plan.heap_bytes, bug);
  RowResult r = run_row(grid, cpu::Handle{heap}, [heap] { heap->reset(); }, plan);
  delete heap;
  return r;
}

CheckHooks cpu_hooks() {
  CheckHooks h;
  for (const Entry& e : kAllocators) {
    CheckApi a;
    a.name = e.name;
    a.caps.frees = true;
    a.caps.takes_align = false;
    a.caps.min_alignment = 16;
    a.free_null = true;
    a.device_heap = false;
    h.apis.push_back(a);
  }
  h.run_row = run_row_on_cpu;
  // check_test.py's stand-in sanitizer (a script that runs the battery it is handed) takes the
  // sanitizer row's path through the program here: the row process it starts, and that row's plan.
  if (std::getenv("HEAPBENCH_CHECK_TEST_SANITIZER") == nullptr) {
    h.no_sanitizer = "the CPU stand-in runs no kernels: compute-sanitizer has nothing to check";
  }
  return h;
}

DeviceInfo probe(int index) {
  if (index != 0) throw NoDeviceError("--device=" + std::to_string(index) + ": the CPU stand-in is device 0 only");
  DeviceInfo d;
  d.name = "CPU stand-in (heapbench check tests, no GPU)";
  d.total_memory = 1ull << 30;
  return d;
}

}  // namespace
}  // namespace heapbench

int main(int argc, char** argv) {
  heapbench::DeviceHooks hooks;
  hooks.probe = heapbench::probe;
  hooks.make_backend = [](int) -> std::unique_ptr<heapbench::Backend> {
    throw heapbench::NoDeviceError("the CPU stand-in runs `heapbench check` only");
  };
  hooks.check = heapbench::cpu_hooks;
  return heapbench::run_heapbench(argc, argv, hooks);
}
