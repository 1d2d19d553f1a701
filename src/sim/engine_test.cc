#include "sim/engine.h"

#include <gtest/gtest.h>

#include <vector>

#include "sim/task_graph.h"

namespace ndt {
namespace {

TEST(EventEngine, RunsEventsInTimeOrderAndFifoOnTies) {
  EventEngine e;
  std::vector<int> order;
  e.Schedule(2.0, [&] { order.push_back(3); });
  e.Schedule(1.0, [&] { order.push_back(1); });
  e.Schedule(1.0, [&] { order.push_back(2); });  // same time: after the first one scheduled
  e.Run();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_DOUBLE_EQ(e.now_s(), 2.0);
}

TEST(EventEngine, CancelledEventDoesNotRun) {
  EventEngine e;
  int ran = 0;
  EventId id = e.Schedule(1.0, [&] { ran += 1; });
  e.Schedule(2.0, [&] { ran += 10; });
  e.Cancel(id);
  e.Cancel(id);  // twice is a no-op
  e.Run();
  EXPECT_EQ(ran, 10);
  EXPECT_EQ(e.events_run(), 1);
}

TEST(EventEngine, HandlersMayScheduleMoreEvents) {
  EventEngine e;
  int count = 0;
  std::function<void()> tick = [&] {
    if (++count < 5) e.ScheduleAfter(0.5, tick);
  };
  e.Schedule(0, tick);
  e.Run();
  // 5 ticks at 0, 0.5, 1, 1.5, 2.
  EXPECT_EQ(count, 5);
  EXPECT_DOUBLE_EQ(e.now_s(), 2.0);
}

TEST(EventEngine, RunUntilStopsAtTheLimit) {
  EventEngine e;
  int ran = 0;
  e.Schedule(1.0, [&] { ++ran; });
  e.Schedule(3.0, [&] { ++ran; });
  e.RunUntil(2.0);
  EXPECT_EQ(ran, 1);
  EXPECT_DOUBLE_EQ(e.now_s(), 2.0);
  e.Run();
  EXPECT_EQ(ran, 2);
}

TEST(TaskGraph, StreamOrderAndDependenciesGiveTheCriticalPath) {
  // Two streams: compute runs A(1) then B(2); comm runs C(3) after A. B does not wait for C.
  // D(1) on compute waits for C: starts at max(A+B=3, A+C=4) = 4, ends at 5.
  TaskGraph g;
  ResourceId comp = g.AddResource("compute", 0);
  ResourceId comm = g.AddResource("comm", 0);
  TaskId a = g.AddTask(comp, 1, 0, "A");
  TaskId b = g.AddTask(comp, 2, 0, "B");
  TaskId c = g.AddTask(comm, 3, 1, "C");
  TaskId d = g.AddTask(comp, 1, 0, "D");
  g.AddDep(a, c);
  g.AddDep(c, d);
  auto tl = RunTaskGraph(g);
  ASSERT_TRUE(tl.ok());
  EXPECT_DOUBLE_EQ(tl->spans[b].start_s, 1);
  EXPECT_DOUBLE_EQ(tl->spans[c].start_s, 1);
  EXPECT_DOUBLE_EQ(tl->spans[d].start_s, 4);
  EXPECT_DOUBLE_EQ(tl->makespan_s, 5);
}

TEST(TaskGraph, CycleIsReportedNotHung) {
  TaskGraph g;
  ResourceId r = g.AddResource("compute", 0);
  ResourceId s = g.AddResource("comm", 0);
  TaskId a = g.AddTask(r, 1, 0, "A");
  TaskId b = g.AddTask(s, 1, 0, "B");
  g.AddDep(a, b);
  g.AddDep(b, a);
  auto tl = RunTaskGraph(g);
  EXPECT_FALSE(tl.ok());
}

}  // namespace
}  // namespace ndt
