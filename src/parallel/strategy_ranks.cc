// File: parallel/strategy_ranks.cc
// The Megatron rank mapping of a Strategy: communication groups, their ranks, the groups that
// straddle NVLink domains; declared in strategy.h (split from strategy.cc).
#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "parallel/strategy.h"

namespace ndt {

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
