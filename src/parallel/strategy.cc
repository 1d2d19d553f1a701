// File: parallel/strategy.cc
// Strategy resolution, divisibility checks and the Megatron rank mapping; see strategy.h.
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

bool GroupsStraddleDomains(const Strategy& s, Axis d, int domain_gpus) {
  const int n = s.degree(d);
  if (n < 2 || domain_gpus < 1 || s.gpus() <= domain_gpus) return false;
  // A group along d lies in the block of consecutive ranks of the axes up to d in the order
  // (ranks h * block .. h * block + block - 1): a block dividing the domain never straddles.
  int64_t block = 1;
  for (Axis a : s.order) {
    block *= s.degree(a);
    if (a == d) break;
  }
  if (domain_gpus % block == 0) return false;
  const int di = static_cast<int>(d);
  // A group's ranks grow with its coordinate along d: it lies in one domain (ranks r / domain_gpus)
  // iff its first and last rank do.
  auto inside = [&](std::array<int, 4> c) {
    c[di] = 0;
    const int first = RankOf(s, c);
    c[di] = n - 1;
    return first / domain_gpus == RankOf(s, c) / domain_gpus;
  };
  std::array<int, 4> c = {0, 0, 0, 0};
  if (!inside(c)) return false;  // rank 0's group straddles too: the lowering prices that
  while (true) {                 // every group: the other three coordinates, mixed radix
    if (!inside(c)) return true;
    int k = 0;
    for (; k < 4; ++k) {
      if (k == di) continue;
      if (++c[k] < s.degree(static_cast<Axis>(k))) break;
      c[k] = 0;
    }
    if (k == 4) return false;
  }
}

const char* CommGroupName(CommGroup g) {
  switch (g) {
    case CommGroup::kTp:
      return "tp";
    case CommGroup::kCp:
      return "cp";
    case CommGroup::kEp:
      return "ep";
    case CommGroup::kDp:
      return "dp";
  }
  return "?";
}

std::vector<int> CommGroupRanks(const Strategy& s, CommGroup g, const std::array<int, 4>& coord) {
  switch (g) {
    case CommGroup::kTp:
      return GroupRanks(s, Axis::kTp, coord);
    case CommGroup::kCp:
      return GroupRanks(s, Axis::kCp, coord);
    case CommGroup::kEp:
      return ExpertGroupRanks(s, coord);
    case CommGroup::kDp:
      return DataParallelRanks(s, coord);
  }
  return {};
}

int64_t GroupBlock(const Strategy& s, CommGroup g, std::string* axes) {
  // The axes of the group: it lies in the block of the axes up to the slowest of them.
  bool in[4] = {false, false, false, false};
  if (g == CommGroup::kTp) in[static_cast<int>(Axis::kTp)] = true;
  if (g == CommGroup::kCp || g == CommGroup::kDp) in[static_cast<int>(Axis::kCp)] = true;
  if (g == CommGroup::kEp || g == CommGroup::kDp) in[static_cast<int>(Axis::kDp)] = true;
  int left = 0;
  for (bool b : in) left += b ? 1 : 0;
  int64_t block = 1;
  std::string names;
  for (Axis a : s.order) {
    // An expert group ("ep-dp") is ep consecutive DP coordinates aligned on ep: the block of the
    // axes before dp, times ep. With "dp-ep" it takes every (dp/ep)-th: all of dp.
    const bool ep_part = g == CommGroup::kEp && a == Axis::kDp && !s.ep_outer;
    const int degree = ep_part ? s.ep : s.degree(a);
    block *= degree;
    // An axis of degree 1 changes nothing: named only when it is the group's own.
    if (degree > 1 || in[static_cast<int>(a)]) {
      names += (names.empty() ? "" : " x ") + std::string(ep_part ? "ep" : DimName(a));
    }
    if (in[static_cast<int>(a)] && --left == 0) break;
  }
  if (axes != nullptr) *axes = names;
  return block;
}

namespace {

// Calls f(coord) for every coordinate with coord[k] in {0, step[k], 2 step[k], ...} below
// limit[k], the first axis fastest; stops when f returns true.
template <typename F>
void ForEachCoord(const std::array<int, 4>& limit, const std::array<int, 4>& step, F f) {
  std::array<int, 4> c = {0, 0, 0, 0};
  while (true) {
    if (f(c)) return;
    int k = 0;
    for (; k < 4; ++k) {
      c[k] += step[k];
      if (c[k] < limit[k]) break;
      c[k] = 0;
    }
    if (k == 4) return;
  }
}

// The group's ranks counted per NVLink domain, the counts sorted (one count: inside one domain).
std::vector<int> DomainSplit(const std::vector<int>& ranks, int domain_gpus) {
  std::vector<int> domains;
  domains.reserve(ranks.size());
  for (int r : ranks) domains.push_back(r / domain_gpus);
  std::sort(domains.begin(), domains.end());
  std::vector<int> counts;
  for (size_t i = 0; i < domains.size();) {
    size_t j = i;
    while (j < domains.size() && domains[j] == domains[i]) ++j;
    counts.push_back(static_cast<int>(j - i));
    i = j;
  }
  std::sort(counts.begin(), counts.end());
  return counts;
}

}  // namespace

std::vector<std::array<int, 4>> StraddlingGroups(const Strategy& s, CommGroup g, int domain_gpus) {
  const std::array<int, 4> zero = {0, 0, 0, 0};
  std::vector<std::array<int, 4>> out;
  if (domain_gpus < 1 || s.gpus() <= domain_gpus) return out;
  const std::vector<int> first = CommGroupRanks(s, g, zero);
  if (first.size() < 2) return out;
  if (domain_gpus % GroupBlock(s, g, nullptr) == 0) return out;  // every group in one domain
  if (DomainSplit(first, domain_gpus).size() > 1) return out;    // rank 0's straddles: priced so
  // One coordinate per group: its own axes at their first value (for EP, the group's base DP
  // coordinate, ExpertGroupRanks).
  std::array<int, 4> limit, step = {1, 1, 1, 1};
  for (int k = 0; k < 4; ++k) limit[k] = s.degree(static_cast<Axis>(k));
  const int tp = static_cast<int>(Axis::kTp), cp = static_cast<int>(Axis::kCp),
            dp = static_cast<int>(Axis::kDp);
  if (g == CommGroup::kTp) limit[tp] = 1;
  if (g == CommGroup::kCp || g == CommGroup::kDp) limit[cp] = 1;
  if (g == CommGroup::kDp) limit[dp] = 1;
  if (g == CommGroup::kEp) {
    if (s.ep_outer) {
      limit[dp] = s.dp / s.ep;
    } else {
      step[dp] = s.ep;
    }
  }
  std::vector<std::vector<int>> seen;
  ForEachCoord(limit, step, [&](const std::array<int, 4>& c) {
    std::vector<int> split = DomainSplit(CommGroupRanks(s, g, c), domain_gpus);
    if (split.size() > 1 && std::find(seen.begin(), seen.end(), split) == seen.end()) {
      seen.push_back(std::move(split));
      out.push_back(c);
    }
    return false;
  });
  return out;
}

std::optional<std::array<int, 4>> StraddlingPipelineSend(const Strategy& s, int domain_gpus) {
  if (s.pp < 2 || domain_gpus < 1 || s.gpus() <= domain_gpus) return std::nullopt;
  const int pp = static_cast<int>(Axis::kPp);
  auto crosses = [&](std::array<int, 4> c) {
    const int from = RankOf(s, c) / domain_gpus;
    ++c[pp];
    return from != RankOf(s, c) / domain_gpus;
  };
  if (crosses({0, 0, 0, 0})) return std::nullopt;  // rank 0's send crosses: priced so
  int64_t block = 1;  // the ranks of whole pipelines: a block dividing the domain never crosses
  for (Axis a : s.order) {
    block *= s.degree(a);
    if (a == Axis::kPp) break;
  }
  if (domain_gpus % block == 0) return std::nullopt;
  std::array<int, 4> limit;
  for (int k = 0; k < 4; ++k) limit[k] = s.degree(static_cast<Axis>(k));
  limit[pp] = s.pp - 1;  // senders: every stage but the last
  std::optional<std::array<int, 4>> found;
  ForEachCoord(limit, {1, 1, 1, 1}, [&](const std::array<int, 4>& c) {
    if (crosses(c)) found = c;
    return found.has_value();
  });
  return found;
}

int RankOf(const Strategy& s, const std::array<int, 4>& coord) {
  int rank = 0;
  int stride = 1;
  for (Axis d : s.order) {
    rank += coord[static_cast<int>(d)] * stride;
    stride *= s.degree(d);
  }
  return rank;
}

std::vector<int> GroupRanks(const Strategy& s, Axis d, std::array<int, 4> coord) {
  std::vector<int> out;
  const int n = s.degree(d);
  out.reserve(n);
  for (int i = 0; i < n; ++i) {
    coord[static_cast<int>(d)] = i;
    out.push_back(RankOf(s, coord));
  }
  return out;
}

std::vector<int> DataParallelRanks(const Strategy& s, std::array<int, 4> coord) {
  std::vector<int> out;
  out.reserve(static_cast<size_t>(s.weight_replicas()));
  for (int d = 0; d < s.dp; ++d) {
    for (int c = 0; c < s.cp; ++c) {
      coord[static_cast<int>(Axis::kDp)] = d;
      coord[static_cast<int>(Axis::kCp)] = c;
      out.push_back(RankOf(s, coord));
    }
  }
  return out;
}

std::vector<int> ExpertGroupRanks(const Strategy& s, std::array<int, 4> coord) {
  std::vector<int> out;
  const int dp = coord[static_cast<int>(Axis::kDp)];
  // "ep-dp": ep consecutive DP coordinates; "dp-ep": the dp/ep-strided ones (RankOrder).
  const int stride = s.ep_outer ? s.dp / s.ep : 1;
  const int base = s.ep_outer ? dp % stride : dp / s.ep * s.ep;
  for (int i = 0; i < s.ep; ++i) {
    coord[static_cast<int>(Axis::kDp)] = base + i * stride;
    out.push_back(RankOf(s, coord));
  }
  return out;
}

}  // namespace ndt
