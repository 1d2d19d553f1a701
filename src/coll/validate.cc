// File: coll/validate.cc
// Collectives validation suite (see validate.h).
#include "coll/validate.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <numeric>

#include "coll/collective.h"
#include "core/csv.h"
#include "core/units.h"
#include "topo/builders.h"

namespace ndt {
namespace {

bool Has(const std::string& s, const char* sub) { return s.find(sub) != std::string::npos; }

}  // namespace

StatusOr<std::string> SkuForSystem(const std::string& s) {
  if (Has(s, "GB300")) return std::string("Standard_ND128isr_GB300_v6");
  if (Has(s, "GB200")) return std::string("Standard_ND128isr_NDR_GB200_v6");
  if (Has(s, "H200")) return std::string("Standard_ND96isr_H200_v5");
  if (Has(s, "H100")) return std::string("Standard_ND96isr_H100_v5");
  if (Has(s, "A100-SXM4-80GB") || Has(s, "NDm A100 v4") || Has(s, "A100 80GB") ||
      Has(s, "ND96amsr"))
    return std::string("Standard_ND96amsr_A100_v4");
  if (Has(s, "A100")) return std::string("Standard_ND96asr_v4");
  if (Has(s, "V100") || Has(s, "NDv2") || Has(s, "ND40rs"))
    return std::string("Standard_ND40rs_v2");
  return Status::NotFound(
      "no VM size matches system '" + s +
      "'; name the GPU (A100, H100, H200, GB200, GB300, V100) in the system column");
}

StatusOr<double> LabelBytes(const std::string& label) {
  NDT_ASSIGN_OR_RETURN(double b, ParseSizeBytes(label));
  if (b <= 0) return Status::InvalidInput("size label '" + label + "' must be > 0");
  return std::exp2(std::round(std::log2(b)));
}

int NcclVersionOf(const std::string& software) {
  const size_t at = software.find("NCCL ");
  if (at == std::string::npos) return kPinnedNcclVersion;
  int major = 0, minor = 0, patch = 0;
  if (std::sscanf(software.c_str() + at + 5, "%d.%d.%d", &major, &minor, &patch) < 2)
    return kPinnedNcclVersion;
  return major * 10000 + minor * 100 + patch;
}

StatusOr<std::optional<Algo>> ForcedAlgo(const std::string& column, const std::string& note) {
  Algo a;
  if (!column.empty()) {
    NDT_RETURN_IF_ERROR(ParseAlgo(column, &a));
    return std::optional<Algo>(a);
  }
  if (Has(note, "NCCL default")) return std::optional<Algo>();
  auto word = [&](size_t i) {
    return std::isalnum(static_cast<unsigned char>(note[i])) || note[i] == '_';
  };
  const size_t env = note.find("NCCL_ALGO=");
  if (env != std::string::npos) {
    size_t end = env + 10;
    while (end < note.size() && word(end)) ++end;
    if (ParseAlgo(note.substr(env + 10, end - env - 10), &a).ok()) return std::optional<Algo>(a);
  }
  // "X algorithm": the word before the first " algorithm" that names one.
  for (size_t at = note.find(" algorithm"); at != std::string::npos;
       at = note.find(" algorithm", at + 1)) {
    size_t begin = at;
    while (begin > 0 && word(begin - 1)) --begin;
    if (begin < at && ParseAlgo(note.substr(begin, at - begin), &a).ok())
      return std::optional<Algo>(a);
  }
  return std::optional<Algo>();
}

StatusOr<int> GpusPerThreadOf(const std::string& column, const std::string& source,
                              int gpus_per_vm) {
  if (!column.empty()) {
    int g = 0;
    size_t used = 0;
    try {
      g = std::stoi(column, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != column.size() || g < 1 || g > gpus_per_vm)
      return Status::InvalidInput("gpus_per_thread '" + column + "' must be a number from 1 to " +
                                  std::to_string(gpus_per_vm) + " (GPUs of a VM)");
    return g;
  }
  if (Has(source, "AI-benchmarking-guide")) return gpus_per_vm;
  return 1;
}

StatusOr<std::vector<ValidationRow>> ValidateCollectives(const Catalog& cat, const FabricParams& fp,
                                                         const NcclCalibrationSet& nccl,
                                                         const std::string& shared_dir) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(shared_dir) / "validation";
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    return Status::NotFound("no validation folder at '" + root.string() +
                            "'; pass the shared folder with --data DIR");
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it);
       it.increment(ec))
    if (it->is_regular_file() && it->path().extension() == ".csv") files.push_back(it->path());
  std::sort(files.begin(), files.end());
  std::vector<ValidationRow> rows;
  for (const fs::path& f : files) {
    NDT_ASSIGN_OR_RETURN(CsvFile csv, CsvFile::Read(f.string()));
    const std::vector<std::string>& head = csv.header();
    std::map<std::string, int> col;
    for (int i = 0; i < static_cast<int>(head.size()); ++i) col[head[i]] = i;
    const char* need[] = {"system",    "nodes", "gpus", "collective", "message_size_label",
                          "busbw_GBps"};
    bool ok = true;
    for (const char* k : need) ok = ok && col.count(k);
    if (!ok) continue;
    const bool calib = Has(f.string(), "/calibration/");
    const std::string rel = fs::relative(f, root).string();
    for (const CsvRow& csv_row : csv.rows()) {
      const int lineno = csv_row.line;
      const std::vector<std::string>& v = csv_row.cells;
      auto get = [&](const char* k) -> std::string {
        int i = col[k];
        return i < static_cast<int>(v.size()) ? v[i] : "";
      };
      const std::string where = rel + ":" + std::to_string(lineno);
      NDT_ASSIGN_OR_RETURN(std::string sku_name, SkuForSystem(get("system")));
      NDT_ASSIGN_OR_RETURN(const SkuSpec* sku, cat.FindSku(sku_name));
      int nodes = 0, gpus = 0;
      double measured = 0;
      try {
        nodes = std::stoi(get("nodes"));
        gpus = std::stoi(get("gpus"));
        measured = std::stod(get("busbw_GBps"));
      } catch (const std::exception&) {
        return Status::InvalidInput(where + ": nodes, gpus and busbw_GBps must be numbers");
      }
      if (nodes < 1 || gpus < nodes || gpus % nodes != 0)
        return Status::InvalidInput(where + ": gpus must be a multiple of nodes >= 1");
      CollOp op;
      NDT_RETURN_IF_ERROR(ParseCollOp(get("collective"), &op));
      NDT_ASSIGN_OR_RETURN(double bytes, LabelBytes(get("message_size_label")));
      ClusterSpec spec;
      spec.sku = sku;
      spec.gpu = &cat.GpuOf(*sku);
      spec.vms = nodes;
      spec.gpus_per_vm = gpus / nodes;
      spec.fabric.tiers = ChooseTiers(spec);
      NDT_ASSIGN_OR_RETURN(Cluster c, BuildCluster(spec, fp));
      std::vector<int> group(c.num_gpus());
      std::iota(group.begin(), group.end(), 0);
      CollOptions opts;
      opts.calibration = &nccl;
      if (col.count("software")) opts.nccl_version = NcclVersionOf(get("software"));
      StatusOr<std::optional<Algo>> algo = ForcedAlgo(
          col.count("algorithm") ? get("algorithm") : "", col.count("note") ? get("note") : "");
      if (!algo.ok()) return Status::InvalidInput(where + ": " + algo.status().message());
      opts.algo = *algo;
      StatusOr<int> g = GpusPerThreadOf(col.count("gpus_per_thread") ? get("gpus_per_thread") : "",
                                        col.count("source") ? get("source") : "", gpus / nodes);
      if (!g.ok()) return Status::InvalidInput(where + ": " + g.status().message());
      opts.gpus_per_thread = *g;
      StatusOr<CollResult> forced = TimeCollective(c, op, bytes, group, opts);
      if (!forced.ok() && opts.algo) {  // not offered here: NCCL's own choice
        opts.algo.reset();
        forced = TimeCollective(c, op, bytes, group, opts);
      }
      NDT_ASSIGN_OR_RETURN(CollResult r, std::move(forced));
      ValidationRow row;
      row.suite = "collectives";
      row.workload = CollectivesWorkload(bytes);
      row.case_id = sku_name + " " + std::to_string(nodes) + "vm " + CollOpName(op) + " " +
                    get("message_size_label");
      row.sku = sku_name;
      row.metric = "busbw_GBps";
      row.unit = "GB/s";
      row.measured = measured;
      row.predicted = r.busbw_Bps / 1e9;
      row.calibration = calib;
      row.source = col.count("source") ? get("source") : rel;
      rows.push_back(row);
    }
  }
  return rows;
}

}  // namespace ndt
