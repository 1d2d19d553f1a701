#include "cmd/train_job.h"

#include <cstdio>
#include <string>
#include <utility>

#include "hw/catalog.h"
#include "parallel/cluster_costs.h"
#include "parallel/stack.h"
#include "plan/choose.h"
#include "topo/builders.h"

namespace ndt {
namespace {

// The training stack called `name` in `stacks`, without copying it (a sweep asks per point);
// FindStack's error when there is none.
StatusOr<const SoftwareStack*> TrainStack(const std::vector<SoftwareStack>& stacks,
                                          const std::string& name) {
  for (const SoftwareStack& st : stacks) {
    if (st.kind == StackKind::kTraining && st.name == name) return &st;
  }
  NDT_RETURN_IF_ERROR(FindStack(stacks, name, StackKind::kTraining).status());
  return Status::Internal("stack '" + name + "' found by FindStack only");
}

Status BuildStrategy(const TrainJobArgs& f, const std::vector<SoftwareStack>& stacks, TrainJob* job,
                     const SoftwareStack** stack_out, StrategyKnobs* user_out,
                     TrainSearchSpace* space) {
  Strategy& s = job->strategy;
  if (f.gbs < 1) return Status::InvalidInput("--gbs (global batch, sequences) must be >= 1");
  for (const auto& [name, v] :
       {std::pair{"--dp", f.dp ? std::optional<int64_t>(*f.dp) : std::nullopt},
        std::pair{"--mbs", f.mbs},
        std::pair{"--vpp", f.vpp ? std::optional<int64_t>(*f.vpp) : std::nullopt}}) {
    if (v.has_value() && *v < 1) {
      return Status::InvalidInput(std::string(name) + " must be >= 1 (got " + std::to_string(*v) +
                                  "); omit it to choose it automatically");
    }
  }
  s.gbs = f.gbs;
  s.tp = f.tp.value_or(1);
  s.pp = f.pp.value_or(1);
  s.dp = f.dp.value_or(0);
  s.cp = f.cp;
  s.ep = f.ep.value_or(1);
  job->mbs_given = f.mbs.has_value();
  s.mbs = f.mbs.value_or(1);
  job->vpp_given = f.vpp.has_value() || s.pp == 1;
  s.vpp = f.vpp.value_or(1);
  // The stack fills every knob the user did not give (parallel/stack.h).
  StrategyKnobs user;
  if (f.recompute.has_value()) {
    Recompute r;
    if (!ParseRecompute(*f.recompute, &r)) {
      return Status::InvalidInput("--recompute '" + *f.recompute +
                                  "'; use none, selective or full");
    }
    user.recompute = r;
  }
  if (f.precision.has_value()) {
    Dtype d;
    if (!ParseDtype(*f.precision, &d) || d == Dtype::kFp32 || d == Dtype::kFp4) {
      return Status::InvalidInput("--precision '" + *f.precision + "'; use bf16, fp16 or fp8");
    }
    user.precision = d;
  }
  if (f.sp.has_value()) user.sp = *f.sp;
  if (f.tp_overlap.has_value()) user.tp_overlap = *f.tp_overlap;
  if (f.zero.has_value()) user.zero = *f.zero;
  if (f.no_flash_attn.has_value()) user.flash_attention = false;
  if (f.attention_kernel.has_value()) {
    // hopper_fused: the older name of cudnn_fused, still accepted.
    if (*f.attention_kernel != "fa2" && *f.attention_kernel != "cudnn_fused" &&
        *f.attention_kernel != "hopper_fused") {
      return Status::InvalidInput("--attention-kernel '" + *f.attention_kernel +
                                  "'; use fa2 or cudnn_fused");
    }
    user.attention_kernel =
        *f.attention_kernel == "fa2" ? AttentionKernel::kFlash2 : AttentionKernel::kCudnnFused;
  }
  if (f.no_dp_overlap.has_value()) user.overlap_dp = false;
  if (f.no_grad_accum_fusion.has_value()) user.grad_accum_fusion = false;
  if (f.uneven_stages.has_value()) user.uneven_stages = *f.uneven_stages;
  if (f.cp_comm.has_value()) {
    CpComm c;
    if (!ParseCpComm(*f.cp_comm, &c)) {
      return Status::InvalidInput("--cp-comm '" + *f.cp_comm + "'; use ring or all_gather");
    }
    user.cp_comm = c;
  }
  NDT_ASSIGN_OR_RETURN(const SoftwareStack* stack, TrainStack(stacks, f.stack));
  ApplyTrainStack(*stack, user, &s);
  *stack_out = stack;
  *user_out = user;
  space->tp = f.tp;
  space->pp = f.pp;
  space->dp = f.dp;
  space->ep = f.ep;
  space->zero = user.zero;
  space->recompute = user.recompute;
  space->sp = user.sp;
  space->tp_overlap = user.tp_overlap;
  // Stages that do not divide the layers only when asked (--uneven-stages), as Megatron-LM.
  space->allow_uneven = false;
  const std::string schedule = f.schedule.value_or("1f1b");
  if (!ParsePipeSchedule(schedule, &s.schedule)) {
    return Status::InvalidInput("--schedule '" + schedule +
                                "'; use gpipe, 1f1b or interleaved (with --vpp > 1)");
  }
  if (f.vpp.value_or(0) > 1 && f.schedule.has_value() && s.schedule != PipeSchedule::kInterleaved) {
    return Status::InvalidInput("--vpp " + std::to_string(*f.vpp) + " interleaves the pipeline; " +
                                "drop --schedule " + schedule + " or use --vpp 1");
  }
  // GPipe has no interleaved form: --schedule gpipe keeps one chunk per stage (the vpp search
  // would turn it into interleaved 1F1B).
  if (s.schedule == PipeSchedule::kGpipe) job->vpp_given = true;
  if (!f.order.empty()) {
    NDT_ASSIGN_OR_RETURN(const RankOrder order, ParseOrder(f.order));
    s.order = order.axes;
    s.ep_outer = order.ep_outer;
  }
  if (f.tokens < 0) return Status::InvalidInput("--tokens must be >= 0");
  job->tokens = f.tokens;
  return Status::Ok();
}

}  // namespace

void TrainJobArgs::Declare(OptionList* o, bool required) {
  Option& sku_opt = o->Add("sku", &sku, "VM size (see: ndtwin sku list)");
  if (required) sku_opt.Required();
  o->Add("vms", &vms, "Number of VMs (default 1)");
  model.Declare(o);
  Option& gbs_opt = o->Add("gbs", &gbs, "Global batch (sequences per iteration)");
  if (required) gbs_opt.Required();
  o->Add("mbs", &mbs, "Micro-batch size (default: best feasible)");
  o->Add("tp", &tp, "Tensor parallel degree (default: best feasible)");
  o->Add("pp", &pp, "Pipeline parallel degree (default: best feasible)");
  o->Add("dp", &dp, "Data parallel degree (default: GPUs / (tp*pp*cp))");
  o->Add("vpp", &vpp, "Model chunks per stage, interleaved 1F1B (default: best)");
  o->Add("cp", &cp, "Context parallel degree (default 1)");
  o->Add("cp-comm", &cp_comm,
         "ring (P2P, overlapped with attention) | all_gather (Llama 3) (default: the stack's, "
         "else ring)");
  o->Add("ep", &ep,
         "Expert parallel degree, MoE (default: the best feasible when the strategy is searched, "
         "else 1)");
  o->Add("sp", &sp, "Sequence parallelism (with --tp > 1)");
  o->Add("attention-kernel", &attention_kernel,
         "Fused attention kernel: fa2 | cudnn_fused (cuDNN's, Hopper and Blackwell) (default: the "
         "stack's)");
  o->Add("tp-overlap", &tp_overlap,
         "Overlap TP communication with the GEMMs (Megatron --tp-comm-overlap; needs --sp)");
  o->Add("uneven-stages", &uneven_stages,
         "Allow layers not divisible by pp*vpp: the first and last stages get fewer "
         "(default: the stack's, else off)");
  o->Add("recompute", &recompute,
         "none | selective | full (default: the stack's, else the best feasible)");
  o->Add("zero", &zero, "ZeRO stage 0-3 (default: the stack's, else the best feasible)");
  o->Add("precision", &precision, "bf16 | fp16 | fp8 (default: the stack's)");
  o->Add("stack", &stack,
         std::string("Software stack, a dated preset of knobs and traits from data/stacks/ "
                     "(default ") +
             kDefaultTrainStack + "); flags beat it");
  o->Add("schedule", &schedule, "gpipe | 1f1b (default; interleaved with --vpp)");
  o->Add("fidelity", &fidelity,
         "analytical | flow | estimate (the planner's closed form; default analytical)");
  o->Add("order", &order,
         "Rank order, fastest first (default tp,cp,ep,dp,pp; ep next to dp: tp,cp,dp,ep,pp "
         "strides the expert groups over DP)");
  o->Add("no-flash-attn", &no_flash_attn, "Unfused attention (Megatron-LM before FlashAttention)");
  o->Add("no-dp-overlap", &no_dp_overlap, "Reduce gradients after the backward");
  o->Add("no-grad-accum-fusion", &no_grad_accum_fusion,
         "Accumulate weight gradients in a separate kernel per micro-batch (before "
         "Megatron-LM's gradient_accumulation_fusion)");
  o->Add("tokens", &tokens, "Training tokens: print time to train and cost");
  DeclareGpuVariability(o, &gpu_variability);
  fabric.Declare(o);
  prices.Declare(o);
}

void DeclareGpuVariability(OptionList* o, bool* on) {
  o->Add("gpu-variability", on,
         "Wait each step for the slowest GPU of the job, GPUs spread as data/variability.yaml "
         "says (default on; --gpu-variability=false: every GPU at the median's speed)");
}

void TrainPointRequest::Declare(OptionList* o) {
  job.Declare(o, /*required=*/true);
  o->Add("trace", &trace, "Write a Chrome/Perfetto trace of the step to FILE").LocalFile();
  RangeTrainOptions(o);
}

bool SameOptions(CommandRequest& a, CommandRequest& b) {
  OptionList x, y;
  a.Declare(&x);
  b.Declare(&y);
  // Report-only flags (Option::ForReport: chart data for --report) are not sweepable.
  std::vector<const Option*> xs, ys;
  for (const Option& o : x.options())
    if (!o.for_report) xs.push_back(&o);
  for (const Option& o : y.options())
    if (!o.for_report) ys.push_back(&o);
  if (xs.size() != ys.size()) return false;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Option& p = *xs[i];
    const Option& q = *ys[i];
    if (p.name != q.name || p.field.index() != q.field.index() || p.required != q.required ||
        p.positional != q.positional || p.local_file != q.local_file || p.min != q.min ||
        p.max != q.max || p.range_note != q.range_note) {
      return false;
    }
  }
  Json vx = OptionValues(x), vy = OptionValues(y);
  for (const Option& o : x.options())
    if (o.for_report) vx.erase(o.name);
  for (const Option& o : y.options())
    if (o.for_report) vy.erase(o.name);
  return vx == vy;
}

namespace {

// Clusters a cache keeps at most (GPUs over all of them; a 2,048-VM ND cluster has 16,384): past
// it the cache starts again (points in flight keep theirs).
constexpr int64_t kMaxCachedClusterGpus = int64_t{1} << 20;

template <typename T>
void KeyPart(std::string* key, const std::optional<T>& v) {
  if (v.has_value()) {
    *key += std::to_string(*v);
  } else {
    *key += '-';
  }
  *key += '|';
}

}  // namespace

StatusOr<std::shared_ptr<const TransformerSpec>> TrainJobCache::Model(const Context& ctx,
                                                                      const ModelArgs& m) {
  const Context* at = &ctx;
  std::string key(reinterpret_cast<const char*>(&at), sizeof at);
  key += m.model + '|' + m.model_file + '|' + m.hf_config + '|';
  for (const std::optional<int64_t>* v :
       {&m.layers, &m.hidden, &m.heads, &m.kv_heads, &m.ffn, &m.vocab, &m.seq}) {
    KeyPart(&key, *v);
  }
  key += m.arch.has_value() ? "a" + *m.arch : "-";
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(key);
  if (it == models_.end()) {
    ModelEntry e;
    StatusOr<TransformerSpec> r = m.Resolve(ctx);
    if (r.ok()) {
      e.model = std::make_shared<const TransformerSpec>(std::move(*r));
    } else {
      e.status = r.status();
    }
    it = models_.emplace(key, std::move(e)).first;
  }
  if (!it->second.status.ok()) return it->second.status;
  return it->second.model;
}

StatusOr<const SkuSpec*> TrainJobCache::Sku(const Context& ctx, const std::string& name,
                                            const GpuSpec** gpu) {
  std::lock_guard<std::mutex> lock(mu_);
  auto key = std::make_pair(&ctx, name);
  auto it = skus_.find(key);
  if (it == skus_.end()) {
    SkuEntry e;
    StatusOr<const SkuSpec*> r = ctx.catalog.FindSku(name);
    if (r.ok()) {
      e.sku = *r;
      e.gpu = &ctx.catalog.GpuOf(**r);
    } else {
      e.status = r.status();
    }
    it = skus_.emplace(std::move(key), std::move(e)).first;
  }
  if (!it->second.status.ok()) return it->second.status;
  if (gpu != nullptr) *gpu = it->second.gpu;
  return it->second.sku;
}

std::shared_ptr<const TrainJobCache::BuiltCluster> TrainJobCache::ClusterFor(
    const Context& ctx, const ClusterSpec& cs, const FabricArgs& fabric) {
  // The Context's address too: the cluster keeps pointers into its catalog.
  const Context* at = &ctx;
  std::string key(reinterpret_cast<const char*>(&at), sizeof at);
  key += cs.sku->name + '|' + std::to_string(cs.vms) + '|' + std::to_string(cs.gpus_per_vm) + '|' +
         std::to_string(fabric.tiers) + '|';
  KeyPart(&key, fabric.radix);
  key += std::to_string(fabric.vms_per_leaf) + '|' + (fabric.ecmp_spread ? "e|" : "-|");
  key.append(reinterpret_cast<const char*>(&fabric.oversubscription), sizeof(double));
  std::lock_guard<std::mutex> lock(mu_);
  auto it = clusters_.find(key);
  if (it != clusters_.end()) return it->second;
  auto b = std::make_shared<BuiltCluster>();
  ClusterSpec spec = cs;
  b->note = fabric.Apply(&spec);
  StatusOr<Cluster> c = BuildCluster(spec, ctx.fabric);
  int64_t gpus = 0;
  if (c.ok()) {
    gpus = c->num_gpus();
    b->cluster = std::make_shared<const Cluster>(std::move(*c));
  } else {
    b->status = c.status();
  }
  if (cluster_gpus_ + gpus > kMaxCachedClusterGpus) {
    clusters_.clear();
    cluster_gpus_ = 0;
  }
  cluster_gpus_ += gpus;
  return clusters_.emplace(key, std::move(b)).first->second;
}

size_t TrainJobCache::models() const {
  std::lock_guard<std::mutex> lock(mu_);
  return models_.size();
}

size_t TrainJobCache::clusters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return clusters_.size();
}

StatusOr<SimulatedTrainJob> SimulateTrainJob(const Context& ctx, const TrainJobArgs& f,
                                             bool want_trace, Diagnostics* diag,
                                             TrainJobCache* cache) {
  const Catalog& cat = ctx.catalog;
  if (f.sku.empty()) return Status::InvalidInput("--sku is required (see: ndtwin sku list)");
  const GpuSpec* cached_gpu = nullptr;
  NDT_ASSIGN_OR_RETURN(const SkuSpec* sku,
                       cache != nullptr ? cache->Sku(ctx, f.sku, &cached_gpu) : cat.FindSku(f.sku));
  if (f.vms < 1) return Status::InvalidInput("--vms must be >= 1");
  std::shared_ptr<const TransformerSpec> cached_model;
  if (cache != nullptr) {
    NDT_ASSIGN_OR_RETURN(cached_model, cache->Model(ctx, f.model));
  } else {
    NDT_ASSIGN_OR_RETURN(TransformerSpec resolved, f.model.Resolve(ctx));
    cached_model = std::make_shared<const TransformerSpec>(std::move(resolved));
  }
  const TransformerSpec& model = *cached_model;
  // estimate: the planner's first pass, the closed form of parallel/step_estimate.h over the
  // analytical costs (mbs and vpp chosen by it too), no task graph: what sweeps use for speed.
  const bool estimate = f.fidelity == "estimate";
  Fidelity fidelity = Fidelity::kAnalytical;
  if (!estimate && !ParseFidelity(f.fidelity, &fidelity)) {
    return Status::InvalidInput("--fidelity '" + f.fidelity +
                                "'; use analytical, flow or estimate");
  }
  TrainJob job;
  job.model = model;
  const SoftwareStack* stack = nullptr;
  StrategyKnobs user;
  TrainSearchSpace space;
  NDT_RETURN_IF_ERROR(BuildStrategy(f, ctx.stacks, &job, &stack, &user, &space));
  job.zero_stages = stack->zero_stages;
  job.closed_form_search = estimate;
  job.want_trace = want_trace;
  const GpuSpec& gpu = cached_gpu != nullptr ? *cached_gpu : cat.GpuOf(*sku);
  if (f.vms > 1 && !sku->infiniband && sku->nvlink_domain_gpus <= sku->gpus) {
    return Status::InvalidInput(sku->name +
                                " has no InfiniBand: training across VMs needs a scale-out "
                                "network; use --vms 1 or a size with InfiniBand");
  }
  NDT_RETURN_IF_ERROR(CheckTrainPrecision(gpu, job.strategy.precision));
  if (const std::string note = PrecisionNote(gpu, job.strategy.precision); !note.empty()) {
    diag->Warn(note);
  }
  ClusterSpec cs;
  cs.sku = sku;
  cs.gpu = &gpu;
  cs.vms = f.vms;
  Cluster built;
  std::shared_ptr<const Cluster> shared;
  if (cache != nullptr) {
    const std::shared_ptr<const TrainJobCache::BuiltCluster> b =
        cache->ClusterFor(ctx, cs, f.fabric);
    if (!b->note.empty()) diag->Warn(b->note);
    if (!b->status.ok()) return b->status;
    shared = b->cluster;
  } else {
    if (const std::string a = f.fabric.Apply(&cs); !a.empty()) diag->Warn(a);
    NDT_ASSIGN_OR_RETURN(built, BuildCluster(cs, ctx.fabric));
  }
  const Cluster& cluster = shared ? *shared : built;
  job.num_gpus = cluster.num_gpus();
  job.gpus_per_vm = cluster.gpus_per_vm();
  job.nvlink_domain_gpus = cluster.nvlink_domain_gpus();
  job.gpu_memory_bytes = gpu.memory_bytes;  // what CUDA can allocate (data/gpus)
  NDT_ASSIGN_OR_RETURN(job.memory_reserve, ctx.memory_reserve.For(gpu.arch));
  job.vm_usd_per_hour = sku->price ? sku->price->usd_per_hour : 0;
  if (f.gpu_variability) job.gpu_variability = ctx.variability.For(gpu.arch);
  SimulatedTrainJob out;
  {
    ClusterCosts costs(cluster, ctx.compute, ctx.nccl, job.strategy.precision, fidelity);
    std::vector<std::string> chosen;
    // Omitted knobs: the fastest feasible, chosen on analytical costs (plan/choose.h), then run
    // at the fidelity asked. With tp and pp given the job runs as given first, and the search
    // (ZeRO and recompute beyond the stack's) only runs when that does not fit.
    // `as_given`: the job's own failed run on `costs`, when the search scores on `costs` too.
    auto choose = [&](const Status* as_given) -> Status {
      std::optional<ClusterCosts> fast;
      if (fidelity != Fidelity::kAnalytical) {
        fast.emplace(cluster, ctx.compute, ctx.nccl, job.strategy.precision, Fidelity::kAnalytical);
      }
      NDT_ASSIGN_OR_RETURN(TrainChoice choice,
                           ChooseTrainStrategy(job, fast ? *fast : costs, space, *stack, user,
                                               fast ? nullptr : as_given));
      job.strategy = choice.strategy;
      job.vpp_given = f.vpp.has_value() || job.strategy.schedule == PipeSchedule::kGpipe ||
                      job.strategy.pp == 1;
      chosen = choice.chosen;
      return Status::Ok();
    };
    const bool shape_given = space.tp.has_value() && space.pp.has_value();
    if (!shape_given) NDT_RETURN_IF_ERROR(choose(nullptr));
    StatusOr<TrainReport> run = RunTraining(job, costs);
    if (shape_given && !run.ok() && run.status().code() == StatusCode::kDoesNotFit &&
        NeedsChoice(space)) {
      const Status as_given = run.status();
      NDT_RETURN_IF_ERROR(choose(&as_given));
      run = RunTraining(job, costs);
    }
    if (!run.ok()) return run.status();
    out.report = std::move(*run);
    out.report.chosen.insert(out.report.chosen.begin(), chosen.begin(), chosen.end());
  }
  for (const std::string& w : out.report.warnings) diag->Warn(w);
  out.sku = sku;
  if (shared) {
    out.shared_cluster = std::move(shared);
  } else {
    out.cluster = std::move(built);
  }
  out.job = std::move(job);
  return out;
}

}  // namespace ndt
