// File: plan/plan_infer.cc
// Inference planning; see plan_infer.h.
#include "plan/plan_infer.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "compute/compute.h"
#include "serve/deployment.h"
#include "serve/run.h"

namespace ndt {
namespace {

constexpr int kMaxPlanRequests = 100000;

struct Candidate {
  const SkuSpec* sku;
  int vms;
  Dtype weights;
};

// The precisions a GPU computes natively, narrowest last: fp16 always, then fp8 and fp4.
std::vector<Dtype> NativeWeights(const GpuSpec& g) {
  std::vector<Dtype> out = {Dtype::kFp16};
  if (g.PeakFlops(Precision::kFp8) > 0) out.push_back(Dtype::kFp8);
  if (g.PeakFlops(Precision::kFp4) > 0) out.push_back(Dtype::kFp4);
  return out;
}

// Every (size, precision) pair failed: the commonest kind of failure, the first message of that
// kind (cut at its advice) and inference's fix (plan.h's NoneFeasible advises training flags);
// `narrowest` is the narrowest weight precision tried: only narrower ones are advised.
Status NoneServes(const std::vector<Status>& failures, Dtype narrowest) {
  enum Kind { kMemory, kSlo, kOther, kKinds };
  auto kind = [](const Status& s) {
    if (s.code() == StatusCode::kDoesNotFit) return kMemory;
    if (s.code() == StatusCode::kSloUnmet) return kSlo;
    return kOther;
  };
  int count[kKinds] = {0, 0, 0};
  for (const Status& s : failures) ++count[kind(s)];
  const Kind top = static_cast<Kind>(std::max_element(count, count + kKinds) - count);
  std::string example;
  for (const Status& s : failures) {
    if (kind(s) == top) {
      example = s.Reason();
      break;
    }
  }
  const std::string narrower = NarrowerWeights(narrowest);
  const std::string memory_fix =
      "try more GPUs (--gpus/--vms)" +
      (narrower.empty() ? std::string(" or") : ", narrower --weights (" + narrower + ") or") +
      " a size with more GPU memory";
  const std::string kFix[kKinds] = {
      memory_fix,
      "try more GPUs (--gpus/--vms) or a scenario with looser limits (--scenario server, "
      "offline)",
      "try another --gpus/--vms or --sku"};
  return Status::Infeasible("no (size, precision) pair serves the model among " +
                            std::to_string(failures.size()) + "; most common reason (" +
                            std::to_string(count[top]) + "): " + example + "; " + kFix[top]);
}

// Smaller is better.
double Score(const PlanInferResult& r, PlanInferObjective o) {
  return o == PlanInferObjective::kCost ? r.usd_per_million_tokens : -r.tokens_per_s;
}

// One line when the pairs that ran span architectures whose serving host cost per iteration
// comes from different places: fitted on serving measurements for some (compute.yaml `serving`:
// Hopper's 11.44 ms per 80-layer iteration launched kernel by kernel, TensorRT-LLM's executor),
// data/serve/engine.yaml's assumed iteration_overhead for the others (Ampere, Volta). The host
// work is the serving software's and the host CPU's, not the GPU's; where it weighs (iterations
// that are not one CUDA graph: prefill and mixed ones, many of a short run), and with per-kernel
// constants fitted on each architecture's own microbenchmarks (a small model's decode is a few
// hundred tiny kernels), the order between those architectures is the calibrations' as much as
// the hardware's: said, so a tiny model's H100 below A100 at few --requests reads as such.
std::string HostCostNote(const ServeData& data, const std::vector<PlanInferResult>& ran) {
  std::map<std::string, double> fitted;  // arch -> fitted iteration_overhead_s
  std::set<std::string> assumed;
  for (const PlanInferResult& r : ran) {
    StatusOr<const SkuSpec*> sku = data.catalog->FindSku(r.sku);
    if (!sku.ok()) continue;
    const std::string& arch = data.catalog->GpuOf(**sku).arch;
    if (const auto& fit = data.compute->For(arch).serving; fit) {
      fitted[arch] = fit->iteration_overhead_s;
    } else {
      assumed.insert(arch);
    }
  }
  if (fitted.empty() || assumed.empty()) return "";
  std::string f, a;
  for (const auto& [arch, s] : fitted) {
    f += (f.empty() ? "" : ", ") + arch + " " + fmt::format("{:.4g}", s * 1e3) + " ms";
  }
  for (const std::string& arch : assumed) a += (a.empty() ? "" : ", ") + arch;
  return "host cost per engine iteration (" +
         std::to_string(data.engine->host_overhead_reference_layers) +
         " layers, scaled by the model's) fitted on serving runs for " + f + ", assumed for " + a +
         " (data/serve/engine.yaml iteration_overhead " +
         fmt::format("{:.4g}", data.engine->iteration_overhead_s * 1e3) +
         " ms, not fitted): host time belongs to the serving software and the host CPU, not the "
         "GPU, so where it and per-kernel overheads weigh (small models, few --requests) these "
         "architectures rank by their calibrations as much as by their hardware";
}

}  // namespace

StatusOr<PlanInferReport> PlanInference(const ServeData& data, const PlanInferRequest& req,
                                        const PlanProgress& progress) {
  if (req.top_k < 1) return Status::InvalidInput("--top must be >= 1");
  if (req.gpus < 0 || req.vms < 0 || (req.gpus == 0 && req.vms == 0)) {
    return Status::InvalidInput("give --gpus N or --vms N (N >= 1)");
  }
  // Each pair runs its own deployment search, a dozen runs or more: past this the plan takes
  // minutes, and the automatic count (0) is already what `ndtwin infer` simulates.
  if (req.base.requests < 0 || req.base.requests > kMaxPlanRequests) {
    return Status::InvalidInput("--requests must be in 1.." + std::to_string(kMaxPlanRequests) +
                                " for plan infer (got " + std::to_string(req.base.requests) +
                                "); omit it for the automatic count");
  }
  NDT_RETURN_IF_ERROR(CheckServedContext(req.model, req.base));
  PlanInferReport rep;
  std::vector<Candidate> cands;
  std::vector<std::string> unpriced;
  for (const SkuSpec* sku : req.skus) {
    if (req.objective == PlanInferObjective::kCost && !sku->price) {
      unpriced.push_back(sku->name);
      rep.unpriced.push_back(sku->name);
      continue;
    }
    int vms = req.vms;
    if (req.gpus > 0) {
      if (req.gpus % sku->gpus != 0) {
        rep.notes.push_back(sku->name + ": " + std::to_string(sku->gpus) +
                            " GPUs per VM do not divide " + std::to_string(req.gpus) + "; skipped");
        continue;
      }
      vms = req.gpus / sku->gpus;
    }
    std::vector<Dtype> ws = req.weights;
    if (ws.empty()) ws = NativeWeights(data.catalog->GpuOf(*sku));
    for (Dtype w : ws) {
      cands.push_back({sku, vms, w});
      // What `ndtwin infer` says on stderr for a precision without tensor cores on the GPU
      // (weight-only quantization: fp8/fp4 storage, wider math), said once per pair here.
      if (const std::string n = PrecisionNote(data.catalog->GpuOf(*sku), w); !n.empty()) {
        rep.notes.push_back(sku->name + ": " + n);
      }
    }
  }
  if (!unpriced.empty()) {
    std::string list;
    for (const std::string& n : unpriced) list += (list.empty() ? "" : ", ") + n;
    rep.notes.push_back("no price, skipped (objective cost): " + list);
  }
  if (cands.empty()) {
    // Why, as plan train says it (plan.cc): the notes are not printed when the plan fails, and
    // "no size left to try" alone left a user guessing whether the count or the price was wrong.
    std::string why;
    for (size_t i = 0; i < rep.notes.size() && i < 2; ++i) why += (i ? "; " : "") + rep.notes[i];
    if (rep.notes.size() > 2) why += "; ...";
    return Status::InvalidInput(
        "no VM size can serve this request (" + why + "); try another --gpus/--vms or --sku" +
        (unpriced.empty() ? "" : ", or give a size its price with --price-per-hour"));
  }
  if (progress) {
    progress("plan: " + std::to_string(cands.size()) +
             " (size, precision) pairs, each with its "
             "own deployment search");
  }
  const int64_t n = static_cast<int64_t>(cands.size());
  std::vector<StatusOr<InferResult>> runs(cands.size(), Status::Internal("not run"));
#ifdef _OPENMP
  const int threads = PlanThreads(req.threads);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
#endif
  for (int64_t i = 0; i < n; ++i) {
    InferOptions o = req.base;
    o.vms = cands[i].vms;
    o.weights = cands[i].weights;
    o.kv = DefaultKv(o.weights);
    runs[i] = RunInferenceOn(data, cands[i].sku->name, req.model, o);
  }
  std::vector<Status> failures;
  std::vector<PlanInferResult> ok;
  for (int64_t i = 0; i < n; ++i) {
    ++rep.evaluated;
    if (!runs[i].ok()) {
      ++rep.infeasible;
      failures.push_back(runs[i].status());
      continue;
    }
    const InferResult& r = *runs[i];
    PlanInferResult p;
    p.index = static_cast<size_t>(i);
    p.sku = cands[i].sku->name;
    p.vms = cands[i].vms;
    p.gpus = cands[i].vms * cands[i].sku->gpus;
    p.weights = r.deployment.weights;
    p.kv = r.deployment.kv;
    p.deployment = r.deployment;
    p.tokens_per_s = r.output_tokens_per_s;
    p.tokens_per_s_per_gpu = r.per_gpu_output_tokens_per_s;
    p.ttft_p99_s = r.stats.ttft_s.p99;
    p.tpot_p99_s = r.stats.tpot_s.p99;
    p.priced = r.usd_per_million_tokens.has_value();
    p.usd_per_million_tokens = p.priced ? *r.usd_per_million_tokens : 0;
    // What `ndtwin infer` would print on stderr for this run (a capped run, an offered rate
    // beyond capacity) is the plan's note, named by its pair.
    for (const std::string& w : r.warnings) {
      rep.notes.push_back(p.sku + " x" + std::to_string(p.vms) + " " + DtypeName(p.weights) + ": " +
                          w);
    }
    // A GPU's accuracy caveat is said once, however many of its pairs ran.
    if (!r.caveat.empty() &&
        std::find(rep.notes.begin(), rep.notes.end(), r.caveat) == rep.notes.end()) {
      rep.notes.push_back(r.caveat);
    }
    ok.push_back(p);
  }
  if (ok.empty()) {
    Dtype narrowest = Dtype::kFp16;
    for (const Candidate& c : cands) {
      if (DtypeBytes(c.weights) < DtypeBytes(narrowest)) narrowest = c.weights;
    }
    return NoneServes(failures, narrowest);
  }
  if (const std::string n = HostCostNote(data, ok); !n.empty()) rep.notes.push_back(n);
  std::sort(ok.begin(), ok.end(), [&](const PlanInferResult& a, const PlanInferResult& b) {
    const double sa = Score(a, req.objective), sb = Score(b, req.objective);
    if (sa != sb) return sa < sb;
    return a.index < b.index;
  });
  rep.scored = ok;
  if (ok.size() > static_cast<size_t>(req.top_k)) ok.resize(req.top_k);
  rep.results = std::move(ok);
  return rep;
}

}  // namespace ndt
