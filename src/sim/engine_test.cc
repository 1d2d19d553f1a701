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

TEST(TaskGraph, ASlowingTaskStretchesWhatRunsBesideIt) {
  // 1 s of GEMM on the compute stream beside a 0.5 s all-reduce whose 24 CTAs take 24 of 132 SMs
  // (share 24/132). For the first 0.5 s the GEMM runs at 108/132 of its speed and does
  // 0.5 x 108/132 s of its work; the rest, 1 - 0.5 x 108/132, runs at full speed after:
  // 0.5 + 1 - 0.5 x 108/132 = 1 + 0.5 x 24/132 s. The all-reduce itself is not slowed.
  TaskGraph g;
  ResourceId comp = g.AddResource("compute", 0);
  ResourceId comm = g.AddResource("comm", 0);
  TaskId gemm = g.AddTask(comp, 1.0, 0, "gemm");
  TaskId ar = g.AddTask(comm, 0.5, 1, "all_reduce");
  g.SetSlowdown(ar, comp, 24.0 / 132.0);
  // A second GEMM after the first runs alone, at full speed: ends 1 s after the first.
  TaskId next = g.AddTask(comp, 1.0, 0, "gemm 2");
  auto tl = RunTaskGraph(g);
  ASSERT_TRUE(tl.ok());
  EXPECT_DOUBLE_EQ(tl->spans[ar].end_s, 0.5);
  EXPECT_NEAR(tl->spans[gemm].end_s, 1.0 + 0.5 * 24.0 / 132.0, 1e-12);
  EXPECT_NEAR(tl->spans[next].end_s, 2.0 + 0.5 * 24.0 / 132.0, 1e-12);
  // Two slowing tasks at once add their shares: 0.2 + 0.3 for 1 s, so a 2 s compute task does
  // 0.5 s of work in the first second and 1.5 s after: it ends at 2.5 s.
  TaskGraph h;
  ResourceId c2 = h.AddResource("compute", 0);
  ResourceId s1 = h.AddResource("dp", 0);
  ResourceId s2 = h.AddResource("pp", 0);
  TaskId work = h.AddTask(c2, 2.0, 0, "bwd");
  h.SetSlowdown(h.AddTask(s1, 1.0, 1, "dp"), c2, 0.2);
  h.SetSlowdown(h.AddTask(s2, 1.0, 1, "pp"), c2, 0.3);
  auto t2 = RunTaskGraph(h);
  ASSERT_TRUE(t2.ok());
  EXPECT_NEAR(t2->spans[work].end_s, 2.5, 1e-12);
  EXPECT_NEAR(t2->makespan_s, 2.5, 1e-12);
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
