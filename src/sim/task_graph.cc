// File: sim/task_graph.cc
// Event-driven execution of a TaskGraph: each finished task releases its successors and the
// next task of its resource; a task is started by the event that made it ready.
#include "sim/task_graph.h"

#include <algorithm>
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
  tasks_.push_back({resource, duration_s, tag, std::move(name), {}, -1, 0.0});
  queues_[resource].push_back(id);
  return id;
}

void TaskGraph::AddDep(TaskId before, TaskId after) {
  NDT_CHECK(before >= 0 && before < static_cast<TaskId>(tasks_.size()), "unknown task");
  NDT_CHECK(after >= 0 && after < static_cast<TaskId>(tasks_.size()), "unknown task");
  tasks_[after].deps.push_back(before);
}

void TaskGraph::SetSlowdown(TaskId task, ResourceId victim, double share) {
  NDT_CHECK(task >= 0 && task < static_cast<TaskId>(tasks_.size()), "unknown task");
  NDT_CHECK(victim >= 0 && victim < static_cast<ResourceId>(resources_.size()), "unknown resource");
  NDT_CHECK(victim != tasks_[task].resource, "a task cannot slow its own resource");
  NDT_CHECK(share >= 0 && share < 1, "slowdown share outside [0, 1)");
  tasks_[task].slows = share > 0 ? victim : -1;
  tasks_[task].slow_share = share;
}

namespace {

class Runner {
 public:
  explicit Runner(const TaskGraph& g)
      : g_(g),
        pending_(g.tasks().size(), 0),
        succ_(g.tasks().size()),
        head_(g.resources().size(), 0),
        busy_(g.resources().size(), false),
        run_(g.resources().size()) {
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
    const Task& task = g_.tasks()[t];
    tl_.spans[t] = {t, start, start + task.duration_s};
    Running& run = run_[r];
    run.task = t;
    run.left_s = task.duration_s;
    run.since_s = start;
    run.event = engine_.ScheduleAfter(task.duration_s / Rate(r), [this, t, r] { Finish(t, r); });
    if (task.slows >= 0) Slow(task.slows, task.slow_share, +1);
  }

  // Progress rate of resource r now: 1 less the shares of the tasks slowing it.
  double Rate(ResourceId r) const {
    return run_[r].slowers > 0 ? std::max(kMinSlowedRate, 1.0 - run_[r].share) : 1.0;
  }

  // A task slowing `victim` by `share` starts (sign +1) or ends (-1): the victim's running task
  // keeps the work it has done at the old rate and finishes the rest at the new one.
  void Slow(ResourceId victim, double share, int sign) {
    Running& v = run_[victim];
    const double now = engine_.now_s();
    if (busy_[victim]) v.left_s = std::max(0.0, v.left_s - (now - v.since_s) * Rate(victim));
    v.since_s = now;
    v.slowers += sign;
    v.share = v.slowers > 0 ? v.share + sign * share : 0.0;  // exact 0 when none is left
    if (busy_[victim]) {
      engine_.Cancel(v.event);
      const TaskId t = v.task;
      v.event =
          engine_.ScheduleAfter(v.left_s / Rate(victim), [this, t, victim] { Finish(t, victim); });
    }
  }

  void Finish(TaskId t, ResourceId r) {
    ++done_;
    busy_[r] = false;
    ++head_[r];
    tl_.spans[t].end_s = engine_.now_s();
    if (g_.tasks()[t].slows >= 0) Slow(g_.tasks()[t].slows, g_.tasks()[t].slow_share, -1);
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
  // Per resource: its running task, the work it has left (seconds at full speed) as of since_s,
  // its finish event, and the tasks slowing it now with their summed share.
  struct Running {
    TaskId task = -1;
    double left_s = 0, since_s = 0;
    EventId event = 0;
    int slowers = 0;
    double share = 0;
  };
  std::vector<Running> run_;
  size_t done_ = 0;
  Timeline tl_;
};

}  // namespace

StatusOr<Timeline> RunTaskGraph(const TaskGraph& graph) {
  Runner runner(graph);
  return runner.Run();
}

}  // namespace ndt
