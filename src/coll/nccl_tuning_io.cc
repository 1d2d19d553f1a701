// Reads data/nccl.yaml, NCCL's own cost-model tables (coll/nccl_model.h LoadNcclTuning).
// Every key is required and every table is checked for its shape, so a value of the file is
// either used by the model or an error; nothing of it is compiled in.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "coll/nccl_model.h"
#include "core/yaml.h"

namespace ndt {
namespace {

const char* const kArchs[4] = {"volta", "ampere", "hopper", "blackwell"};
const char* const kSpeedRows[3] = {"pre_hopper", "hopper", "blackwell"};
// data/nccl.yaml's names of the algorithms of kTuningAlgos, in that order.
const char* const kAlgoKeys[7] = {"ring",           "tree",          "nvls", "nvls_tree",
                                  "collnet_direct", "collnet_chain", "pat"};

StatusOr<double> NonNegative(const YamlMap& m, std::string_view key) {
  NDT_ASSIGN_OR_RETURN(double v, m.Number(key));
  if (!(v >= 0 && std::isfinite(v))) return m.Error(key, "must be a finite number >= 0");
  return v;
}

StatusOr<double> Positive(const YamlMap& m, std::string_view key) {
  NDT_ASSIGN_OR_RETURN(double v, m.Number(key));
  if (!(v > 0 && std::isfinite(v))) return m.Error(key, "must be a finite number > 0");
  return v;
}

StatusOr<int> PositiveInt(const YamlMap& m, std::string_view key) {
  NDT_ASSIGN_OR_RETURN(int64_t v, m.Int(key));
  if (v < 1 || v > 1024) return m.Error(key, "must be an integer in [1, 1024]");
  return static_cast<int>(v);
}

// A list of exactly `n` numbers >= 0 into out[0..n).
Status Row(const YamlMap& m, std::string_view key, size_t n, double* out) {
  NDT_ASSIGN_OR_RETURN(std::vector<double> v, m.NumberList(key));
  if (v.size() != n) return m.Error(key, "expected " + std::to_string(n) + " numbers");
  for (size_t i = 0; i < n; ++i) {
    if (!(v[i] >= 0)) return m.Error(key, "values must be >= 0");
    out[i] = v[i];
  }
  return Status::Ok();
}

// A [arch 4][nodes 3] table.
Status ArchTable(const YamlMap& m, std::string_view key, double (*out)[3]) {
  NDT_ASSIGN_OR_RETURN(std::vector<std::vector<double>> t, m.NumberTable(key));
  if (t.size() != 4) return m.Error(key, "expected 4 rows (Volta, Ampere, Hopper, Blackwell)");
  for (size_t a = 0; a < 4; ++a) {
    if (t[a].size() != 3) return m.Error(key, "each row has 3 values (1, 2, >= 3 nodes)");
    for (size_t i = 0; i < 3; ++i) {
      if (!(t[a][i] >= 0)) return m.Error(key, "values must be >= 0");
      out[a][i] = t[a][i];
    }
  }
  return Status::Ok();
}

// A descending list of search speeds (GB/s).
StatusOr<std::vector<double>> Speeds(const YamlMap& m, std::string_view key) {
  NDT_ASSIGN_OR_RETURN(std::vector<double> v, m.NumberList(key));
  for (size_t i = 0; i < v.size(); ++i)
    if (!(v[i] > 0) || (i > 0 && v[i] >= v[i - 1]))
      return m.Error(key, "speeds must be > 0 and strictly descending");
  return v;
}

// An NCCL release ("2.20" or "2.20.3", coll/collective.h ParseNcclVersion).
StatusOr<int> Release(const YamlMap& m, std::string_view key) {
  NDT_ASSIGN_OR_RETURN(std::string s, m.String(key));
  int v = 0;
  if (Status st = ParseNcclVersion(s, &v); !st.ok()) return m.Error(key, st.message());
  return v;
}

StatusOr<NcclTuning> FromMap(const YamlMap& top) {
  NcclTuning k;
  NDT_ASSIGN_OR_RETURN(std::string source, top.String("source"));
  if (source.empty()) return top.Error("source", "say where the tables come from");

  NDT_ASSIGN_OR_RETURN(YamlMap nv, top.Map("nvlink_GBps_per_link"));
  for (const std::string& key : nv.Keys()) {
    if (key.rfind("sm", 0) != 0 || key.size() < 4 ||
        key.find_first_not_of("0123456789", 2) != std::string::npos)
      return nv.Error(key, "keys are compute capabilities such as sm90");
    NDT_ASSIGN_OR_RETURN(double bw, Positive(nv, key));
    k.nvlink_GBps_per_link.emplace_back(std::stoi(key.substr(2)), bw);
  }
  if (k.nvlink_GBps_per_link.empty())
    return top.Error("nvlink_GBps_per_link", "needs at least one entry");
  std::sort(k.nvlink_GBps_per_link.begin(), k.nvlink_GBps_per_link.end());

  NDT_ASSIGN_OR_RETURN(YamlMap pcie, top.Map("pcie_GBps_x16"));
  const char* const gens[3] = {"gen3", "gen4", "gen5"};
  for (int i = 0; i < 3; ++i) {
    NDT_ASSIGN_OR_RETURN(k.pcie_x16_GBps[i], Positive(pcie, gens[i]));
  }
  NDT_RETURN_IF_ERROR(pcie.Finish());

  NDT_ASSIGN_OR_RETURN(YamlMap intra, top.Map("search_speeds_intra_GBps"));
  NDT_ASSIGN_OR_RETURN(YamlMap inter, top.Map("search_speeds_inter_GBps"));
  for (int i = 0; i < 3; ++i) {
    NDT_ASSIGN_OR_RETURN(k.intra_speeds[i], Speeds(intra, kSpeedRows[i]));
    NDT_ASSIGN_OR_RETURN(k.inter_speeds[i], Speeds(inter, kSpeedRows[i]));
  }
  NDT_RETURN_IF_ERROR(intra.Finish());
  NDT_RETURN_IF_ERROR(inter.Finish());

  NDT_ASSIGN_OR_RETURN(YamlMap dup, top.Map("channel_duplication"));
  NDT_ASSIGN_OR_RETURN(k.dup_min_GBps, NonNegative(dup, "min_GBps"));
  NDT_ASSIGN_OR_RETURN(k.dup_skip_above_sm, PositiveInt(dup, "skip_above_sm"));
  NDT_ASSIGN_OR_RETURN(k.dup_skip_below_GBps, NonNegative(dup, "skip_below_GBps"));
  NDT_ASSIGN_OR_RETURN(k.dup_skip_above_channels, PositiveInt(dup, "skip_above_channels"));
  NDT_RETURN_IF_ERROR(dup.Finish());

  NDT_ASSIGN_OR_RETURN(YamlMap nvls, top.Map("nvls_channels"));
  NDT_ASSIGN_OR_RETURN(k.nvls_channels_sm90, PositiveInt(nvls, "sm90"));
  NDT_ASSIGN_OR_RETURN(k.nvls_channels_sm100_single, PositiveInt(nvls, "sm100_single_node"));
  NDT_ASSIGN_OR_RETURN(k.nvls_channels_sm100_multi, PositiveInt(nvls, "sm100_multi_node"));
  NDT_RETURN_IF_ERROR(nvls.Finish());
  NDT_ASSIGN_OR_RETURN(k.ctas_per_channel, PositiveInt(top, "ctas_per_channel"));

  NDT_ASSIGN_OR_RETURN(YamlMap mnnvl, top.Map("mnnvl"));
  NDT_ASSIGN_OR_RETURN(k.mnnvl_since, Release(mnnvl, "since"));
  NDT_ASSIGN_OR_RETURN(k.mnnvl_full_since, Release(mnnvl, "any_clique_and_nvls_since"));
  NDT_RETURN_IF_ERROR(mnnvl.Finish());
  if (k.mnnvl_full_since < k.mnnvl_since)
    return mnnvl.Error("any_clique_and_nvls_since", "must not be older than since");

  NDT_ASSIGN_OR_RETURN(YamlMap since, top.Map("gpu_support_since"));
  for (const std::string& key : since.Keys()) {
    if (key.rfind("sm", 0) != 0 || key.size() < 4 ||
        key.find_first_not_of("0123456789", 2) != std::string::npos)
      return since.Error(key, "keys are compute capabilities such as sm100");
    NDT_ASSIGN_OR_RETURN(int release, Release(since, key));
    k.gpu_support_since.emplace_back(std::stoi(key.substr(2)), release);
  }
  std::sort(k.gpu_support_since.begin(), k.gpu_support_since.end());

  NDT_RETURN_IF_ERROR(ArchTable(top, "llMaxBw", k.ll_max_bw));
  NDT_ASSIGN_OR_RETURN(YamlMap ll, top.Map("ring_ll_bus_divisor"));
  NDT_ASSIGN_OR_RETURN(YamlMap old, ll.Map("before_2_21"));
  NDT_ASSIGN_OR_RETURN(k.ring_ll_divisor_old_ar, Positive(old, "allreduce_reduce_or_multinode"));
  NDT_ASSIGN_OR_RETURN(k.ring_ll_divisor_old_other, Positive(old, "others"));
  NDT_RETURN_IF_ERROR(old.Finish());
  NDT_ASSIGN_OR_RETURN(k.ring_ll_divisor_new, Positive(ll, "since_2_21"));
  NDT_RETURN_IF_ERROR(ll.Finish());
  NDT_ASSIGN_OR_RETURN(YamlMap ll128, top.Map("ring_ll128_bus_factor"));
  NDT_ASSIGN_OR_RETURN(k.ring_ll128_factor, Positive(ll128, "default"));
  NDT_ASSIGN_OR_RETURN(k.ring_ll128_factor_low_ppn_old,
                       Positive(ll128, "under_2_ranks_per_node_before_2_23"));
  NDT_RETURN_IF_ERROR(ll128.Finish());
  NDT_RETURN_IF_ERROR(ArchTable(top, "perChMaxRingLL128Bw", k.per_ch_max_ring_ll128));
  NDT_RETURN_IF_ERROR(ArchTable(top, "perChMaxTreeLL128Bw", k.per_ch_max_tree_ll128));
  NDT_RETURN_IF_ERROR(ArchTable(top, "perChMaxTreeBw", k.per_ch_max_tree));
  NDT_RETURN_IF_ERROR(ArchTable(top, "perChMaxNVLSTreeBw", k.per_ch_max_nvls_tree));

  NDT_ASSIGN_OR_RETURN(YamlMap eff, top.Map("nvls_efficiency"));
  for (int a = 0; a < 4; ++a) {
    NDT_ASSIGN_OR_RETURN(k.nvls_efficiency[a], NonNegative(eff, kArchs[a]));
    if (k.nvls_efficiency[a] > 1) return eff.Error(kArchs[a], "an efficiency is at most 1");
  }
  NDT_RETURN_IF_ERROR(eff.Finish());

  // Base latencies: tree, ring and pat have their own; `others` is every other algorithm.
  NDT_ASSIGN_OR_RETURN(YamlMap base, top.Map("base_latency_us"));
  double others[3];
  NDT_RETURN_IF_ERROR(Row(base, "others", 3, others));
  for (int a = 0; a < 7; ++a) {
    const std::string key = kAlgoKeys[a];
    if (key == "ring" || key == "tree" || key == "pat") {
      NDT_RETURN_IF_ERROR(Row(base, key, 3, k.base_latency_us[a]));
    } else {
      for (int p = 0; p < 3; ++p) k.base_latency_us[a][p] = others[p];
    }
  }
  NDT_RETURN_IF_ERROR(base.Finish());

  NDT_ASSIGN_OR_RETURN(YamlMap hw, top.Map("hw_latency_us"));
  const char* const paths[3] = {"nvlink", "pci", "net"};
  for (int path = 0; path < 3; ++path) {
    NDT_ASSIGN_OR_RETURN(YamlMap m, hw.Map(paths[path]));
    for (int a = 0; a < 7; ++a)
      NDT_RETURN_IF_ERROR(Row(m, kAlgoKeys[a], 3, k.hw_latency_us[path][a]));
    NDT_RETURN_IF_ERROR(m.Finish());
  }
  NDT_RETURN_IF_ERROR(hw.Finish());

  NDT_ASSIGN_OR_RETURN(YamlMap net, top.Map("net_overhead_us"));
  NDT_ASSIGN_OR_RETURN(k.net_overhead_intel_us, NonNegative(net, "intel"));
  NDT_ASSIGN_OR_RETURN(k.net_overhead_amd_us, NonNegative(net, "amd"));
  NDT_ASSIGN_OR_RETURN(k.net_overhead_simple_x, Positive(net, "simple_multiplier"));
  NDT_RETURN_IF_ERROR(net.Finish());

  NDT_ASSIGN_OR_RETURN(YamlMap plateau, top.Map("ring_simple_allreduce_plateau_latency_factor"));
  NDT_ASSIGN_OR_RETURN(k.plateau_pre_ampere, Positive(plateau, "pre_ampere"));
  NDT_ASSIGN_OR_RETURN(k.plateau_ampere_plus, Positive(plateau, "ampere_plus"));
  NDT_RETURN_IF_ERROR(plateau.Finish());

  NDT_ASSIGN_OR_RETURN(YamlMap ring, top.Map("simple_ring"));
  NDT_ASSIGN_OR_RETURN(Sourced buffer, ring.Quantity("buffer", Dim::kBytes));
  if (!(buffer.value > 0)) return ring.Error("buffer", "must be > 0");
  k.simple_buffer_bytes = buffer.value;
  NDT_ASSIGN_OR_RETURN(k.nccl_steps, PositiveInt(ring, "nccl_steps"));
  NDT_ASSIGN_OR_RETURN(k.simple_chunk_steps, PositiveInt(ring, "chunk_steps"));
  NDT_ASSIGN_OR_RETURN(k.simple_channel_duplication, PositiveInt(ring, "channel_duplication"));
  if (k.simple_chunk_steps > k.nccl_steps)
    return ring.Error("chunk_steps", "a chunk has at most nccl_steps steps");
  NDT_RETURN_IF_ERROR(ring.Finish());

  NDT_ASSIGN_OR_RETURN(YamlMap tree, top.Map("tree_correction"));
  const char* const protos[3] = {"ll", "ll128", "simple"};
  for (int p = 0; p < 3; ++p) {
    NDT_RETURN_IF_ERROR(Row(tree, protos[p], 23, k.tree_correction[p]));
    for (double f : k.tree_correction[p])
      if (!(f > 0 && f <= 1)) return tree.Error(protos[p], "factors must be in (0, 1]");
  }
  NDT_RETURN_IF_ERROR(tree.Finish());

  NDT_RETURN_IF_ERROR(top.Finish());
  k.loaded = true;
  return k;
}

}  // namespace

StatusOr<NcclTuning> LoadNcclTuning(const std::string& data_dir) {
  NDT_ASSIGN_OR_RETURN(YamlMap top, LoadYamlMapFile(data_dir + "/nccl.yaml"));
  return FromMap(top);
}

StatusOr<NcclTuning> ParseNcclTuning(const std::string& text, const std::string& name) {
  NDT_ASSIGN_OR_RETURN(YamlMap top, LoadYamlMapString(text, name));
  return FromMap(top);
}

}  // namespace ndt
