// File: report/trace.cc
// Chrome trace-event JSON writer; see trace.h. Metadata events ("M") name processes and threads
// and fix their sort order; spans are complete events ("X") with ts/dur in microseconds.
#include "report/trace.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/files.h"

namespace ndt {

std::string TraceToJson(const Trace& trace) {
  using Json = nlohmann::ordered_json;
  Json events = Json::array();
  std::vector<int> named_pids;
  for (const TraceTrack& t : trace.tracks) {
    bool seen = false;
    for (int p : named_pids) seen = seen || p == t.pid;
    if (!seen) {
      named_pids.push_back(t.pid);
      events.push_back(Json{{"name", "process_name"},
                            {"ph", "M"},
                            {"pid", t.pid},
                            {"args", Json{{"name", t.process_name}}}});
      events.push_back(Json{{"name", "process_sort_index"},
                            {"ph", "M"},
                            {"pid", t.pid},
                            {"args", Json{{"sort_index", t.pid}}}});
    }
    events.push_back(Json{{"name", "thread_name"},
                          {"ph", "M"},
                          {"pid", t.pid},
                          {"tid", t.tid},
                          {"args", Json{{"name", t.thread_name}}}});
    events.push_back(Json{{"name", "thread_sort_index"},
                          {"ph", "M"},
                          {"pid", t.pid},
                          {"tid", t.tid},
                          {"args", Json{{"sort_index", t.tid}}}});
  }
  for (const TraceSpan& s : trace.spans) {
    const TraceTrack& t = trace.tracks.at(static_cast<size_t>(s.track));
    events.push_back(Json{{"name", s.name},
                          {"cat", s.category},
                          {"ph", "X"},
                          {"ts", s.start_s * 1e6},
                          {"dur", s.dur_s * 1e6},
                          {"pid", t.pid},
                          {"tid", t.tid}});
  }
  Json root{{"traceEvents", std::move(events)},
            {"displayTimeUnit", "ms"},
            {"otherData", Json{{"title", trace.title}}}};
  return root.dump();
}

Status WriteTrace(const Trace& trace, const std::string& path) {
  return WriteFileAtomic(path, TraceToJson(trace) + "\n", "--trace");
}

}  // namespace ndt
