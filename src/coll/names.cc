// File: coll/names.cc
// Names and parsing of collective operations, algorithms and protocols; nccl-tests' busbw factor.
#include <algorithm>
#include <cctype>
#include <string>

#include "coll/collective.h"

namespace ndt {
namespace {

std::string Norm(const std::string& s) {
  std::string o;
  for (char c : s)
    if (c != '_' && c != '-') o += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return o;
}

}  // namespace

const char* CollectivesWorkload(double bytes) {
  constexpr double kMiB = 1024.0 * 1024.0;
  if (bytes < kMiB) return "collectives-small";
  if (bytes < 64 * kMiB) return "collectives-medium";
  return "collectives-large";
}

const char* CollOpName(CollOp op) {
  switch (op) {
    case CollOp::kAllReduce:
      return "all_reduce";
    case CollOp::kAllGather:
      return "all_gather";
    case CollOp::kReduceScatter:
      return "reduce_scatter";
    case CollOp::kBroadcast:
      return "broadcast";
    case CollOp::kReduce:
      return "reduce";
    case CollOp::kAllToAll:
      return "all_to_all";
    case CollOp::kSendRecv:
      return "send_recv";
  }
  return "?";
}

const char* AlgoName(Algo a) {
  switch (a) {
    case Algo::kRing:
      return "Ring";
    case Algo::kTree:
      return "Tree";
    case Algo::kNvls:
      return "NVLS";
    case Algo::kNvlsTree:
      return "NVLSTree";
    case Algo::kCollNetDirect:
      return "CollNetDirect";
    case Algo::kCollNetChain:
      return "CollNetChain";
    case Algo::kPat:
      return "PAT";
    case Algo::kP2p:
      return "P2P";
  }
  return "?";
}

const char* ProtoName(Proto p) {
  switch (p) {
    case Proto::kLL:
      return "LL";
    case Proto::kLL128:
      return "LL128";
    case Proto::kSimple:
      return "Simple";
  }
  return "?";
}

Status ParseCollOp(const std::string& s, CollOp* out) {
  std::string n = Norm(s);
  if (n == "allreduce" || n == "ar")
    *out = CollOp::kAllReduce;
  else if (n == "allgather" || n == "ag")
    *out = CollOp::kAllGather;
  else if (n == "reducescatter" || n == "rs")
    *out = CollOp::kReduceScatter;
  else if (n == "broadcast" || n == "bcast")
    *out = CollOp::kBroadcast;
  else if (n == "reduce")
    *out = CollOp::kReduce;
  else if (n == "alltoall" || n == "a2a")
    *out = CollOp::kAllToAll;
  else if (n == "sendrecv" || n == "p2p")
    *out = CollOp::kSendRecv;
  else
    return Status::InvalidInput("unknown collective '" + s +
                                "'; use one of allreduce, allgather, reducescatter, broadcast, "
                                "reduce, alltoall, sendrecv");
  return Status::Ok();
}

Status ParseAlgo(const std::string& s, Algo* out) {
  std::string n = Norm(s);
  if (n == "ring")
    *out = Algo::kRing;
  else if (n == "tree")
    *out = Algo::kTree;
  else if (n == "nvls")
    *out = Algo::kNvls;
  else if (n == "nvlstree")
    *out = Algo::kNvlsTree;
  else if (n == "collnetdirect" || n == "collnet")
    *out = Algo::kCollNetDirect;
  else if (n == "collnetchain")
    *out = Algo::kCollNetChain;
  else if (n == "pat")
    *out = Algo::kPat;
  else
    return Status::InvalidInput("unknown algorithm '" + s +
                                "'; use one of ring, tree, nvls, nvlstree, collnetdirect, "
                                "collnetchain, pat");
  return Status::Ok();
}

Status ParseProto(const std::string& s, Proto* out) {
  std::string n = Norm(s);
  if (n == "ll")
    *out = Proto::kLL;
  else if (n == "ll128")
    *out = Proto::kLL128;
  else if (n == "simple")
    *out = Proto::kSimple;
  else
    return Status::InvalidInput("unknown protocol '" + s + "'; use one of ll, ll128, simple");
  return Status::Ok();
}

std::string NcclVersionName(int v) {
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}

Status ParseNcclVersion(const std::string& s, int* out) {
  const std::string range = "use a release from " + NcclVersionName(kOldestNcclVersion) + " to 2." +
                            std::to_string(kNewestNcclVersion / 100 % 100) +
                            ".x, e.g. 2.18.5 (default " + NcclVersionName(kPinnedNcclVersion) + ")";
  int part[3] = {0, 0, 0};
  int parts = 0;
  size_t i = 0;
  while (parts < 3) {
    size_t j = i;
    while (j < s.size() && j - i < 3 && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
    if (j == i) break;
    part[parts++] = std::stoi(s.substr(i, j - i));
    i = j;
    if (i == s.size() || s[i] != '.') break;
    ++i;
  }
  if (parts < 2 || i != s.size())
    return Status::InvalidInput("NCCL version '" + s + "' is not MAJOR.MINOR.PATCH; " + range);
  const int v = part[0] * 10000 + part[1] * 100 + part[2];
  if (part[1] > 99 || part[2] > 99 || v < kOldestNcclVersion || v > kNewestNcclVersion)
    return Status::InvalidInput("NCCL " + s + " is not a release this model follows; " + range);
  *out = v;
  return Status::Ok();
}

double BusBwFactor(CollOp op, int n) {
  switch (op) {
    case CollOp::kAllReduce:
      return 2.0 * (n - 1) / n;
    case CollOp::kAllGather:
    case CollOp::kReduceScatter:
    case CollOp::kAllToAll:
      return static_cast<double>(n - 1) / n;
    default:
      return 1.0;
  }
}

}  // namespace ndt
