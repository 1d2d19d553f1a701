// File: sim/task_graph.cc
// Event-driven execution of a TaskGraph: each finished task releases its successors and the
// next task of its resource; a task is started by the event that made it ready.
#include "sim/task_graph.h"

#include <string>
#include <utility>

#include "core/check.h"
#include "sim/engine.h"

namespace ndt {

ResourceId TaskGraph::AddResource(std::string name, int track) {
  resources_.push_back({std::move(name), track});
  queues_.emplace_back();
  return static_cast<ResourceId>(resources_.size() - 1);
}

TaskId TaskGraph::AddTask(ResourceId resource, double duration_s, int tag, std::string name) {
  NDT_CHECK(resource >= 0 && resource < static_cast<ResourceId>(resources_.size()),
            "unknown resource");
  NDT_CHECK(duration_s >= 0, "negative task duration");
  const TaskId id = static_cast<TaskId>(tasks_.size());
  tasks_.push_back({resource, duration_s, tag, std::move(name), {}});
  queues_[resource].push_back(id);
  return id;
}

void TaskGraph::AddDep(TaskId before, TaskId after) {
  NDT_CHECK(before >= 0 && before < static_cast<TaskId>(tasks_.size()), "unknown task");
  NDT_CHECK(after >= 0 && after < static_cast<TaskId>(tasks_.size()), "unknown task");
  tasks_[after].deps.push_back(before);
}

namespace {

class Runner {
 public:
  explicit Runner(const TaskGraph& g)
      : g_(g),
        pending_(g.tasks().size(), 0),
        succ_(g.tasks().size()),
        head_(g.resources().size(), 0),
        busy_(g.resources().size(), false) {
    for (TaskId t = 0; t < static_cast<TaskId>(g.tasks().size()); ++t) {
      pending_[t] = static_cast<int>(g.tasks()[t].deps.size());
      for (TaskId d : g.tasks()[t].deps) succ_[d].push_back(t);
    }
    tl_.spans.resize(g.tasks().size());
  }

  StatusOr<Timeline> Run() {
    for (ResourceId r = 0; r < static_cast<ResourceId>(head_.size()); ++r) TryStart(r);
    engine_.Run();
    if (done_ != g_.tasks().size()) {
      return Status::Internal("task graph deadlocked: " +
                              std::to_string(g_.tasks().size() - done_) + " tasks never started");
    }
    tl_.events = engine_.events_run();
    return std::move(tl_);
  }

 private:
  void TryStart(ResourceId r) {
    const auto& q = g_.queue(r);
    if (busy_[r] || head_[r] >= q.size()) return;
    const TaskId t = q[head_[r]];
    if (pending_[t] > 0) return;
    busy_[r] = true;
    const double start = engine_.now_s();
    tl_.spans[t] = {t, start, start + g_.tasks()[t].duration_s};
    engine_.ScheduleAfter(g_.tasks()[t].duration_s, [this, t, r] { Finish(t, r); });
  }

  void Finish(TaskId t, ResourceId r) {
    ++done_;
    busy_[r] = false;
    ++head_[r];
    if (engine_.now_s() > tl_.makespan_s) tl_.makespan_s = engine_.now_s();
    TryStart(r);
    for (TaskId s : succ_[t]) {
      if (--pending_[s] == 0) TryStart(g_.tasks()[s].resource);
    }
  }

  const TaskGraph& g_;
  EventEngine engine_;
  std::vector<int> pending_;
  std::vector<std::vector<TaskId>> succ_;
  std::vector<size_t> head_;
  std::vector<bool> busy_;
  size_t done_ = 0;
  Timeline tl_;
};

}  // namespace

StatusOr<Timeline> RunTaskGraph(const TaskGraph& graph) {
  Runner runner(graph);
  return runner.Run();
}

}  // namespace ndt
