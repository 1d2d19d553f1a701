// File: sim/engine.h
// The discrete-event core: a clock and a time-ordered queue of handlers. Events at equal times
// run first-in first-out (a sequence number breaks ties), Cancel marks an event dead instead of
// searching the heap. Knows nothing about GPUs, tasks or networks (STYLE.md §9). Times in s.
// Example:
//   EventEngine e;
//   e.Schedule(1.0, [&] { ... });
//   e.Run();
// Not thread-safe: one EventEngine per simulation; copies are disabled.
#ifndef NDTWIN_SIM_ENGINE_H_
#define NDTWIN_SIM_ENGINE_H_

#include <cstdint>
#include <functional>
#include <vector>

namespace ndt {

using EventId = int64_t;

class EventEngine {
 public:
  EventEngine() = default;
  EventEngine(const EventEngine&) = delete;
  EventEngine& operator=(const EventEngine&) = delete;

  double now_s() const { return now_s_; }
  // Runs `fn` at time `at_s`. REQUIRES: at_s >= now_s().
  EventId Schedule(double at_s, std::function<void()> fn);
  // Runs `fn` after `delay_s` from now. REQUIRES: delay_s >= 0.
  EventId ScheduleAfter(double delay_s, std::function<void()> fn) {
    return Schedule(now_s_ + delay_s, std::move(fn));
  }
  // Marks an event dead; a no-op if it already ran or was cancelled.
  void Cancel(EventId id);
  // Runs events in time order until none is left.
  void Run();
  // Runs events with time <= t_s, then sets the clock to t_s (if later than now).
  void RunUntil(double t_s);
  // Events run so far.
  int64_t events_run() const { return events_run_; }
  bool empty() const { return live_ == 0; }

 private:
  struct Entry {
    double time_s;
    int64_t seq;
    int32_t slot;
  };
  // Heap order: earliest time first, then lowest seq (FIFO on ties).
  static bool Later(const Entry& a, const Entry& b) {
    return a.time_s != b.time_s ? a.time_s > b.time_s : a.seq > b.seq;
  }
  void Push(const Entry& e);
  Entry Pop();
  bool Step(double limit_s);

  double now_s_ = 0;
  int64_t next_seq_ = 0;
  int64_t events_run_ = 0;
  int64_t live_ = 0;
  std::vector<Entry> heap_;
  // Side table: handler, and the seq it belongs to (a slot is reused once its event ran).
  std::vector<std::function<void()>> handlers_;
  std::vector<int64_t> slot_seq_;
  std::vector<int32_t> free_slots_;
};

}  // namespace ndt

#endif  // NDTWIN_SIM_ENGINE_H_
