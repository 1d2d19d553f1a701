// File: plan/space.cc
// The training strategy space (EnumerateTrainStrategies), the objectives' names and the one-line
// summary of why nothing was feasible (NoneFeasible): plan.h's pieces that plan/choose.cc uses
// as well as PlanTraining (plan.cc).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "plan/plan.h"

namespace ndt {
namespace {

constexpr int kMaxPp = 64;

// The same reason for every tp or size: memory by its code, else the message up to its advice.
std::string ReasonOf(const Status& s) {
  if (s.code() == StatusCode::kDoesNotFit) return "does not fit in GPU memory";
  return s.Reason();
}

}  // namespace

const char* PlanObjectiveName(PlanObjective o) {
  switch (o) {
    case PlanObjective::kThroughput:
      return "throughput";
    case PlanObjective::kTime:
      return "time";
    case PlanObjective::kCost:
      return "cost";
  }
  return "?";
}

bool ParsePlanObjective(const std::string& s, PlanObjective* out) {
  for (PlanObjective o : {PlanObjective::kThroughput, PlanObjective::kTime, PlanObjective::kCost}) {
    if (s == PlanObjectiveName(o)) {
      *out = o;
      return true;
    }
  }
  return false;
}

std::vector<Strategy> EnumerateTrainStrategies(const TransformerSpec& model, int gpus,
                                               int nvlink_domain_gpus, const Strategy& base,
                                               const TrainSearchSpace& space) {
  std::vector<Strategy> out;
  const int cp = std::max(1, base.cp);
  std::vector<int> tps;
  if (space.tp) {
    tps = {*space.tp};
  } else {
    for (int tp = 1; tp <= nvlink_domain_gpus && tp <= gpus; tp *= 2) {
      // With more GPUs than one NVLink domain, tp must divide the domain (NVL72: 1, 2, 4, 8):
      // else some TP groups of consecutive ranks straddle two domains and put their per-layer
      // all-reduces on InfiniBand (train prices that group: parallel/strategy.h StraddlingGroups).
      const bool tiles = gpus <= nvlink_domain_gpus || nvlink_domain_gpus % tp == 0;
      if (model.heads % tp == 0 && tiles) tps.push_back(tp);
    }
  }
  std::vector<int> zeros;
  if (space.zero) {
    zeros = {*space.zero};
  } else if (!space.zero_stages.empty()) {
    zeros = space.zero_stages;
  } else {
    for (int z = 0; z <= space.max_zero; ++z) zeros.push_back(z);
  }
  std::vector<Recompute> recomputes = {Recompute::kNone, Recompute::kSelective, Recompute::kFull};
  if (space.recompute) recomputes = {*space.recompute};
  // The divisors > 1 of the routed experts (MoE only): EP's candidates.
  std::vector<int> expert_degrees;
  for (int ep = 2; !space.ep && model.is_moe() && ep <= model.moe.experts; ++ep) {
    if (model.moe.experts % ep == 0) expert_degrees.push_back(ep);
  }
  for (int tp : tps) {
    std::vector<int> pps;
    if (space.pp) {
      pps = {*space.pp};
    } else {
      for (int pp = 1; pp <= kMaxPp && pp <= model.layers; ++pp) {
        // Stages need not divide the layers: the first and last get fewer (Megatron's
        // uneven split, as Llama 3 405B ran 126 layers on 16 stages).
        if (model.layers % pp == 0 || space.allow_uneven || base.uneven_stages) pps.push_back(pp);
      }
    }
    for (int pp : pps) {
      if (tp < 1 || pp < 1 || gpus % (tp * pp * cp) != 0) continue;
      const int dp = gpus / (tp * pp * cp);
      if (space.dp && *space.dp != dp) continue;
      if (base.gbs % dp != 0) continue;
      // EP: the given degree, else 1 and every degree train accepts (CheckExpertDegree: a
      // divisor of the routed experts dividing dp), ascending; dense models only 1. A given
      // degree train refuses here is skipped (the caller names --ep before enumerating).
      std::vector<int> eps;
      if (space.ep) {
        if (CheckExpertDegree(model, *space.ep, dp).ok()) eps.push_back(*space.ep);
      } else {
        eps.push_back(1);
        for (int ep : expert_degrees) {
          if (ep <= dp && dp % ep == 0 && CheckExpertDegree(model, ep, dp).ok()) {
            eps.push_back(ep);
          }
        }
      }
      const bool sp = space.sp.value_or(tp > 1);
      std::vector<bool> overlaps = {false};
      if (space.tp_overlap) {
        overlaps = {*space.tp_overlap};
      } else if (sp && tp > 1) {
        overlaps = {false, true};
      }
      for (int ep : eps) {
        for (bool overlap : overlaps) {
          for (int zero : zeros) {
            // ZeRO shards over the DP x CP ranks: with one there is nothing to shard, and every
            // stage is the same run as ZeRO 0 (the same numbers, listed once per stage).
            if (zero > 0 && !space.zero && dp * cp == 1) continue;
            for (Recompute rc : recomputes) {
              Strategy s = base;
              s.tp = tp;
              s.pp = pp;
              s.dp = dp;
              s.ep = ep;
              s.sp = sp;
              s.tp_overlap = overlap;
              s.zero = zero;
              s.recompute = rc;
              s.uneven_stages = base.uneven_stages || model.layers % pp != 0;
              out.push_back(s);
            }
          }
        }
      }
    }
  }
  return out;
}

std::vector<Strategy> EnumerateTrainStrategies(const TransformerSpec& model, int gpus,
                                               int nvlink_domain_gpus, int64_t gbs,
                                               Dtype precision) {
  Strategy base;
  base.gbs = gbs;
  base.precision = precision;
  TrainSearchSpace space;
  space.tp_overlap = false;
  return EnumerateTrainStrategies(model, gpus, nvlink_domain_gpus, base, space);
}

std::vector<int> StackZeroStages(const SoftwareStack* stack) {
  if (stack != nullptr && !stack->zero_stages.empty()) return stack->zero_stages;
  std::vector<int> out;
  const int top = std::max(1, stack != nullptr ? stack->knobs.zero.value_or(1) : 1);
  for (int z = 0; z <= top; ++z) out.push_back(z);
  return out;
}

std::string ZeroStagesNote(const SoftwareStack& stack, const std::vector<SoftwareStack>& stacks) {
  if (stack.zero_stages.empty()) return "";
  auto has = [](const std::vector<int>& v, int z) {
    return std::find(v.begin(), v.end(), z) != v.end();
  };
  std::vector<int> missing;
  for (int z = 0; z <= 3; ++z) {
    if (!has(stack.zero_stages, z)) missing.push_back(z);
  }
  if (missing.empty()) return "";
  // "0", "0 and 1", "0, 2 and 3".
  auto list = [](const std::vector<int>& v) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) {
      out += (i == 0 ? "" : i + 1 == v.size() ? " and " : ", ") + std::to_string(v[i]);
    }
    return out;
  };
  std::string others;
  for (const SoftwareStack& o : stacks) {
    if (o.kind != StackKind::kTraining || o.name == stack.name) continue;
    const bool more =
        std::any_of(missing.begin(), missing.end(), [&](int z) { return has(o.zero_stages, z); });
    if (more) others += (others.empty() ? "" : ", ") + o.name;
  }
  std::string line = "stack " + stack.name + " runs ZeRO " + list(stack.zero_stages) +
                     " only (traits.zero_stages, data/stacks/" + stack.name + ".yaml): ZeRO " +
                     list(missing) + " not searched";
  if (!others.empty())
    line += "; --stack " + others + " can run " + (missing.size() > 1 ? "them" : "it");
  return line;
}

Status NoneFeasible(const std::vector<Status>& failures) {
  std::map<std::string, int64_t> counts;
  std::map<std::string, StatusCode> code_of;
  for (const Status& st : failures) {
    ++counts[ReasonOf(st)];
    code_of.emplace(ReasonOf(st), st.code());
  }
  auto top = counts.begin();
  for (auto it = counts.begin(); it != counts.end(); ++it) {
    if (it->second > top->second) top = it;
  }
  const bool memory = code_of[top->first] == StatusCode::kDoesNotFit;
  return Status::Infeasible(
      "no feasible configuration among " + std::to_string(failures.size()) +
      "; most common reason (" + std::to_string(top->second) + "): " + top->first +
      (memory ? "; try more GPUs (--gpus/--vms) or a size with more GPU memory"
              : "; try another --gpus or --gbs"));
}

}  // namespace ndt
