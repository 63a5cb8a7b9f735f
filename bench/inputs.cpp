#include "inputs.hpp"

#include "replay/trace_reader.hpp"
#include "workloads/graph_input.hpp"

namespace heapbench {

InputReaders file_readers() {
  InputReaders r;
  r.trace = [](const std::string& path) {
    const trace::Trace t = trace::read_trace(path);
    const trace::ReplayPlan plan = trace::plan_replay(t, path, trace::PlanDetail::kShape);  // no memory per thread
    TraceFacts f;
    f.name = trace::trace_name_of_file(path);
    f.note = trace::unmatched_note(plan, path);
    f.content_hash = t.content_hash;
    f.max_size = plan.max_size;
    f.max_threads = plan.max_threads;
    f.heap_bytes = t.header.heap_bytes;
    f.device_bytes = trace::replay_device_bytes(plan);
    return f;
  };
  r.graph = [](const std::string& path) {
    const workloads::Csr g = workloads::read_matrix_market(path);
    return GraphFacts{workloads::graph_name_of_file(path), g.content_hash, g.vertices};
  };
  return r;
}

}  // namespace heapbench
