// File: sim/engine.cc
// Binary heap of (time, seq, slot) with handlers in a side table; see engine.h.
#include "sim/engine.h"

#include <algorithm>
#include <utility>

#include "core/check.h"

namespace ndt {

EventId EventEngine::Schedule(double at_s, std::function<void()> fn) {
  NDT_CHECK(at_s >= now_s_, "event scheduled in the past");
  int32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<int32_t>(handlers_.size());
    handlers_.emplace_back();
    slot_seq_.push_back(-1);
  }
  const int64_t seq = next_seq_++;
  handlers_[slot] = std::move(fn);
  slot_seq_[slot] = seq;
  Push({at_s, seq, slot});
  ++live_;
  // The id packs (seq, slot): Cancel finds the slot directly and checks that it still holds
  // this seq (slots are reused). REQUIRES: fewer than 2^24 pending events.
  NDT_CHECK(slot < (1 << 24), "too many pending events");
  return (seq << 24) | slot;
}

void EventEngine::Cancel(EventId id) {
  const int32_t slot = static_cast<int32_t>(id & ((1 << 24) - 1));
  const int64_t seq = id >> 24;
  if (slot < 0 || slot >= static_cast<int32_t>(slot_seq_.size())) return;
  if (slot_seq_[slot] != seq) return;  // already ran or cancelled
  slot_seq_[slot] = -1;
  handlers_[slot] = nullptr;
  --live_;
}

void EventEngine::Push(const Entry& e) {
  heap_.push_back(e);
  std::push_heap(heap_.begin(), heap_.end(), Later);
}

EventEngine::Entry EventEngine::Pop() {
  std::pop_heap(heap_.begin(), heap_.end(), Later);
  Entry e = heap_.back();
  heap_.pop_back();
  return e;
}

bool EventEngine::Step(double limit_s) {
  while (!heap_.empty()) {
    if (heap_.front().time_s > limit_s) return false;
    const Entry e = Pop();
    if (slot_seq_[e.slot] != e.seq) {  // cancelled: its slot is free now
      free_slots_.push_back(e.slot);
      continue;
    }
    now_s_ = e.time_s;
    std::function<void()> fn = std::move(handlers_[e.slot]);
    handlers_[e.slot] = nullptr;
    slot_seq_[e.slot] = -1;
    free_slots_.push_back(e.slot);
    --live_;
    ++events_run_;
    fn();
    return true;
  }
  return false;
}

void EventEngine::Run() {
  while (Step(1e300)) {
  }
}

void EventEngine::RunUntil(double t_s) {
  while (Step(t_s)) {
  }
  if (t_s > now_s_) now_s_ = t_s;
}

}  // namespace ndt
