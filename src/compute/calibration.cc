// File: compute/calibration.cc
// Strict loader of data/calibration/compute.yaml (fitted on microbench.csv; see the file's
// `how:` and src/compute/fit_compute.py) and the lookups ArchCalibration::GemmFor and
// ComputeCalibration::For.
#include <cmath>
#include <string>
#include <vector>

#include "compute/compute.h"
#include "core/yaml.h"

namespace ndt {

const GemmFit& ArchCalibration::GemmFor(Precision p) const {
  auto it = gemm.find(p);
  if (it != gemm.end()) return it->second;
  for (Precision q : {Precision::kFp16, Precision::kBf16, Precision::kFp8, Precision::kFp4}) {
    it = gemm.find(q);
    if (it != gemm.end()) return it->second;
  }
  NDT_CHECK(!gemm.empty(), "calibration for '" + arch + "' has no GEMM fit");
  return gemm.begin()->second;
}

namespace {

// (rows, factor) points: linear in log2(rows) between them, the end values outside; 1 if none.
double InterpolateLog2(const std::vector<std::pair<double, double>>& pts, double rows) {
  if (pts.empty()) return 1.0;
  if (rows <= pts.front().first) return pts.front().second;
  if (rows >= pts.back().first) return pts.back().second;
  for (size_t i = 1; i < pts.size(); ++i) {
    if (rows > pts[i].first) continue;
    const double f =
        std::log2(rows / pts[i - 1].first) / std::log2(pts[i].first / pts[i - 1].first);
    return pts[i - 1].second + f * (pts[i].second - pts[i - 1].second);
  }
  return pts.back().second;
}

const std::vector<std::pair<double, double>>& ListFor(
    const std::vector<std::pair<double, double>>& arch_list,
    const std::map<std::string, std::vector<std::pair<double, double>>>& by_gpu,
    const std::string& gpu) {
  auto it = by_gpu.find(gpu);
  return it != by_gpu.end() ? it->second : arch_list;
}

}  // namespace

double ArchCalibration::GroupedGemmSlowdown(double rows, const std::string& gpu) const {
  return InterpolateLog2(ListFor(grouped_gemm_slowdown, grouped_gemm_slowdown_by_gpu, gpu), rows);
}

double ArchCalibration::GroupedGemmSlowdownIn(Precision p, double rows,
                                              const std::string& gpu) const {
  if (!grouped_gemm_precision || *grouped_gemm_precision == p) {
    return GroupedGemmSlowdown(rows, gpu);
  }
  auto it = grouped_gemm_by_precision.find(p == Precision::kFp16 ? Precision::kBf16 : p);
  if (it == grouped_gemm_by_precision.end()) return 1.0;
  return InterpolateLog2(ListFor(it->second.slowdown, it->second.by_gpu, gpu), rows);
}

const ArchCalibration& ComputeCalibration::For(const std::string& arch) const {
  auto it = archs.find(arch);
  if (it != archs.end()) return it->second;
  it = archs.find("default");
  NDT_CHECK(it != archs.end(), "compute calibration has no 'default' entry");
  return it->second;
}

namespace {

// The optional `serving:` block of an arch (compute.h ServingFit).
StatusOr<ServingFit> ParseServing(const YamlMap& y, const ArchCalibration& a) {
  ServingFit s;
  NDT_ASSIGN_OR_RETURN(YamlMap g, y.Map("gemm_fraction"));
  for (const std::string& key : g.Keys()) {
    Precision p;
    if (!ParsePrecision(key, &p)) return g.Error(key, "not a precision (fp16, bf16, fp8, fp4)");
    if (!a.gemm.count(p)) return g.Error(key, "the arch has no microbenchmark GEMM fit for it");
    NDT_ASSIGN_OR_RETURN(double f, g.Number(key));
    if (f <= 0 || f > 1) return g.Error(key, "must be in (0, 1]");
    s.gemm_fraction[p] = f;
  }
  NDT_RETURN_IF_ERROR(g.Finish());
  NDT_ASSIGN_OR_RETURN(s.attention_fraction, y.Number("attention_fraction"));
  NDT_ASSIGN_OR_RETURN(s.attention_hbm_fraction, y.Number("attention_hbm_fraction"));
  if (s.attention_fraction <= 0 || s.attention_fraction > 1) {
    return y.Error("attention_fraction", "must be in (0, 1]");
  }
  if (s.attention_hbm_fraction <= 0 || s.attention_hbm_fraction > 1) {
    return y.Error("attention_hbm_fraction", "must be in (0, 1]");
  }
  NDT_ASSIGN_OR_RETURN(Sourced o, y.Quantity("iteration_overhead", Dim::kTime));
  NDT_ASSIGN_OR_RETURN(Sourced ps, y.Quantity("overhead_per_seq", Dim::kTime));
  if (o.value < 0) return y.Error("iteration_overhead", "must be >= 0");
  if (ps.value < 0) return y.Error("overhead_per_seq", "must be >= 0");
  s.iteration_overhead_s = o.value;
  s.overhead_per_seq_s = ps.value;
  NDT_ASSIGN_OR_RETURN(std::string residuals, y.String("residuals"));
  NDT_ASSIGN_OR_RETURN(std::string how, y.String("how"));
  (void)residuals;
  (void)how;
  NDT_RETURN_IF_ERROR(y.Finish());
  return s;
}

StatusOr<AttentionRateFit> ParseRateFit(const YamlMap& d, const char* fraction_key,
                                        const char* blocks_key) {
  AttentionRateFit fit;
  NDT_ASSIGN_OR_RETURN(fit.fraction, d.Number(fraction_key));
  NDT_ASSIGN_OR_RETURN(fit.overhead_blocks, d.Number(blocks_key));
  if (fit.fraction <= 0 || fit.fraction > 1) return d.Error(fraction_key, "must be in (0, 1]");
  if (fit.overhead_blocks < 0 || fit.overhead_blocks > 1e3) {
    return d.Error(blocks_key, "must be in [0, 1000]");
  }
  return fit;
}

// A fallback arch's optional `fused_attention_ratio` (compute.h AttentionRateRatio): forward and
// backward, each {fraction, overhead_blocks} of this arch's GPU and {fallback_fraction,
// fallback_overhead_blocks} of the fallback's, with unit, source, residuals and how.
Status ParseFusedAttentionRatio(const YamlMap& y, ArchCalibration* a) {
  NDT_ASSIGN_OR_RETURN(std::optional<YamlMap> r, y.OptionalMap("fused_attention_ratio"));
  if (!r) return Status::Ok();
  for (const char* dir : {"forward", "backward"}) {
    NDT_ASSIGN_OR_RETURN(YamlMap d, r->Map(dir));
    AttentionRateRatio ratio;
    NDT_ASSIGN_OR_RETURN(ratio.gpu, ParseRateFit(d, "fraction", "overhead_blocks"));
    NDT_ASSIGN_OR_RETURN(ratio.fallback,
                         ParseRateFit(d, "fallback_fraction", "fallback_overhead_blocks"));
    NDT_RETURN_IF_ERROR(d.Finish());
    (std::string(dir) == "forward" ? a->fused_attention_ratio_forward
                                   : a->fused_attention_ratio_backward) = ratio;
  }
  for (const char* key : {"unit", "source", "residuals", "how"}) {
    NDT_ASSIGN_OR_RETURN(std::string text, r->String(key));
    (void)text;
  }
  return r->Finish();
}

StatusOr<ArchCalibration> ParseArch(const YamlMap& y) {
  ArchCalibration a;
  NDT_ASSIGN_OR_RETURN(a.arch, y.String("arch"));
  NDT_ASSIGN_OR_RETURN(a.how, y.String("how"));
  NDT_ASSIGN_OR_RETURN(std::optional<std::string> caveat, y.OptionalString("serving_caveat"));
  a.serving_caveat = caveat.value_or("");
  NDT_ASSIGN_OR_RETURN(std::optional<std::string> fb, y.OptionalString("fallback"));
  if (fb) {
    a.fallback = *fb;
    NDT_RETURN_IF_ERROR(ParseFusedAttentionRatio(y, &a));
    NDT_RETURN_IF_ERROR(y.Finish());
    return a;
  }
  NDT_ASSIGN_OR_RETURN(std::vector<int64_t> tile, y.IntList("tile"));
  if (tile.size() != 2 || tile[0] <= 0 || tile[1] <= 0) {
    return y.Error("tile", "must be [tile_m, tile_n] with positive sizes, e.g. [128, 256]");
  }
  a.tile_m = static_cast<int>(tile[0]);
  a.tile_n = static_cast<int>(tile[1]);
  if (y.Has("more_tiles")) {
    NDT_ASSIGN_OR_RETURN(std::vector<int64_t> more, y.IntList("more_tiles"));
    if (more.size() % 2 != 0) {
      return y.Error("more_tiles", "must list [tile_m, tile_n] pairs, e.g. [128, 192, 128, 128]");
    }
    for (size_t i = 0; i < more.size(); i += 2) {
      if (more[i] <= 0 || more[i + 1] <= 0 || more[i] > 4096 || more[i + 1] > 4096) {
        return y.Error("more_tiles", "tile sizes must be between 1 and 4096");
      }
      a.more_tiles.emplace_back(static_cast<int>(more[i]), static_cast<int>(more[i + 1]));
    }
  }
  NDT_ASSIGN_OR_RETURN(std::optional<int64_t> sms, y.OptionalInt("sms_if_unknown"));
  a.sms_if_unknown = static_cast<int>(sms.value_or(0));
  NDT_ASSIGN_OR_RETURN(YamlMap g, y.Map("gemm"));
  for (const std::string& key : g.Keys()) {
    Precision p;
    if (!ParsePrecision(key, &p)) return g.Error(key, "not a precision (fp16, bf16, fp8, fp4)");
    NDT_ASSIGN_OR_RETURN(YamlMap f, g.Map(key));
    GemmFit fit;
    NDT_ASSIGN_OR_RETURN(fit.fraction, f.Number("fraction"));
    if (fit.fraction <= 0 || fit.fraction > 1) return f.Error("fraction", "must be in (0, 1]");
    NDT_ASSIGN_OR_RETURN(Sourced launch, f.Quantity("launch", Dim::kTime));
    NDT_ASSIGN_OR_RETURN(Sourced wave, f.Quantity("wave_overhead", Dim::kTime));
    NDT_ASSIGN_OR_RETURN(std::string residuals, f.String("residuals"));
    (void)residuals;
    fit.launch_s = launch.value;
    fit.wave_overhead_s = wave.value;
    if (f.Has("split_accumulate")) {
      NDT_ASSIGN_OR_RETURN(YamlMap sa, f.Map("split_accumulate"));
      NDT_ASSIGN_OR_RETURN(fit.split_accumulate_fraction, sa.Number("fraction"));
      if (fit.split_accumulate_fraction <= 0 || fit.split_accumulate_fraction > 1) {
        return sa.Error("fraction", "must be in (0, 1]");
      }
      NDT_ASSIGN_OR_RETURN(std::string sa_residuals, sa.String("residuals"));
      NDT_ASSIGN_OR_RETURN(std::string sa_how, sa.String("how"));
      (void)sa_residuals;
      (void)sa_how;
      NDT_RETURN_IF_ERROR(sa.Finish());
    }
    NDT_RETURN_IF_ERROR(f.Finish());
    a.gemm[p] = fit;
  }
  NDT_RETURN_IF_ERROR(g.Finish());
  if (a.gemm.empty()) return y.Error("gemm", "needs at least one precision's fit");
  NDT_ASSIGN_OR_RETURN(a.attention_fraction, y.Number("attention_fraction"));
  NDT_ASSIGN_OR_RETURN(a.hbm_fraction, y.Number("hbm_fraction"));
  NDT_ASSIGN_OR_RETURN(a.unfused_attention_efficiency, y.Number("unfused_attention_efficiency"));
  for (double v : {a.attention_fraction, a.hbm_fraction, a.unfused_attention_efficiency}) {
    if (v <= 0 || v > 1) return y.Error("hbm_fraction", "fractions must be in (0, 1]");
  }
  if (y.Has("attention_backward_ratio")) {
    NDT_ASSIGN_OR_RETURN(a.attention_backward_ratio, y.Number("attention_backward_ratio"));
    if (a.attention_backward_ratio <= 0 || a.attention_backward_ratio > 2) {
      return y.Error("attention_backward_ratio", "must be in (0, 2]");
    }
  }
  NDT_ASSIGN_OR_RETURN(std::optional<YamlMap> fused, y.OptionalMap("fused_attention"));
  if (fused) {
    NDT_ASSIGN_OR_RETURN(int64_t block, fused->Int("kv_block"));
    if (block <= 0 || block > 4096) return fused->Error("kv_block", "must be in 1..4096");
    a.fused_attention_kv_block = static_cast<int>(block);
    for (const char* dir : {"forward", "backward"}) {
      NDT_ASSIGN_OR_RETURN(YamlMap d, fused->Map(dir));
      NDT_ASSIGN_OR_RETURN(AttentionRateFit fit, ParseRateFit(d, "fraction", "overhead_blocks"));
      NDT_RETURN_IF_ERROR(d.Finish());
      (std::string(dir) == "forward" ? a.fused_attention_forward : a.fused_attention_backward) =
          fit;
    }
    NDT_ASSIGN_OR_RETURN(std::string residuals, fused->String("residuals"));
    NDT_ASSIGN_OR_RETURN(std::string how, fused->String("how"));
    (void)residuals;
    (void)how;
    NDT_RETURN_IF_ERROR(fused->Finish());
  }
  NDT_ASSIGN_OR_RETURN(std::optional<YamlMap> transpose, y.OptionalMap("transpose_kernels"));
  if (transpose) {
    NDT_ASSIGN_OR_RETURN(Sourced rate, transpose->Quantity("rate", Dim::kBandwidth));
    if (rate.value <= 0) return transpose->Error("rate", "must be positive");
    a.transpose_Bps = rate.value;
    NDT_ASSIGN_OR_RETURN(std::string source, transpose->String("source"));
    NDT_ASSIGN_OR_RETURN(std::string how, transpose->String("how"));
    (void)source;
    (void)how;
    NDT_RETURN_IF_ERROR(transpose->Finish());
  }
  NDT_ASSIGN_OR_RETURN(std::optional<YamlMap> grouped, y.OptionalMap("grouped_gemm"));
  if (grouped) {
    // slowdown: [rows, factor, rows, factor, ...], rows strictly ascending, factors in [1, 4].
    auto points = [&](const YamlMap& m,
                      std::string_view key) -> StatusOr<std::vector<std::pair<double, double>>> {
      NDT_ASSIGN_OR_RETURN(std::vector<double> pts, m.NumberList(key));
      if (pts.empty() || pts.size() % 2 != 0) {
        return m.Error(key, "must list [rows, factor] pairs, e.g. [256, 1.2, 1024, 1]");
      }
      std::vector<std::pair<double, double>> out;
      for (size_t i = 0; i < pts.size(); i += 2) {
        if (pts[i] < 1 || (i > 0 && pts[i] <= pts[i - 2])) {
          return m.Error(key, "rows per group must be >= 1 and strictly ascending");
        }
        if (pts[i + 1] < 1 || pts[i + 1] > 4) return m.Error(key, "factors must be in [1, 4]");
        out.emplace_back(pts[i], pts[i + 1]);
      }
      return out;
    };
    NDT_ASSIGN_OR_RETURN(std::optional<std::string> prec, grouped->OptionalString("precision"));
    if (prec) {
      Precision p;
      if (!ParsePrecision(*prec, &p)) {
        return grouped->Error("precision", "must be a precision such as fp8 (got " + *prec + ")");
      }
      a.grouped_gemm_precision = p;
    }
    // slowdown and by_gpu of one precision's block (the main one, or a by_precision entry).
    auto lists =
        [&](const YamlMap& m, std::vector<std::pair<double, double>>* slowdown,
            std::map<std::string, std::vector<std::pair<double, double>>>* per_gpu) -> Status {
      NDT_ASSIGN_OR_RETURN(*slowdown, points(m, "slowdown"));
      NDT_ASSIGN_OR_RETURN(std::optional<YamlMap> by_gpu, m.OptionalMap("by_gpu"));
      if (by_gpu) {
        for (const std::string& gpu : by_gpu->Keys()) {
          NDT_ASSIGN_OR_RETURN((*per_gpu)[gpu], points(*by_gpu, gpu));
        }
        NDT_RETURN_IF_ERROR(by_gpu->Finish());
      }
      return Status::Ok();
    };
    NDT_RETURN_IF_ERROR(lists(*grouped, &a.grouped_gemm_slowdown, &a.grouped_gemm_slowdown_by_gpu));
    NDT_ASSIGN_OR_RETURN(std::optional<YamlMap> more, grouped->OptionalMap("by_precision"));
    if (more) {
      if (!a.grouped_gemm_precision) {
        return grouped->Error("by_precision", "needs `precision:` for the main list");
      }
      for (const std::string& name : more->Keys()) {
        Precision q;
        if (!ParsePrecision(name, &q) || q == *a.grouped_gemm_precision || q == Precision::kFp16) {
          return more->Error(name,
                             "must be a precision other than the main list's, such as "
                             "bf16 (fp16 reads bf16's)");
        }
        NDT_ASSIGN_OR_RETURN(YamlMap entry, more->Map(name));
        ArchCalibration::GroupedGemmPoints& g = a.grouped_gemm_by_precision[q];
        NDT_RETURN_IF_ERROR(lists(entry, &g.slowdown, &g.by_gpu));
        NDT_RETURN_IF_ERROR(entry.Finish());
      }
      NDT_RETURN_IF_ERROR(more->Finish());
    }
    NDT_ASSIGN_OR_RETURN(std::string residuals, grouped->String("residuals"));
    NDT_ASSIGN_OR_RETURN(std::string how, grouped->String("how"));
    (void)residuals;
    (void)how;
    NDT_RETURN_IF_ERROR(grouped->Finish());
  }
  NDT_ASSIGN_OR_RETURN(std::optional<YamlMap> small, y.OptionalMap("small_m_gemm"));
  if (small) {
    NDT_ASSIGN_OR_RETURN(std::vector<int64_t> tiles, small->IntList("tiles_m"));
    if (tiles.empty()) return small->Error("tiles_m", "must list at least one tile, e.g. [16, 64]");
    for (int64_t t : tiles) {
      if (t < 1 || t >= a.tile_m) {
        return small->Error("tiles_m",
                            "small-M tiles must be between 1 and the arch's tile_m - 1 (" +
                                std::to_string(a.tile_m - 1) + ")");
      }
      a.small_m_tiles.push_back(static_cast<int>(t));
    }
    NDT_ASSIGN_OR_RETURN(std::string source, small->String("source"));
    (void)source;
    NDT_RETURN_IF_ERROR(small->Finish());
  }
  NDT_ASSIGN_OR_RETURN(std::optional<YamlMap> wo, y.OptionalMap("weight_only_gemm"));
  if (wo) {
    ArchCalibration::WeightOnlyGemm w;
    NDT_ASSIGN_OR_RETURN(std::vector<int64_t> tiles, wo->IntList("tiles_m"));
    if (tiles.empty()) return wo->Error("tiles_m", "must list at least one tile, e.g. [16, 128]");
    for (int64_t t : tiles) {
      if (t < 1 || t > 4096) return wo->Error("tiles_m", "tile sizes must be between 1 and 4096");
      w.tiles_m.push_back(static_cast<int>(t));
    }
    NDT_ASSIGN_OR_RETURN(int64_t tn, wo->Int("tile_n"));
    if (tn < 1 || tn > 4096) return wo->Error("tile_n", "must be between 1 and 4096");
    w.tile_n = static_cast<int>(tn);
    for (const char* key : {"dequant_ops_8bit", "dequant_ops_4bit"}) {
      NDT_ASSIGN_OR_RETURN(double ops, wo->Number(key));
      if (ops < 0 || ops > 100) return wo->Error(key, "must be in [0, 100]");
      (std::string(key) == "dequant_ops_8bit" ? w.dequant_ops_8bit : w.dequant_ops_4bit) = ops;
    }
    NDT_ASSIGN_OR_RETURN(std::string source, wo->String("source"));
    (void)source;
    NDT_RETURN_IF_ERROR(wo->Finish());
    a.weight_only_gemm = w;
  }
  NDT_ASSIGN_OR_RETURN(Sourced ko, y.Quantity("kernel_overhead", Dim::kTime));
  a.kernel_overhead_s = ko.value;
  NDT_ASSIGN_OR_RETURN(std::optional<YamlMap> serving, y.OptionalMap("serving"));
  if (serving) {
    NDT_ASSIGN_OR_RETURN(ServingFit fit, ParseServing(*serving, a));
    a.serving = fit;
  }
  NDT_RETURN_IF_ERROR(y.Finish());
  return a;
}

StatusOr<ComputeCalibration> FromYaml(const YamlMap& y) {
  ComputeCalibration c;
  c.source = y.file();
  NDT_ASSIGN_OR_RETURN(std::string how, y.String("how"));
  (void)how;
  NDT_ASSIGN_OR_RETURN(std::vector<YamlMap> list, y.MapList("archs"));
  for (const YamlMap& m : list) {
    NDT_ASSIGN_OR_RETURN(ArchCalibration a, ParseArch(m));
    if (c.archs.count(a.arch)) return m.Error("arch", "duplicate arch '" + a.arch + "'");
    c.archs[a.arch] = a;
  }
  NDT_RETURN_IF_ERROR(y.Finish());
  // Resolve fallbacks (one level: a fallback must name an arch with its own fit).
  for (auto& [name, a] : c.archs) {
    if (a.fallback.empty()) continue;
    auto it = c.archs.find(a.fallback);
    if (it == c.archs.end() || !it->second.fallback.empty()) {
      return Status::InvalidInput(c.source + ": arch '" + name + "': fallback '" + a.fallback +
                                  "' must name an arch with its own fit");
    }
    ArchCalibration resolved = it->second;
    resolved.arch = name;
    resolved.fallback = a.fallback;
    resolved.how = a.how;
    if (!a.serving_caveat.empty()) resolved.serving_caveat = a.serving_caveat;
    resolved.fused_attention_ratio_forward = a.fused_attention_ratio_forward;
    resolved.fused_attention_ratio_backward = a.fused_attention_ratio_backward;
    a = resolved;
  }
  if (!c.archs.count("default")) {
    return Status::InvalidInput(c.source + ": needs an arch 'default' entry");
  }
  return c;
}

}  // namespace

StatusOr<ComputeCalibration> LoadComputeCalibrationFile(const std::string& path) {
  NDT_ASSIGN_OR_RETURN(YamlMap y, LoadYamlMapFile(path));
  return FromYaml(y);
}

StatusOr<ComputeCalibration> ParseComputeCalibration(const std::string& text,
                                                     const std::string& name) {
  NDT_ASSIGN_OR_RETURN(YamlMap y, LoadYamlMapString(text, name));
  return FromYaml(y);
}

StatusOr<ComputeCalibration> LoadComputeCalibration(const std::string& data_dir) {
  const std::string dir = data_dir.empty() ? std::string(NDT_DATA_DIR) : data_dir;
  return LoadComputeCalibrationFile(dir + "/calibration/compute.yaml");
}

}  // namespace ndt
