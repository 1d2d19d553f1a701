// File: report/trace.h
// Chrome trace-event JSON ("traceEvents", the format ui.perfetto.dev and chrome://tracing open)
// for simulated timelines: one process per track group (a simulated rank, a replica), one thread
// per stream in it, one complete ("X") event per span. Times in seconds in, microseconds out.
// Shared by training (parallel/) and inference (serve/) through plain structs; knows nothing of
// either.
#ifndef NDTWIN_REPORT_TRACE_H_
#define NDTWIN_REPORT_TRACE_H_

#include <string>
#include <vector>

#include "core/status.h"

namespace ndt {

struct TraceTrack {
  int pid = 0;               // group (e.g. pipeline stage / rank)
  int tid = 0;               // stream within the group
  std::string process_name;  // "rank 0 (stage 0)"
  std::string thread_name;   // "compute", "tp comm"
};

struct TraceSpan {
  int track = 0;         // index into tracks
  std::string name;      // "fwd mb3 chunk1"
  std::string category;  // "compute", "tp", "pp", "dp", "bubble"
  double start_s = 0;
  double dur_s = 0;
};

struct Trace {
  std::vector<TraceTrack> tracks;
  std::vector<TraceSpan> spans;
  std::string title;  // stored under "otherData"
};

// The JSON text (deterministic: tracks in index order, then spans in order).
std::string TraceToJson(const Trace& trace);
// Writes TraceToJson to `path`; kInvalidInput "cannot write trace file 'p': <reason>" on error.
Status WriteTrace(const Trace& trace, const std::string& path);

}  // namespace ndt

#endif  // NDTWIN_REPORT_TRACE_H_
