// File: parallel/strategy.cc
// Strategy resolution and divisibility checks; see strategy.h (the rank mapping:
// strategy_ranks.cc).
#include "parallel/strategy.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <string>
#include <utility>

namespace ndt {

const char* PipeScheduleName(PipeSchedule s) {
  switch (s) {
    case PipeSchedule::kGpipe:
      return "gpipe";
    case PipeSchedule::kOneFOneB:
      return "1f1b";
    case PipeSchedule::kInterleaved:
      return "interleaved-1f1b";
  }
  return "?";
}

bool ParsePipeSchedule(const std::string& s, PipeSchedule* out) {
  if (s == "gpipe") {
    *out = PipeSchedule::kGpipe;
  } else if (s == "1f1b") {
    *out = PipeSchedule::kOneFOneB;
  } else if (s == "interleaved" || s == "interleaved-1f1b") {
    *out = PipeSchedule::kInterleaved;
  } else {
    return false;
  }
  return true;
}

const char* TrainingIntervalWorkload(const Strategy& s) {
  return s.zero == 3 && s.zero3.gather == Zero3Gather::kPerTensor ? "training-zero3" : "training";
}

const char* Zero3GatherName(Zero3Gather g) {
  return g == Zero3Gather::kPerTensor ? "per_tensor" : "per_block";
}

bool ParseZero3Gather(const std::string& s, Zero3Gather* out) {
  if (s == "per_block") {
    *out = Zero3Gather::kPerBlock;
  } else if (s == "per_tensor") {
    *out = Zero3Gather::kPerTensor;
  } else {
    return false;
  }
  return true;
}

const char* DimName(Axis d) {
  switch (d) {
    case Axis::kTp:
      return "tp";
    case Axis::kCp:
      return "cp";
    case Axis::kDp:
      return "dp";
    case Axis::kPp:
      return "pp";
  }
  return "?";
}

int Strategy::degree(Axis d) const {
  switch (d) {
    case Axis::kTp:
      return tp;
    case Axis::kCp:
      return cp;
    case Axis::kDp:
      return dp;
    case Axis::kPp:
      return pp;
  }
  return 1;
}

StatusOr<RankOrder> ParseOrder(const std::string& text) {
  RankOrder out;
  int n = 0;
  bool seen[4] = {false, false, false, false};
  // Position of "ep" and of "dp" among the tokens (ep counted), -1 when absent.
  int pos = 0, ep_pos = -1, dp_pos = -1;
  std::string tok;
  auto flush = [&]() -> Status {
    if (tok.empty()) return Status::Ok();
    Axis d;
    if (tok == "tp") {
      d = Axis::kTp;
    } else if (tok == "cp") {
      d = Axis::kCp;
    } else if (tok == "dp") {
      d = Axis::kDp;
      dp_pos = pos;
    } else if (tok == "pp") {
      d = Axis::kPp;
    } else if (tok == "ep") {
      if (ep_pos >= 0) return Status::InvalidInput("--order: 'ep' appears twice");
      ep_pos = pos++;
      tok.clear();
      return Status::Ok();
    } else {
      return Status::InvalidInput("--order: unknown dimension '" + tok +
                                  "'; use a permutation of tp,cp,dp,pp (fastest first), with ep "
                                  "optionally next to dp");
    }
    if (seen[static_cast<int>(d)]) {
      return Status::InvalidInput("--order: '" + tok + "' appears twice");
    }
    seen[static_cast<int>(d)] = true;
    out.axes[n++] = d;
    ++pos;
    tok.clear();
    return Status::Ok();
  };
  for (char c : text) {
    if (c == ',' || c == '-' || c == ' ') {
      NDT_RETURN_IF_ERROR(flush());
    } else {
      tok += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  NDT_RETURN_IF_ERROR(flush());
  if (n != 4) {
    return Status::InvalidInput("--order '" + text +
                                "' must name each of tp,cp,dp,pp once (fastest first)");
  }
  // Megatron-core's RankGenerator: "The ep and dp must be adjacent in order" (EP splits DP).
  if (ep_pos >= 0 && ep_pos != dp_pos - 1 && ep_pos != dp_pos + 1) {
    return Status::InvalidInput("--order '" + text +
                                "': ep must be next to dp (expert groups split the DP ranks), "
                                "e.g. tp,cp,ep,dp,pp or tp,cp,dp,ep,pp");
  }
  out.ep_outer = ep_pos > dp_pos;
  return out;
}

namespace {

std::string Str(int64_t v) { return std::to_string(v); }

// Micro-batches per step one simulation accepts: real jobs accumulate a few to a few thousand;
// the task graph grows with them (memory and time), so an absurd --gbs is refused, not run.
constexpr int64_t kMaxMicroBatches = 16384;
// Passes per step one simulation accepts: pp * vpp virtual stages times the micro-batches, ~4
// tasks each. The largest published run has 117,600 (GPT 530B PTD-P on 2,240 GPUs: 35 stages x
// 3 chunks x 1,120 micro-batches, arXiv:2104.04473 Table 2, a validation case); 2^18 leaves
// twice that, and refuses the absurd pipelines (4,096 stages x 1,024 micro-batches) that ran for
// minutes.
constexpr int64_t kMaxPipelinePasses = int64_t{1} << 18;

}  // namespace

LayerRange ChunkLayers(int64_t layers, int pp, int vpp, int v) {
  const int64_t nv = static_cast<int64_t>(pp) * vpp;
  const int64_t ceil = (layers + nv - 1) / nv;
  const int64_t excess = ceil * nv - layers;  // < nv
  // Virtual stage u loses a layer when its rank from the nearer end, 2 * min(u, nv - 1 - u)
  // (+1 for the upper half), is below the excess: v = 0, nv - 1, 1, nv - 2, ...
  auto loses = [&](int64_t u) {
    const int64_t rank = u < nv - 1 - u ? 2 * u : 2 * (nv - 1 - u) + 1;
    return rank < excess;
  };
  LayerRange r;
  for (int64_t u = 0; u < v; ++u) r.first += ceil - (loses(u) ? 1 : 0);
  r.count = ceil - (loses(v) ? 1 : 0);
  return r;
}

Status CheckExpertDegree(const TransformerSpec& model, int ep, int dp) {
  if (ep < 1) return Status::InvalidInput("--ep must be >= 1 (got " + Str(ep) + ")");
  if (ep == 1) return Status::Ok();
  if (!model.is_moe()) {
    return Status::InvalidInput("--ep " + Str(ep) + " needs a mixture-of-experts model; '" +
                                model.name + "' is dense");
  }
  if (model.moe.experts % ep != 0) {
    return Status::Infeasible("experts (" + Str(model.moe.experts) + ") are not divisible by ep " +
                              Str(ep));
  }
  if (dp % ep != 0) {
    return Status::Infeasible("ep " + Str(ep) + " must divide dp " + Str(dp) +
                              " (expert parallelism splits the data-parallel ranks)");
  }
  return Status::Ok();
}

Status ResolveStrategy(const TransformerSpec& model, int num_gpus, int nvlink_domain_gpus,
                       Strategy* s, std::vector<std::string>* warnings) {
  if (s->tp < 1 || s->pp < 1 || s->cp < 1 || s->ep < 1 || s->vpp < 1 || s->dp < 0) {
    return Status::InvalidInput("parallel degrees must be >= 1 (tp " + Str(s->tp) + ", pp " +
                                Str(s->pp) + ", cp " + Str(s->cp) + ", ep " + Str(s->ep) +
                                ", vpp " + Str(s->vpp) + ", dp " + Str(s->dp) + ")");
  }
  if (s->pp == 1 && s->vpp > 1) {
    return Status::InvalidInput("--vpp " + Str(s->vpp) +
                                " interleaves pipeline stages; it needs --pp > 1");
  }
  if (s->zero < 0 || s->zero > 3) {
    return Status::InvalidInput("--zero " + Str(s->zero) +
                                " is not a ZeRO stage; use 0, 1, 2 or 3");
  }
  if (s->gbs < 1) return Status::InvalidInput("--gbs must be >= 1 (sequences per iteration)");
  if (s->mbs < 1) return Status::InvalidInput("--mbs must be >= 1");
  if (model.heads % s->tp != 0) {
    return Status::Infeasible("attention heads (" + Str(model.heads) +
                              ") are not divisible by tp " + Str(s->tp) + "; choose a divisor");
  }
  if (model.kv_heads % s->tp != 0 && s->tp % model.kv_heads != 0) {
    return Status::Infeasible("kv heads (" + Str(model.kv_heads) + ") and tp " + Str(s->tp) +
                              " do not divide one another; choose tp dividing " +
                              Str(model.kv_heads) + " or a multiple of it");
  }
  const int64_t nv = static_cast<int64_t>(s->pp) * s->vpp;
  if (!s->uneven_stages && model.layers % nv != 0) {
    return Status::Infeasible("layers (" + Str(model.layers) +
                              ") are not divisible by pp*vpp = " + Str(nv) +
                              "; choose pp and vpp whose product divides the layers, or "
                              "--uneven-stages (fewer layers on the first and last stages)");
  }
  // With uneven stages the first and the last virtual stage may hold no layer, only the
  // embedding and the LM head and loss (Llama 3 405B: 126 layers on 16 x 8 virtual stages;
  // Megatron-core's account_for_embedding/loss_in_pipeline_split); every other one needs one.
  const int64_t min_layers = s->uneven_stages ? std::max<int64_t>(1, nv - 2) : nv;
  if (model.layers < min_layers) {
    return Status::Infeasible("pp*vpp = " + Str(nv) + " virtual stages for " + Str(model.layers) +
                              " layers; each needs at least one layer" +
                              (s->uneven_stages ? " (the first and last may hold none)" : "") +
                              ": lower --pp or --vpp");
  }
  const int64_t mp = static_cast<int64_t>(s->tp) * s->pp * s->cp;
  if (s->dp == 0) {
    if (num_gpus % mp != 0) {
      return Status::Infeasible("tp*pp*cp = " + Str(mp) + " does not divide the " + Str(num_gpus) +
                                " GPUs; change --tp/--pp/--cp or --vms");
    }
    s->dp = static_cast<int>(num_gpus / mp);
  }
  if (mp * s->dp != num_gpus) {
    return Status::Infeasible("tp*pp*cp*dp = " + Str(mp * s->dp) + " but the cluster has " +
                              Str(num_gpus) + " GPUs; leave out --dp to derive it");
  }
  if (s->gbs % (static_cast<int64_t>(s->dp) * s->mbs) != 0) {
    return Status::Infeasible("global batch " + Str(s->gbs) + " is not divisible by dp*mbs = " +
                              Str(static_cast<int64_t>(s->dp) * s->mbs) + " (dp " + Str(s->dp) +
                              ", mbs " + Str(s->mbs) + "); change --gbs or --mbs");
  }
  if (s->micro_batches() > kMaxMicroBatches) {
    return Status::InvalidInput(Str(s->micro_batches()) + " micro-batches per step (gbs " +
                                Str(s->gbs) + " / (dp " + Str(s->dp) + " * mbs " + Str(s->mbs) +
                                ")) is more than " + Str(kMaxMicroBatches) +
                                " a step simulates; lower --gbs or raise --mbs");
  }
  if (nv * s->micro_batches() > kMaxPipelinePasses) {
    return Status::InvalidInput(
        "pp*vpp = " + Str(nv) + " virtual stages x " + Str(s->micro_batches()) +
        " micro-batches is " + Str(nv * s->micro_batches()) + " passes per step, more than the " +
        Str(kMaxPipelinePasses) + " a step simulates; lower --pp/--vpp or --gbs, or raise --mbs");
  }
  if (s->cp > 1 && model.seq_len % (2 * s->cp) != 0) {
    return Status::Infeasible("sequence length " + Str(model.seq_len) +
                              " is not divisible by 2*cp = " + Str(2 * s->cp) +
                              " (ring attention load balancing); change --cp");
  }
  NDT_RETURN_IF_ERROR(CheckExpertDegree(model, s->ep, s->dp));
  if (s->sp && s->tp == 1) {
    return Status::InvalidInput("--sp (sequence parallelism) needs --tp > 1");
  }
  if (s->tp_overlap && !s->sp) {
    return Status::InvalidInput(
        "--tp-overlap needs --sp (it overlaps the sequence-parallel all-gather and "
        "reduce-scatter with the GEMMs)");
  }
  s->schedule = s->vpp > 1 ? PipeSchedule::kInterleaved
                           : (s->schedule == PipeSchedule::kInterleaved ? PipeSchedule::kOneFOneB
                                                                        : s->schedule);
  if (s->schedule == PipeSchedule::kInterleaved && s->micro_batches() % s->pp != 0) {
    return Status::Infeasible("interleaved schedule needs micro-batches (" +
                              Str(s->micro_batches()) + " = gbs/(dp*mbs)) divisible by pp " +
                              Str(s->pp) + "; change --gbs/--mbs or use --vpp 1");
  }
  if (warnings != nullptr) {
    // CP across VMs is how long contexts run (Llama 3: CP 16 over 16 nodes; its ring sends hide
    // under attention); TP across VMs puts per-layer all-reduces on the scale-out network.
    if (s->tp > nvlink_domain_gpus) {
      warnings->push_back("tp " + Str(s->tp) + " spans more than one NVLink domain (" +
                          Str(nvlink_domain_gpus) +
                          " GPUs): tensor-parallel traffic crosses the scale-out network");
    }
    // Groups that straddle two NVLink domains while rank 0's does not: the lowering prices
    // their per-layer traffic on the slowest straddling group (train_lowering.h).
    const std::pair<CommGroup, const char*> per_layer[] = {
        {CommGroup::kTp, s->sp ? "all-gathers and reduce-scatters" : "all-reduces"},
        {CommGroup::kCp, s->cp_comm == CpComm::kRing ? "ring exchanges" : "all-gathers"},
        {CommGroup::kEp, "all-to-alls"}};
    for (const auto& [g, what] : per_layer) {
      // TP and CP: GroupsStraddleDomains stops at the first straddling group.
      const bool straddles =
          g == CommGroup::kEp
              ? !StraddlingGroups(*s, g, nvlink_domain_gpus).empty()
              : GroupsStraddleDomains(*s, g == CommGroup::kTp ? Axis::kTp : Axis::kCp,
                                      nvlink_domain_gpus);
      if (!straddles) continue;
      std::string axes;  // the axes of the block of consecutive ranks holding whole groups
      const int64_t block = GroupBlock(*s, g, &axes);
      std::string name = CommGroupName(g);
      for (char& ch : name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      warnings->push_back("some " + name + " groups straddle two NVLink domains of " +
                          Str(nvlink_domain_gpus) + " GPUs (" + axes + " = " + Str(block) +
                          " does not divide " + Str(nvlink_domain_gpus) + "): their per-layer " +
                          what + " cross the scale-out network, and the step is priced so, on " +
                          "the slowest such group; use " + (axes == CommGroupName(g) ? "a " : "") +
                          axes + " dividing " + Str(nvlink_domain_gpus) +
                          " to keep them on NVLink");
    }
    if (s->pp > 1 && s->micro_batches() < s->pp) {
      warnings->push_back("only " + Str(s->micro_batches()) + " micro-batches for " + Str(s->pp) +
                          " pipeline stages: most of the step is pipeline bubble");
    }
  }
  return Status::Ok();
}

}  // namespace ndt
