// File: parallel/train_sim.cc
// Lowering of one training iteration to a sim/ task graph and its run; model in train_sim.h.
#include "parallel/train_sim.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/check.h"
#include "parallel/memory.h"
#include "parallel/schedule.h"
#include "parallel/step_estimate.h"
#include "parallel/train_lowering.h"
#include "sim/task_graph.h"

namespace ndt {
namespace train_internal {
namespace {

// Of `params` (stage `st`'s per GPU), those whose optimizer states this GPU updates: ZeRO >= 1
// shards the dense ones over DP x CP and the experts over DP x CP / EP, as memory.h counts them.
double OptimizerParams(const TransformerSpec& m, const Strategy& s, int st, double params) {
  if (s.zero < 1) return params;
  const double expert = StageExpertParamsPerGpu(m, s, st);
  const double shards = s.weight_replicas();
  return (params - expert) / shards + expert / std::max(1.0, shards / s.ep);
}

}  // namespace

StatusOr<TrainSimResult> Lowering::Run() {
  Layer(0);  // sets the op mix (bound_fwd_, bound_bwd_) the overlap slowdowns use
  Chunks chunks(s_.pp);
  for (int st = 0; st < s_.pp; ++st) {
    for (int c = 0; c < s_.vpp; ++c) chunks[st].push_back(Chunk(st, c));
  }
  const double p2p_s = P2p();
  if (o_.closed_form) return EstimateClosedForm(chunks, p2p_s);
  Graph lg;
  AddStages(&lg);
  AddComputeTasks(chunks, p2p_s, &lg);
  AddPipelineSends(p2p_s, &lg);
  AddDpAndOptimizer(chunks, &lg);
  NDT_ASSIGN_OR_RETURN(Timeline tl, RunTaskGraph(lg.g));
  TrainSimResult r = Collect(chunks, lg, tl);
  if (o_.want_trace) AddTraceSpans(lg, tl, &r);
  return r;
}

StatusOr<TrainSimResult> Lowering::EstimateClosedForm(const Chunks& chunks, double p2p_s) {
  const int pp = s_.pp;
  // Gradients reduce in their buffer's type (fp32 main_grad for bf16); weights gather in 16-bit.
  const double grad_bytes = GradBytesPerParam(s_);
  std::vector<StageTail> tails(pp);
  const CommKind kind = s_.zero >= 1 ? CommKind::kReduceScatter : CommKind::kAllReduce;
  for (int st = 0; st < pp; ++st) {
    double params = 0;
    for (const ChunkCost& cc : chunks[st]) params += cc.sum.params;
    StageTail& t = tails[st];
    Op adam;
    adam.kind = OpKind::kElementwise;
    adam.bytes = OptimizerBytesPerParam() * OptimizerParams(m_, s_, st, params);
    t.optimizer_s = c_.OpsTime({adam});
    t.p2p_share = s_.overlap_p2p ? p2p_share_ : 0.0;
    if (s_.weight_replicas() > 1 && s_.zero < 3) {
      const CommPriced full = Priced(kind, params * grad_bytes, dp_group_);
      t.dp_full_s = full.time_s;
      t.dp_share = Share(full, bound_bwd_);
      t.dp_bucket_s = Comm(kind, std::min(params, o_.dp_bucket_params) * grad_bytes, dp_group_);
      if (s_.zero >= 1) t.gather_s = ParamGatherS(chunks[st], params);
    }
  }
  return EstimateStep(m_, s_, chunks, tails, p2p_s);
}

double Lowering::ParamGatherS(const std::vector<ChunkCost>& stage_chunks, double params) {
  const CommPriced full = Priced(CommKind::kAllGather, params * 2.0, dp_group_);
  if (!s_.overlap_param_gather) return full.time_s;
  double first_fwd_s = 0;
  for (const ChunkCost& cc : stage_chunks) first_fwd_s += cc.sum.fwd_s();
  const double first_bucket_s =
      Comm(CommKind::kAllGather, std::min(params, o_.dp_bucket_params) * 2.0, dp_group_);
  return ParamGatherExposedS(full.time_s, first_bucket_s, first_fwd_s, Share(full, bound_bwd_));
}

std::string Lowering::TaskName(const char* what, int c, int64_t mb) const {
  return o_.want_trace ? std::string(what) + " mb" + std::to_string(mb) + " c" + std::to_string(c)
                       : std::string();
}

void Lowering::AddStages(Graph* lg) {
  const int pp = s_.pp, vpp = s_.vpp;
  const int64_t m = s_.micro_batches();
  lg->res.resize(pp);
  for (int st = 0; st < pp; ++st) {
    lg->res[st].compute = lg->g.AddResource("compute", st);
    lg->res[st].send_fwd = lg->g.AddResource("pp send fwd", st);
    lg->res[st].send_bwd = lg->g.AddResource("pp send bwd", st);
    lg->res[st].dp = lg->g.AddResource("dp comm", st);
  }
  lg->pass.assign(pp, std::vector<std::vector<std::pair<TaskId, TaskId>>>(
                          2, std::vector<std::pair<TaskId, TaskId>>(static_cast<size_t>(vpp * m))));
  lg->sched.resize(pp);
  lg->last_layers.resize(pp);
  lg->last_compute.resize(pp);
  lg->opt_task.resize(pp);
  for (int st = 0; st < pp; ++st) {
    lg->sched[st] = StageSchedule(s_.schedule, pp, vpp, m, st);
    lg->last_layers[st].resize(vpp);
  }
}

void Lowering::AddComputeTasks(const Chunks& chunks, double p2p_s, Graph* lg) {
  const int pp = s_.pp, nv = s_.pp * s_.vpp;
  const int64_t m = s_.micro_batches();
  TaskGraph& g = lg->g;
  for (int st = 0; st < pp; ++st) {
    const ResourceId compute = lg->res[st].compute;
    for (const PipeStep& ps : lg->sched[st]) {
      const ChunkCost& cc = chunks[st][ps.chunk];
      const size_t idx = static_cast<size_t>(ps.chunk * m + ps.micro_batch);
      const int v = ps.chunk * pp + st;
      const bool sends = ps.forward ? v + 1 < nv : v > 0;
      const double block_s = !s_.overlap_p2p && sends ? p2p_s : 0.0;
      // A pass's exposed CP exchange is its own span on the compute stream, after the pass's
      // kernels (same total; the trace shows it).
      auto add_pass = [&](double total_s, double cp_s, int tag, const char* what,
                          const char* cp_what) -> std::pair<TaskId, TaskId> {
        const TaskId t = g.AddTask(compute, total_s - cp_s + block_s, tag,
                                   TaskName(what, ps.chunk, ps.micro_batch));
        if (cp_s <= 0) return {t, t};
        return {t, g.AddTask(compute, cp_s, kCp, TaskName(cp_what, ps.chunk, ps.micro_batch))};
      };
      if (ps.forward) {
        lg->pass[st][1][idx] = add_pass(cc.sum.fwd_s(), cc.sum.fwd_cp_s, kFwd, "fwd", "cp fwd");
      } else if (ps.micro_batch == m - 1 && s_.weight_replicas() > 1) {
        lg->pass[st][0][idx] =
            AddLayerBackwards(cc, ps, block_s, compute, lg, &lg->last_layers[st][ps.chunk]);
      } else {
        lg->pass[st][0][idx] = add_pass(cc.sum.bwd_s(), cc.sum.bwd_cp_s, kBwd, "bwd", "cp bwd");
      }
    }
    lg->last_compute[st] = g.tasks().empty() ? 0 : static_cast<TaskId>(g.tasks().size() - 1);
  }
}

std::pair<TaskId, TaskId> Lowering::AddLayerBackwards(const ChunkCost& cc, const PipeStep& ps,
                                                      double block_s, ResourceId compute, Graph* lg,
                                                      std::vector<TaskId>* layers) {
  const bool trace = o_.want_trace;
  TaskId first = -1, last = -1;
  for (size_t l = 0; l < cc.layer_bwd_s.size(); ++l) {
    const double extra = l + 1 == cc.layer_bwd_s.size() ? block_s : 0.0;
    const double cp_s = cc.layer_bwd_cp_s[l];
    const std::string layer = trace ? " L" + std::to_string(l) : std::string();
    last = lg->g.AddTask(compute, cc.layer_bwd_s[l] - cp_s + extra, kBwd,
                         trace ? TaskName("bwd", ps.chunk, ps.micro_batch) + layer : std::string());
    if (first < 0) first = last;
    if (cp_s > 0) {
      last = lg->g.AddTask(compute, cp_s, kCp,
                           trace ? TaskName("cp bwd", ps.chunk, ps.micro_batch) + layer : "");
    }
    layers->push_back(last);
  }
  return {first, last};
}

void Lowering::AddPipelineSends(double p2p_s, Graph* lg) {
  const int pp = s_.pp, nv = s_.pp * s_.vpp;
  const int64_t m = s_.micro_batches();
  TaskGraph& g = lg->g;
  const auto& pass = lg->pass;
  const double send_s = s_.overlap_p2p ? p2p_s : 0.0;
  for (int st = 0; st < pp; ++st) {
    for (const PipeStep& ps : lg->sched[st]) {
      const int v = ps.chunk * pp + st;
      const size_t idx = static_cast<size_t>(ps.chunk * m + ps.micro_batch);
      if (ps.forward && v + 1 < nv) {
        const int ns = (v + 1) % pp, nc = (v + 1) / pp;
        const TaskId send = g.AddTask(lg->res[st].send_fwd, send_s, kP2p,
                                      TaskName("send act", ps.chunk, ps.micro_batch));
        if (send_s > 0) g.SetSlowdown(send, lg->res[st].compute, p2p_share_);
        g.AddDep(pass[st][1][idx].second, send);
        g.AddDep(send, pass[ns][1][static_cast<size_t>(nc * m + ps.micro_batch)].first);
      } else if (!ps.forward && v > 0) {
        const int ns = (v - 1) % pp, nc = (v - 1) / pp;
        const TaskId send = g.AddTask(lg->res[st].send_bwd, send_s, kP2p,
                                      TaskName("send grad", ps.chunk, ps.micro_batch));
        if (send_s > 0) g.SetSlowdown(send, lg->res[st].compute, p2p_share_);
        g.AddDep(pass[st][0][idx].second, send);
        g.AddDep(send, pass[ns][0][static_cast<size_t>(nc * m + ps.micro_batch)].first);
      }
    }
  }
}

std::vector<TaskId> Lowering::AddGradBuckets(const std::vector<ChunkCost>& stage_chunks, int st,
                                             Graph* lg, double* stage_params) {
  // Gradients reduce in their buffer's type (fp32 main_grad for bf16).
  const double grad_bytes = GradBytesPerParam(s_);
  const CommKind grad_kind = s_.zero >= 1 ? CommKind::kReduceScatter : CommKind::kAllReduce;
  std::vector<TaskId> dp_tasks;
  // Chunks finish their last backward in reverse chunk order.
  for (int c = s_.vpp - 1; c >= 0; --c) {
    const ChunkCost& cc = stage_chunks[c];
    double acc = 0;
    for (size_t l = 0; l < cc.layer_params.size(); ++l) {
      acc += cc.layer_params[l];
      *stage_params += cc.layer_params[l];
      if (acc >= o_.dp_bucket_params || l + 1 == cc.layer_params.size()) {
        const CommPriced bucket = Priced(grad_kind, acc * grad_bytes, dp_group_);
        const TaskId t = lg->g.AddTask(lg->res[st].dp, bucket.time_s, kDp,
                                       o_.want_trace ? "grad bucket c" + std::to_string(c) : "");
        // Overlap slowdown: the bucket's kernels take SMs and HBM from the backward beside it.
        lg->g.SetSlowdown(t, lg->res[st].compute, Share(bucket, bound_bwd_));
        lg->g.AddDep(s_.overlap_dp ? lg->last_layers[st][c][l] : lg->last_compute[st], t);
        dp_tasks.push_back(t);
        acc = 0;
      }
    }
  }
  return dp_tasks;
}

void Lowering::AddDpAndOptimizer(const Chunks& chunks, Graph* lg) {
  const bool trace = o_.want_trace;
  TaskGraph& g = lg->g;
  for (int st = 0; st < s_.pp; ++st) {
    const bool per_layer = s_.zero >= 3;  // ZeRO-3 moves weights and gradients per layer
    std::vector<TaskId> dp_tasks;
    double stage_params = 0;
    if (s_.weight_replicas() > 1 && !per_layer) {
      dp_tasks = AddGradBuckets(chunks[st], st, lg, &stage_params);
    } else {
      for (const ChunkCost& cc : chunks[st]) stage_params += cc.sum.params;
    }
    const double opt_params = OptimizerParams(m_, s_, st, stage_params);
    Op adam;
    adam.name = "adam";
    adam.kind = OpKind::kElementwise;
    adam.bytes = OptimizerBytesPerParam() * opt_params;
    const double opt_s = c_.OpsTime({adam});
    lg->opt_task[st] = g.AddTask(lg->res[st].compute, opt_s, kOpt, trace ? "optimizer" : "");
    for (TaskId t : dp_tasks) g.AddDep(t, lg->opt_task[st]);
    if (s_.zero >= 1 && s_.weight_replicas() > 1 && !per_layer) {
      const TaskId ag = g.AddTask(lg->res[st].dp, ParamGatherS(chunks[st], stage_params), kDp,
                                  trace ? "param all-gather" : "");
      g.AddDep(lg->opt_task[st], ag);
    }
    if (st == 0) lg->stage0_opt_s = opt_s;
  }
}

TrainSimResult Lowering::Collect(const Chunks& chunks, const Graph& lg, const Timeline& tl) {
  const TaskGraph& g = lg.g;
  TrainSimResult r;
  r.step_time_s = tl.makespan_s;
  r.tasks = static_cast<int64_t>(g.tasks().size());
  r.events = tl.events;
  // Breakdown of stage 0.
  TimeBreakdown bd;
  bd.optimizer_s = lg.stage0_opt_s;
  double busy = StageZeroWork(chunks[0], static_cast<double>(s_.micro_batches()), &bd);
  const double last_bwd_end = tl.spans[lg.opt_task[0]].start_s;
  double compute_end = 0;
  for (TaskId t : g.queue(lg.res[0].compute)) {
    if (g.tasks()[t].tag == kBwd || g.tasks()[t].tag == kCp)
      compute_end = std::max(compute_end, tl.spans[t].end_s);
    // What overlapped communication slowed (SetSlowdown) is compute time too.
    const Span& sp = tl.spans[t];
    const double slowed = std::max(0.0, (sp.end_s - sp.start_s) - g.tasks()[t].duration_s);
    bd.compute_s += slowed;
    busy += slowed;
  }
  bd.dp_comm_s += std::max(0.0, last_bwd_end - compute_end) +
                  std::max(0.0, r.step_time_s - tl.spans[lg.opt_task[0]].end_s);
  bd.pp_bubble_s = std::max(0.0, r.step_time_s - busy - bd.optimizer_s - bd.dp_comm_s);
  r.breakdown = bd;
  StepFlops(m_, s_, chunks, &r);  // every GPU of a stage does the same work
  return r;
}

void Lowering::AddTraceSpans(const Graph& lg, const Timeline& tl, TrainSimResult* r) const {
  const TaskGraph& g = lg.g;
  r->stream_names = {"compute", "pp send fwd", "pp send bwd", "dp comm"};
  static const char* kCat[] = {"forward", "backward", "pp", "dp", "optimizer", "cp"};
  r->spans.reserve(g.tasks().size());
  for (TaskId t = 0; t < static_cast<TaskId>(g.tasks().size()); ++t) {
    const Task& task = g.tasks()[t];
    const Span& sp = tl.spans[t];
    r->spans.push_back({g.resources()[task.resource].track, task.resource % 4, task.name,
                        kCat[task.tag], sp.start_s, sp.end_s - sp.start_s});
  }
}

}  // namespace train_internal

StatusOr<TrainSimResult> SimulateTrainingStep(const TransformerSpec& model, const Strategy& s,
                                              const TrainCosts& costs, const TrainSimOptions& opt) {
  train_internal::Lowering low(model, s, costs, opt);
  return low.Run();
}

}  // namespace ndt
