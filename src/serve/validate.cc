#include "serve/validate.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>
#include <vector>

#include "core/csv.h"
#include "model/transformer.h"
#include "serve/run.h"

namespace ndt {

namespace {

// (metric, system) of every row of the serving calibration table; empty if it is absent.
std::vector<std::pair<std::string, std::string>> CalibrationMetrics(const std::string& path) {
  std::vector<std::pair<std::string, std::string>> out;
  StatusOr<CsvFile> f = CsvFile::Read(path);
  if (!f.ok()) return out;
  const int metric = f->Column("metric"), system = f->Column("system");
  if (metric < 0 || system < 0) return out;
  for (const CsvRow& r : f->rows()) {
    out.emplace_back(CsvFile::Cell(r, metric), CsvFile::Cell(r, system));
  }
  return out;
}

// A validation row is calibration when the serving calibration table holds the same run's
// iteration data: an "MLPerf <round> ... <scenario> mean TPOT" row on a system of the same GPU
// (the v4.1 H100 Server run, whose TPOT and TTFT src/serve/fit_serving.py fits).
bool IsCalibrationRun(const std::vector<std::pair<std::string, std::string>>& cal,
                      const std::string& round, const std::string& scenario,
                      const std::string& accelerator) {
  const std::string version = round.substr(round.rfind(' ') + 1);  // "inference v4.1" -> "v4.1"
  const std::string gpu = accelerator.substr(0, accelerator.find('-'));  // "H100-SXM5-80GB"
  for (const auto& [metric, system] : cal) {
    if (metric.starts_with("MLPerf " + version + " ") &&
        metric.find(" " + scenario + " mean TPOT") != std::string::npos &&
        system.find(gpu) != std::string::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::string ServingStackOfRound(const std::string& round) {
  // MLPerf Inference v4.x was published in 2024 (v4.1: August 2024), v5.x in 2025.
  return round.find("v4.") != std::string::npos ? "tensorrt-llm-2024" : "tensorrt-llm-2025";
}

StatusOr<std::vector<ValidationRow>> ValidateInference(
    const ServeData& data, const std::string& shared_dir,
    const std::map<std::string, ServingTraits>& traits) {
  const Catalog& catalog = *data.catalog;
  const std::string dir = shared_dir.empty() ? std::string(NDT_SHARED_DIR) : shared_dir;
  const std::string path = dir + "/validation/inference/mlperf_llama2_70b.csv";
  StatusOr<CsvFile> read = CsvFile::Read(path);
  if (read.status().code() == StatusCode::kNotFound)
    return Status::NotFound(path + ": cannot open the inference validation table");
  NDT_RETURN_IF_ERROR(read.status());
  const CsvFile& table = *read;
  const std::vector<std::string>& header = table.header();
  auto col = [&](const std::string& name) { return table.Column(name); };
  const std::vector<std::string> need = {"round",
                                         "system",
                                         "vm_size_equivalent",
                                         "gpus",
                                         "scenario",
                                         "output_tokens_per_s",
                                         "weights_dtype",
                                         "kv_dtype",
                                         "tp",
                                         "pp",
                                         "max_batch_per_instance",
                                         "max_num_tokens",
                                         "ttft_p99_limit_ms",
                                         "tpot_p99_limit_ms",
                                         "accelerator",
                                         "dataset",
                                         "mean_generated_tokens",
                                         "source"};
  for (const std::string& n : need) {
    if (col(n) < 0) return Status::InvalidInput(path + ":1: missing column '" + n + "'");
  }
  NDT_ASSIGN_OR_RETURN(TransformerSpec model, LoadModel("llama2-70b", ModelsDir(data.data_dir)));
  const auto calibration = CalibrationMetrics(dir + "/validation/calibration/serving.csv");
  std::vector<ValidationRow> rows;
  for (const CsvRow& row : table.rows()) {
    const int line_no = row.line;
    const std::vector<std::string>& c = row.cells;
    if (c.size() < header.size()) {
      return Status::InvalidInput(path + ":" + std::to_string(line_no) + ": too few columns");
    }
    auto get = [&](const char* name) { return c[col(name)]; };
    auto num = [&](const char* name, double* v) -> Status {
      std::istringstream s(get(name));
      if (!(s >> *v)) {
        return Status::InvalidInput(path + ":" + std::to_string(line_no) + ": " + name +
                                    " is not a number ('" + get(name) + "')");
      }
      return Status::Ok();
    };
    double gpus = 0, tp = 0, pp = 0, mb = 0, mnt = 0, mean = 0, measured = 0;
    NDT_RETURN_IF_ERROR(num("gpus", &gpus));
    NDT_RETURN_IF_ERROR(num("tp", &tp));
    NDT_RETURN_IF_ERROR(num("pp", &pp));
    NDT_RETURN_IF_ERROR(num("max_batch_per_instance", &mb));
    NDT_RETURN_IF_ERROR(num("max_num_tokens", &mnt));
    NDT_RETURN_IF_ERROR(num("mean_generated_tokens", &mean));
    NDT_RETURN_IF_ERROR(num("output_tokens_per_s", &measured));
    std::string where = path + ":" + std::to_string(line_no) + ": ";
    NDT_ASSIGN_OR_RETURN(const SkuSpec* sku, catalog.FindSku(get("vm_size_equivalent")));
    InferOptions o;
    o.vms = std::max(1, static_cast<int>(std::lround(gpus / sku->gpus)));
    o.tp = static_cast<int>(tp);
    o.pp = static_cast<int>(pp);
    o.max_batch = static_cast<int>(mb);
    o.max_num_tokens = static_cast<int>(mnt);
    if (!ParseDtype(get("weights_dtype"), &o.weights) || !ParseDtype(get("kv_dtype"), &o.kv)) {
      return Status::InvalidInput(where + "unknown weights_dtype or kv_dtype");
    }
    std::string scen = get("scenario");
    if (!ParseScenario(scen, &o.scenario)) {
      return Status::InvalidInput(where + "unknown scenario '" + scen + "'");
    }
    if (o.scenario != Scenario::kOffline) {
      double ttft_ms = 0, tpot_ms = 0;
      NDT_RETURN_IF_ERROR(num("ttft_p99_limit_ms", &ttft_ms));
      NDT_RETURN_IF_ERROR(num("tpot_p99_limit_ms", &tpot_ms));
      o.ttft_p99_s = ttft_ms * 1e-3;
      o.tpot_p99_s = tpot_ms * 1e-3;
    }
    // "datasets/x.csv" in the table is relative to shared/validation/inference/.
    NDT_ASSIGN_OR_RETURN(o.lengths,
                         LoadLengthsCsv(dir + "/validation/inference/" + get("dataset")));
    RescaleOutputs(mean, &o.lengths);
    if (auto it = traits.find(ServingStackOfRound(get("round"))); it != traits.end()) {
      o.host_overlap = it->second.host_overlap;
      o.tp_allreduce = it->second.tp_allreduce;
      o.cuda_graphs = it->second.cuda_graphs;
    }
    StatusOr<InferResult> r = RunInferenceOn(data, sku->name, model, o);
    if (!r.ok()) return r.status().WithPrefix(where);
    ValidationRow v;
    v.suite = "inference";
    v.case_id = get("round") + " " + sku->name + " x" + std::to_string(o.vms) + " " + scen + " TP" +
                std::to_string(o.tp) + " PP" + std::to_string(o.pp) + " " + get("weights_dtype");
    v.sku = sku->name;
    v.metric = "output_tokens_per_s";
    v.unit = "tokens/s";
    v.measured = measured;
    v.predicted = r->output_tokens_per_s;
    v.source = get("source");
    v.calibration = IsCalibrationRun(calibration, get("round"), scen, get("accelerator"));
    rows.push_back(std::move(v));
  }
  return rows;
}

}  // namespace ndt
