// File: sim/task_graph.h
// A task-graph executor on the EventEngine: resources (a GPU's compute stream, a comm stream) run
// their tasks one at a time in the order they were added (as CUDA streams do); a task starts
// when its resource is free, the tasks before it on that resource are done, and all of its
// dependencies are done. A task's duration (seconds) is its length when it runs alone; a task may
// slow another resource while it runs (SetSlowdown: a communication kernel that takes SMs and
// memory bandwidth from the compute kernels beside it), so a task on a slowed resource progresses
// at 1 - (sum of the shares of the slowing tasks running now) of its speed and ends later. The run
// records a timeline span per task. Knows nothing of what a task means; `tag` is an opaque
// category the caller uses for breakdowns.
#ifndef NDTWIN_SIM_TASK_GRAPH_H_
#define NDTWIN_SIM_TASK_GRAPH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace ndt {

using ResourceId = int32_t;
using TaskId = int32_t;

struct Resource {
  std::string name;  // "compute", "tp", "dp", "p2p"
  int track = 0;     // the group it belongs to in a timeline (e.g. a rank)
};

struct Task {
  ResourceId resource = 0;
  double duration_s = 0;
  int tag = 0;       // caller's category
  std::string name;  // shown in traces
  std::vector<TaskId> deps;
  // While this task runs, `slows` (a resource, -1 for none) progresses `slow_share` slower.
  ResourceId slows = -1;
  double slow_share = 0;
};

class TaskGraph {
 public:
  ResourceId AddResource(std::string name, int track);
  // Appends a task to `resource`'s queue. REQUIRES: duration_s >= 0, resource exists.
  TaskId AddTask(ResourceId resource, double duration_s, int tag, std::string name);
  // `after` waits for `before`. REQUIRES: both exist.
  void AddDep(TaskId before, TaskId after);
  // While `task` runs, tasks on `victim` progress at (1 - share) of their speed; the shares of
  // tasks running at once add up, and the rate is floored at kMinSlowedRate. REQUIRES: both exist,
  // victim is not the task's own resource, 0 <= share < 1.
  void SetSlowdown(TaskId task, ResourceId victim, double share);

  const std::vector<Resource>& resources() const { return resources_; }
  const std::vector<Task>& tasks() const { return tasks_; }
  // Tasks of one resource in queue order.
  const std::vector<TaskId>& queue(ResourceId r) const { return queues_[r]; }

 private:
  std::vector<Resource> resources_;
  std::vector<Task> tasks_;
  std::vector<std::vector<TaskId>> queues_;
};

// The slowest a slowed resource runs (shares adding past 1 - this are clipped): a kernel
// always keeps some SMs and bandwidth, and the floor keeps every end time finite.
inline constexpr double kMinSlowedRate = 0.05;

struct Span {
  TaskId task = 0;
  double start_s = 0;
  double end_s = 0;
};

struct Timeline {
  double makespan_s = 0;
  std::vector<Span> spans;  // indexed by TaskId
  int64_t events = 0;
};

// Runs the graph from time 0. Fails with kInternal if some task can never start (a cycle, or a
// dependency on a task queued later on the same resource).
StatusOr<Timeline> RunTaskGraph(const TaskGraph& graph);

}  // namespace ndt

#endif  // NDTWIN_SIM_TASK_GRAPH_H_
