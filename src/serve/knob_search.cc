#include "serve/knob_search.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "serve/cost.h"
#include "serve/disaggregate.h"

namespace ndt {
namespace {

// Offline deployments re-run in full after the quick screen (each run about 0.1-0.5 s).
constexpr size_t kRescoredCandidates = 3;
// Objectives within 0.5% are a tie: the smaller deployment, found first, keeps it.
constexpr double kTie = 1.005;
// The SLO search skips a candidate whose offline rate x this cannot beat the best found.
constexpr double kSloBoundSlack = 1.05;

constexpr int kDefaultMaxNumTokens = 8192;  // TensorRT-LLM's default max_num_tokens

struct Knobs {
  int tp = 1, pp = 1, max_batch = 256, max_num_tokens = kDefaultMaxNumTokens;
  bool attention_dp = false;  // or InferOptions::attention_dp
};

int MaxSeqTokens(const InferOptions& o) {
  int m = 1;
  for (const RequestLengths& l : o.lengths) m = std::max(m, l.input_tokens + l.output_tokens);
  for (const Request& r : o.trace) m = std::max(m, r.input_tokens + r.output_tokens);
  return m;
}

StatusOr<DeploymentPlan> MakeDeploymentPlan(const InferContext& ctx, const InferOptions& o,
                                            const Knobs& k) {
  DeploymentPlan p;
  DeploymentRequest dr;
  dr.tp = k.tp;
  dr.pp = k.pp;
  // Attention-DP splits the routed experts over the whole group (EP = TP; service.cc checks).
  const bool adp = o.attention_dp || k.attention_dp;
  const int ep = adp ? k.tp : o.ep;
  const int dp = adp ? k.tp : 1;
  dr.ep = ep;
  dr.attention_dp = adp;
  dr.weights = o.weights;
  dr.kv = o.kv;
  dr.max_seq_tokens = MaxSeqTokens(o);
  dr.max_num_tokens = k.max_num_tokens;
  dr.max_batch = k.max_batch;
  dr.activations = Dtype::kFp16;
  NDT_ASSIGN_OR_RETURN(int replicas, CountReplicas(*ctx.sku, o.vms, k.tp, k.pp, ep));
  NDT_ASSIGN_OR_RETURN(MemoryPlan mem, PlanMemory(*ctx.model, *ctx.gpu, dr, ctx.params));
  p.dep.tp = k.tp;
  p.dep.pp = k.pp;
  p.dep.ep = ep;
  p.dep.attention_dp = adp;
  p.dep.replicas = replicas;
  p.dep.gpus_used = replicas * k.tp * k.pp;
  p.dep.gpus_total = ctx.sku->gpus * o.vms;
  p.dep.max_batch = k.max_batch;
  p.dep.max_num_tokens = k.max_num_tokens;
  p.dep.weights = o.weights;
  p.dep.kv = o.kv;
  p.dep.memory = mem;
  p.engines = replicas * k.pp;
  // Attention-DP's ranks run as one engine of dp x the per-rank batch, budget and cache, each
  // rank scheduling its own requests (serve/engine.h), each iteration priced on its busiest rank
  // (serve/cost.h).
  p.engine.max_batch = k.max_batch * dp;
  p.engine.max_num_tokens = k.max_num_tokens * dp;
  p.engine.max_chunk_tokens = k.max_num_tokens;
  p.engine.attention_dp_ranks = dp;  // each rank schedules its own requests (serve/engine.h)
  p.engine.block_tokens = ctx.params.block_tokens;
  p.engine.guaranteed_no_evict = o.guaranteed_no_evict;
  p.engine.kv_blocks = mem.kv_blocks_per_replica / k.pp;  // the groups share the cache evenly
  p.cost.model = ctx.model;
  p.cost.gpu = ctx.gpu;
  p.cost.calibration = ctx.calibration;
  p.cost.tp = k.tp;
  p.cost.pp = k.pp;
  p.cost.ep = ep;
  p.cost.attention_dp = dp;
  p.cost.weights = o.weights;
  p.cost.kv = o.kv;
  p.cost.activations = Dtype::kFp16;
  p.cost.overhead_s = ctx.params.iteration_overhead_s;
  if (const auto& fit = ctx.calibration->For(ctx.gpu->arch).serving; fit) {
    p.cost.overhead_s = fit->iteration_overhead_s;
    p.cost.overhead_per_seq_s = fit->overhead_per_seq_s;
  }
  p.cost.host_overlap = o.host_overlap;
  p.cost.overhead_reference_layers = ctx.params.host_overhead_reference_layers;
  const double launch_s = ctx.calibration->For(ctx.gpu->arch).kernel_overhead_s;
  if (o.cuda_graphs) {
    p.cost.cuda_graph_max_batch = ctx.params.cuda_graph_max_batch;
    p.cost.graph_launch_s = launch_s;
    if (o.cuda_graph_padding) {
      p.cost.cuda_graph_padded_sizes =
          CapturedGraphSizes(ctx.params.cuda_graph_padded_sizes, k.max_batch, k.max_num_tokens);
    }
  }
  if (dp > 1 && ctx.comm.moe_dispatch_s && ctx.comm.moe_combine_s) {
    // The dispatch before each MoE layer and the combine after it (the grouped NCCL broadcasts
    // and reduces of serve/comm.cc), over the group's GPUs, at NCCL's in-engine efficiency of
    // the arch (as the TP all-reduce's NCCL path); every rank's share padded to the busiest
    // rank's tokens (use_dp_padding).
    const double dispatch =
        MoeDispatchBytesPerToken(*ctx.model, o.weights, Dtype::kFp16, ctx.params);
    const double combine = MoeCombineBytesPerToken(*ctx.model, Dtype::kFp16);
    const double nccl_eff = ctx.params.NcclInEngineEfficiency(ctx.gpu->arch);
    auto ag = ctx.comm.moe_dispatch_s, rs = ctx.comm.moe_combine_s;
    p.cost.moe_comm_s = [ag, rs, dp, dispatch, combine, nccl_eff](int rank_tokens) {
      const double all = static_cast<double>(rank_tokens) * dp;
      return (ag(dp, all * dispatch) + rs(dp, all * combine)) / nccl_eff;
    };
  } else if (k.tp > 1 && ctx.comm.tp_allreduce_s) {
    auto fn = ctx.comm.tp_allreduce_s;
    int tp = k.tp;
    NvlinkPath path = ctx.comm.tp_path;
    path.launch_s = launch_s;
    const TpAllReduceImpl impl = path.bw_Bps > 0 ? o.tp_allreduce : TpAllReduceImpl::kNccl;
    const CustomAllReduceParams ar = ctx.params.custom_allreduce;
    if (impl == TpAllReduceImpl::kTrtllm2024) {  // the 2024 kernels' traits (serve/allreduce.h)
      path.inflight_bytes = ar.inflight_bytes_2024;
      path.read_round_trip_s = ctx.params.RemoteReadRoundTrip2024(ctx.gpu->arch);
      path.copy_Bps = ctx.gpu->memory_Bps * ctx.calibration->For(ctx.gpu->arch).hbm_fraction;
    }
    // NCCL inside the engine's iteration: the standalone time over the arch's fitted efficiency.
    const double nccl_eff = ctx.params.NcclInEngineEfficiency(ctx.gpu->arch);
    p.cost.tp_allreduce_s = [fn, tp, path, impl, ar, nccl_eff](double bytes, int tokens) {
      const TpAllReduceAlgo a = ChooseTpAllReduce(impl, tp, bytes, tokens, ar);
      return a == TpAllReduceAlgo::kNccl ? fn(tp, bytes) / nccl_eff
                                         : CustomAllReduceTime(a, tp, bytes, path);
    };
  }
  if (k.pp > 1 && ctx.comm.pp_sends_s) {
    // Each boundary's hops over every replica, one per kind (same VM, same NVLink domain,
    // across domains): the engines step together, so a boundary costs its slowest hop.
    const int vm_gpus = ctx.sku->gpus;
    const int domain_gpus = std::max(1, ctx.sku->vms_per_nvlink_domain) * vm_gpus;
    std::vector<std::vector<std::pair<int, int>>> hops(k.pp - 1);
    for (int s = 1; s < k.pp; ++s) {
      bool seen[3] = {false, false, false};
      for (int r = 0; r < replicas; ++r) {
        const int src = StageFirstGpu(r, s - 1, k.tp, k.pp, vm_gpus, domain_gpus) + k.tp - 1;
        const int dst = StageFirstGpu(r, s, k.tp, k.pp, vm_gpus, domain_gpus);
        const int kind = src / vm_gpus == dst / vm_gpus           ? 0
                         : src / domain_gpus == dst / domain_gpus ? 1
                                                                  : 2;
        if (seen[kind]) continue;
        seen[kind] = true;
        hops[s - 1].push_back({src, dst});
      }
    }
    auto fn = ctx.comm.pp_sends_s;
    p.cost.pp_sends_s = [fn, hops](double bytes) { return fn(hops, bytes); };
  }
  return p;
}

double Objective(const InferResult& r) { return r.output_tokens_per_s; }

// One deployment of the knob search.
struct Candidate {
  DeploymentPlan plan;
  InferResult quick;                   // the quick offline run: no scenario runs faster on the plan
  double obj = -1;                     // the scenario's objective; -1: misses the SLO, or pruned
  Status slo = Status::Ok();           // why it misses the SLO
  double slo_rps = 0;                  // the quick search's highest rate within the SLO
  std::optional<InferResult> slo_run;  // that search's result, when run in full
};

// The first candidate (enumeration order puts the smaller deployment first) whose objective is
// within kTie of the best, so near-ties do not depend on the order of evaluation; -1 if none.
int PickBest(const std::vector<Candidate>& cands) {
  double best = -1;
  for (const Candidate& c : cands) best = std::max(best, c.obj);
  if (best < 0) return -1;
  for (size_t i = 0; i < cands.size(); ++i) {
    if (cands[i].obj >= 0 && cands[i].obj * kTie >= best) return static_cast<int>(i);
  }
  return -1;
}

// Server/interactive without a rate: each candidate's objective becomes its throughput at the
// highest rate within the p99 limits (a quick bisection). Candidates go best offline rate first,
// and one whose offline rate (times kSloBoundSlack, for the two runs' different request samples)
// cannot beat the best found is not searched: a Poisson stream never fills an engine more than
// offline does (serve/scenario.h; over the catalog's Llama models on H100 the SLO rate came to
// 0.26-1.017x the quick offline one). This keeps the search to a few of the 20 candidates.
// `full`: each rate search runs in full at the user's --requests (small counts, see Choose), and
// every candidate is searched (the offline bound rests on steady-state runs).
void ScoreAtSlo(const InferOptions& o, double ttft, double tpot, bool full,
                std::vector<Candidate>* level) {
  std::vector<size_t> order(level->size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return (*level)[a].obj > (*level)[b].obj; });
  double best = -1;
  for (size_t i : order) {
    Candidate& c = (*level)[i];
    const double bound = c.obj * kSloBoundSlack;
    c.obj = -1;
    if (!full && best > 0 && bound * kTie < best) continue;
    StatusOr<InferResult> r = SearchRate(c.plan, o, ttft, tpot, !full, c.quick.requests_per_s, 0);
    if (!r.ok()) {
      c.slo = r.status();
      continue;
    }
    c.obj = Objective(*r);
    c.slo_rps = r->qps;
    if (full) c.slo_run = *r;
    best = std::max(best, c.obj);
  }
}

// An MoE model whose TP is searched (no --tp, --ep, --max-batch, --pp > 1, --disaggregate) tries
// attention data parallelism over 2, 4, 8 GPUs of the NVLink domain dividing its experts, at
// the same total batches as the TP candidates (per rank: batch / ranks, at least 16), so the
// search costs what it did per candidate. They go after the TP candidates: within kTie the TP
// deployment keeps its place (PickBest keeps the first). A memory failure is kept only if none
// was seen (the TP candidates' message is the user's).
void AddAttentionDp(const InferContext& ctx, const InferOptions& o, const std::vector<int>& batches,
                    int mnt, std::vector<Candidate>* level, Status* fit_error) {
  // A given --max-batch is an engine's, where attention-DP's is a rank's: not guessed at.
  if (o.attention_dp || !ctx.model->is_moe() || o.tp != 0 || o.ep > 1 || o.pp > 1 ||
      o.max_batch > 0 || o.disaggregate_prefill > 0) {
    return;
  }
  const int domain = std::min(ctx.sku->nvlink_domain_gpus, ctx.sku->gpus * o.vms);
  for (int t = 2; t <= std::min(domain, 8); t *= 2) {
    if (ctx.model->moe.experts % t != 0) continue;
    for (int b : batches) {
      const int per_rank = std::max(16, b / t);
      StatusOr<DeploymentPlan> plan = MakeDeploymentPlan(ctx, o, {t, 1, per_rank, mnt, true});
      if (!plan.ok()) {
        if (fit_error->ok()) *fit_error = plan.status();
        break;
      }
      level->push_back({*plan, {}, -1, Status::Ok(), 0, std::nullopt});
    }
  }
}

}  // namespace

// Chooses TP, PP, the batch and the token budget not given in `o` (a search over powers of two;
// PP only when nothing fits with fewer stages).
StatusOr<Choice> Choose(const InferContext& ctx, const InferOptions& o, double ttft, double tpot) {
  const bool latency = o.scenario != Scenario::kOffline;
  std::vector<int> tps, pps, batches;
  const int domain = std::min(ctx.sku->nvlink_domain_gpus, ctx.sku->gpus * o.vms);
  if (o.tp > 0)
    tps = {o.tp};
  else
    for (int t = 1; t <= std::min(domain, 8); t *= 2) {
      // A TP the user could not give (--tp 8 of a 60-head model is refused) is no candidate;
      // attention-DP splits no heads but the experts, over at least 2 ranks.
      if (o.attention_dp ? t >= 2 && ctx.model->moe.experts % t == 0
                         : TpSplitsHeads(*ctx.model, t)) {
        tps.push_back(t);
      }
    }
  if (o.pp > 0)
    pps = {o.pp};
  else
    pps = o.attention_dp ? std::vector<int>{1} : std::vector<int>{1, 2, 4, 8};
  if (o.max_batch > 0)
    batches = {o.max_batch};
  else
    batches = {128, 256, 512, 1024, 2048};
  const int mnt = o.max_num_tokens > 0 ? o.max_num_tokens : kDefaultMaxNumTokens;
  const bool search = tps.size() * batches.size() > 1 || o.pp == 0;

  Status fit_error = Status::Ok(), slo_error = Status::Ok();
  const int total_gpus = ctx.sku->gpus * o.vms;
  for (int pp : pps) {
    std::vector<Candidate> level;  // PP fixed; TP, then batch, ascending
    for (int tp : tps) {
      // A searched (not given) shape larger than the cluster is no candidate; its error would
      // hide the real one (weights that do not fit).
      if ((o.tp == 0 || o.pp == 0) && tp * pp > total_gpus && !fit_error.ok()) continue;
      for (int b : batches) {
        StatusOr<DeploymentPlan> plan = MakeDeploymentPlan(ctx, o, {tp, pp, b, mnt});
        if (!plan.ok()) {
          fit_error = plan.status();
          break;  // a larger batch does not change feasibility of (tp, pp)
        }
        level.push_back({*plan, {}, -1, Status::Ok(), 0, std::nullopt});
      }
    }
    if (pp == 1) AddAttentionDp(ctx, o, batches, mnt, &level, &fit_error);
    if (level.empty()) continue;
    if (!search) return Choice{level[0].plan, 0, 0, std::nullopt};
    if (o.progress) {
      o.progress("infer: scoring " + std::to_string(level.size()) + " deployments with pp " +
                 std::to_string(pp));
    }
    for (Candidate& c : level) {
      c.quick = Offline(c.plan, o, true);
      c.obj = Objective(c.quick);
    }
    // A small --requests (no more than each quick run simulated) ends the full runs before
    // steady state, where the quick ranking does not hold (GB300 llama3-70b fp4, --requests 256:
    // offline, the screen's TP1 runs 8,267 tok/s in full and TP2 9,069; server, 6,489 and
    // 7,121): every candidate then runs in full at the user's count, no dearer than the screen,
    // and the best full run decides.
    const bool full_screen =
        o.requests > 0 && std::all_of(level.begin(), level.end(), [&](const Candidate& c) {
          return o.requests <= c.quick.requests_simulated;
        });
    if (latency && o.qps <= 0 && o.trace.empty()) {
      ScoreAtSlo(o, ttft, tpot, full_screen, &level);
      for (const Candidate& c : level) {
        if (slo_error.ok() && !c.slo.ok()) slo_error = c.slo;
      }
    }
    const int best = PickBest(level);
    if (best < 0) continue;  // all miss the SLO: PP may help
    Choice choice{level[best].plan, level[best].quick.requests_per_s, level[best].slo_rps,
                  level[best].slo_run};
    if (latency || !o.trace.empty() || level.size() < 2 || o.disaggregate_prefill > 0) {
      return choice;
    }
    // The quick runs rank candidates on a few batches' worth of requests, which under-rates
    // large batches (they barely reach steady state); the best few are re-run in full and the
    // full throughput decides (llama2-70b on one H100 VM: TP2 batch 256 ranked first, TP4 batch
    // 1024 is 21% faster in full).
    const size_t rescored = full_screen ? level.size() : kRescoredCandidates;
    std::vector<size_t> order(level.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return level[a].obj > level[b].obj; });
    if (o.progress) {
      o.progress("infer: running the best " + std::to_string(std::min(order.size(), rescored)) +
                 " in full");
    }
    for (size_t k = 0; k < order.size() && k < rescored; ++k) {
      const Candidate& c = level[order[k]];
      InferResult r = Offline(c.plan, o, false);
      if (!choice.full || Objective(r) > Objective(*choice.full) * kTie) {
        choice = {c.plan, c.quick.requests_per_s, 0, r};
      }
    }
    return choice;
  }
  if (slo_error.ok() && o.tp == 0 && o.pp == 0 && !fit_error.ok()) {
    // Advise only precisions narrower than the one given (--weights fp8 was told "fp8, fp4").
    const std::string narrower = NarrowerWeights(o.weights);
    // Every TP x PP the cluster offers was tried: more parallelism is not the fix.
    if (!ctx.sku->infiniband) {
      // Without InfiniBand a replica stays in one VM (CountReplicas), so more VMs add replicas,
      // never GPUs to one: only a size with InfiniBand or more GPU memory, or fewer bytes per
      // weight, can hold it.
      return fit_error.WithMessage(
          fit_error.Reason() + "; no TP x PP within one VM of " + ctx.sku->name + " (" +
          std::to_string(ctx.sku->gpus) +
          " GPUs; a replica cannot span VMs without InfiniBand) holds it: use a --sku with "
          "InfiniBand or more GPU memory" +
          (narrower.empty() ? "" : ", or lower --weights (" + narrower + ")") +
          "; more --vms cannot help");
    }
    return fit_error.WithMessage(
        fit_error.Reason() + "; no TP x PP on " + std::to_string(total_gpus) +
        " GPUs holds it: add --vms" +
        (narrower.empty() ? "" : ", or use lower --weights (" + narrower + ")"));
  }
  return slo_error.ok() ? fit_error : slo_error;
}

}  // namespace ndt
