#include "serve/validate.h"

#include <algorithm>
#include <cmath>
#include <regex>
#include <sstream>
#include <utility>
#include <vector>

#include "core/csv.h"
#include "model/transformer.h"
#include "serve/run.h"

namespace ndt {

namespace {

constexpr const char* kB200StandIn = "Calibration_DGX_B200";

// The GPU in a case name: "B200" for the stand-in, else the size name's next-to-last word
// (Standard_ND128isr_NDR_GB200_v6 -> GB200), as fit_serving.py names its cases.
std::string GpuWord(const std::string& sku) {
  if (sku == kB200StandIn) return "B200";
  const size_t last = sku.rfind('_');
  const size_t prev = sku.rfind('_', last - 1);
  return sku.substr(prev + 1, last - prev - 1);
}

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

StatusOr<Catalog> WithServingStandIns(const Catalog& catalog) {
  NDT_ASSIGN_OR_RETURN(const SkuSpec* h100, catalog.FindSku("Standard_ND96isr_H100_v5"));
  NDT_ASSIGN_OR_RETURN(const GpuSpec* b200, catalog.FindGpu("B200"));
  SkuSpec s = *h100;
  s.name = kB200StandIn;
  s.aliases = {};
  s.series = "DGX B200 (calibration only)";
  s.description = "8x B200, NVLink 5 + NVSwitch";
  s.gpu = b200->name;
  s.gpu_memory_bytes = 180e9;  // "180 GB" (DGX B200), as fit_serving.py's b200_vm
  Catalog out = catalog;
  NDT_RETURN_IF_ERROR(out.AddSku(std::move(s)));
  return out;
}

std::pair<int, int> TrtllmBenchKnobs(const TransformerSpec& model, double gpu_memory_bytes,
                                     Dtype weights, Dtype kv, int tp, int pp, int isl, int osl) {
  // trtllm-bench's own bytes per element: NVFP4 0.5 (no block scales counted), FP8 1.
  auto bytes = [](Dtype d) { return d == Dtype::kFp4 ? 0.5 : d == Dtype::kFp8 ? 1.0 : 2.0; };
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  const double kv_token = 2.0 * static_cast<double>(model.layers) *
                          static_cast<double>(std::max<int64_t>(tp, model.kv_heads)) *
                          static_cast<double>(model.head_dim) * bytes(kv) / kGiB;
  const double engine = CountParams(model).total * bytes(weights) / kGiB;
  const double requests =
      (gpu_memory_bytes / kGiB * tp * pp - engine) * 0.95 / (kv_token * (isl + osl));
  const double raw_bs = std::min(requests, 4096.0) / pp;
  const double raw_tok = std::min(raw_bs * (1 + static_cast<double>(isl) / osl), 32768.0);
  auto up = [](double x, int step) { return step * static_cast<int>(std::ceil(x / step)); };
  const int bs = raw_bs < 256    ? std::max(64, up(raw_bs, 32))
                 : raw_bs < 1024 ? up(raw_bs, 128)
                                 : up(raw_bs, 256);
  const int tok = raw_tok < 4096   ? std::max(2048, up(raw_tok, 256))
                  : raw_tok < 8192 ? up(raw_tok, 512)
                                   : up(raw_tok, 1024);
  // Chunked prefill off (trtllm-bench's default): at least the longest prompt + max batch.
  return {bs, std::max(tok, isl + bs)};
}

StatusOr<std::vector<ValidationRow>> ValidateServingCalibration(
    const ServeData& data, const std::string& shared_dir,
    const std::map<std::string, ServingTraits>& traits) {
  const std::string dir = shared_dir.empty() ? std::string(NDT_SHARED_DIR) : shared_dir;
  const std::string path = dir + "/validation/calibration/serving.csv";
  StatusOr<CsvFile> read = CsvFile::Read(path);
  if (read.status().code() == StatusCode::kNotFound) return std::vector<ValidationRow>{};
  NDT_RETURN_IF_ERROR(read.status());
  const CsvFile& table = *read;
  const int c_system = table.Column("system"), c_metric = table.Column("metric"),
            c_value = table.Column("value"), c_unit = table.Column("unit"),
            c_cond = table.Column("conditions"), c_source = table.Column("source");
  if (c_system < 0 || c_metric < 0 || c_value < 0 || c_unit < 0 || c_cond < 0 || c_source < 0) {
    return Status::InvalidInput(
        path + ":1: needs columns system, metric, value, unit, conditions, source");
  }
  struct Case {
    std::string name, sku, model, stack;
    InferOptions o;
    int64_t seq = 0;              // > 0: the model's sequence length overridden (--seq)
    double measured_per_gpu = 0;  // or, for a TPOT row, 1 / the measured mean TPOT
    bool tpot = false;            // compare 1 / mean TPOT (a per-sequence rate)
    const CsvRow* row = nullptr;
  };
  std::vector<Case> cases;
  auto sku_of = [](const std::string& system) -> std::string {
    if (system.find("GB200") != std::string::npos) return "Standard_ND128isr_NDR_GB200_v6";
    if (system.find("B200") != std::string::npos) return kB200StandIn;
    if (system.find("H200") != std::string::npos) return "Standard_ND96isr_H200_v5";
    if (system.find("H100") != std::string::npos) return "Standard_ND96isr_H100_v5";
    return "";
  };
  // A number stated in the text of the row whose metric is `metric` ("" when absent).
  auto stated = [&](const std::string& metric, int column, const std::string& pattern) {
    for (const CsvRow& r : table.rows()) {
      std::smatch sm;
      const std::string text = CsvFile::Cell(r, column);
      if (CsvFile::Cell(r, c_metric) == metric && std::regex_search(text, sm, std::regex(pattern)))
        return sm[1].str();
    }
    return std::string();
  };
  auto number = [](const std::string& text) {
    double v = 0;
    std::istringstream(text) >> v;
    return v;
  };
  // The value of the row whose metric is `metric` (0 when absent).
  auto value_of = [&](const std::string& metric) {
    for (const CsvRow& r : table.rows()) {
      if (CsvFile::Cell(r, c_metric) == metric) return number(CsvFile::Cell(r, c_value));
    }
    return 0.0;
  };
  // The MLPerf Llama-2-70B deployment of the v5.0 B200 rows: 8 x TP1, FP4, the MLPerf dataset
  // with the run's mean output length (tokens / samples, rounded to 0.1 as fit_serving.py).
  auto b200_mlperf = [&](Case* c, double mean_output) -> Status {
    c->model = "llama2-70b";
    c->stack = "tensorrt-llm-2025";
    c->o.weights = Dtype::kFp4;
    c->o.tp = 1;
    c->o.max_batch = 2048;
    c->o.max_num_tokens = 3584;
    NDT_ASSIGN_OR_RETURN(c->o.lengths, LoadDataset("mlperf-llama2-70b", data.data_dir));
    RescaleOutputs(mean_output, &c->o.lengths);
    return Status::Ok();
  };
  // The Server/Interactive limits of the MLPerf dataset (the run reports them; the load is fixed).
  NDT_ASSIGN_OR_RETURN(std::optional<DatasetPreset> mlperf,
                       FindDatasetPreset("mlperf-llama2-70b", data.data_dir));
  const double b200_offline =
      value_of("MLPerf v5.0 Llama2-70B-99.9 Offline output tokens/s (8 GPUs)");
  const double b200_samples =
      number(stated("MLPerf v5.0 Llama2-70B-99.9 Offline output tokens/s (8 GPUs)", c_cond,
                    R"(([0-9.]+) samples/s)"));
  const double b200_mean_output =
      b200_samples > 0 ? std::round(10 * b200_offline / b200_samples) / 10 : 0.0;
  const std::regex v10(
      R"(TRT-LLM (v1\.0|v0\.20) Llama-3\.3-70B (FP4|FP8) TP(\d) total output tok/s ISL/OSL (\d+)/(\d+))");
  const std::regex v014(
      R"(TRT-LLM v0\.14 LLaMA-v3-70B FP8 TP(\d) (?:total tok/s )?ISL/OSL (\d+)/(\d+))");
  const std::regex azure70(R"(TRT-LLM Llama-3-70B FP8 TP4 throughput ISL/OSL (\d+)/(\d+))");
  const std::regex azure8(R"(TRT-LLM Llama-3\.1-8B FP8 TP1 throughput ISL/OSL (\d+)/(\d+))");
  for (const CsvRow& row : table.rows()) {
    const std::string metric = CsvFile::Cell(row, c_metric);
    const std::string system = CsvFile::Cell(row, c_system);
    const std::string where = path + ":" + std::to_string(row.line) + ": ";
    double value = 0;
    {
      std::istringstream in(CsvFile::Cell(row, c_value));
      if (!(in >> value)) continue;  // "845.82 / 1526.29": not a row fit_serving.py runs
    }
    Case c;
    c.row = &row;
    c.sku = sku_of(system);
    c.o.vms = 1;
    c.o.pp = 1;
    c.o.kv = Dtype::kFp8;
    c.o.weights = Dtype::kFp8;
    std::smatch m;
    if (metric == "MLPerf v5.0 Llama2-70B-99.9 Offline output tokens/s (8 GPUs)") {
      if (!(b200_mean_output > 0)) {
        return Status::InvalidInput(where + "conditions: no 'N samples/s'");
      }
      c.name = "MLPerf v5.0 B200 Offline";
      NDT_RETURN_IF_ERROR(b200_mlperf(&c, b200_mean_output));
      c.measured_per_gpu = value / 8;
    } else if ((metric == "MLPerf v5.0 Llama2-70B Server mean TPOT" &&
                system.find("DGX") != std::string::npos) ||
               metric == "MLPerf v5.0 Llama2-70B-Interactive Server mean TPOT") {
      // Mean TPOT at NVIDIA's target rate (the tokens/s row's target_qps): 364 Server, 220
      // Interactive (its own engine: batch 768, 768 tokens).
      const bool inter = metric.find("Interactive") != std::string::npos;
      const double qps = number(stated(inter ? "MLPerf v5.0 Llama2-70B-Interactive-99 Server "
                                               "output tokens/s (8 GPUs)"
                                             : "MLPerf v5.0 Llama2-70B-99.9 Server output "
                                               "tokens/s (8 GPUs)",
                                       c_cond, R"(target_qps ([0-9.]+))"));
      if (!(qps > 0) || !(b200_mean_output > 0)) {
        return Status::InvalidInput(where + "no target_qps or samples/s for this run");
      }
      c.name =
          std::string("MLPerf v5.0 B200 ") + (inter ? "Interactive" : "Server") + " 1/mean TPOT";
      NDT_RETURN_IF_ERROR(b200_mlperf(&c, b200_mean_output));
      if (inter) c.o.max_batch = c.o.max_num_tokens = 768;
      c.o.scenario = inter ? Scenario::kInteractive : Scenario::kServer;
      c.o.qps = qps;
      c.tpot = true;
      c.measured_per_gpu = 1 / (value * 1e-3);
    } else if (metric == "MLPerf v4.1 Llama2-70B Server mean TPOT" ||
               metric == "MLPerf v4.1 Llama2-70B-99 Server tokens/s (8 GPUs)") {
      // The v4.1 Hopper Server runs at their measured rate (tokens/s / mean output tokens, the
      // validation table's mean_generated_tokens: 290.3 H100, 291.2 H200, as fit_serving.py).
      const bool h200 = metric.find("-99 Server") != std::string::npos;
      const double mean_output = h200 ? 291.2 : 290.3;
      const double tokens =
          h200 ? value
               : value_of("MLPerf v4.1 (Aug 2024) Llama2-70B-99.9 Server tokens/s (8 GPUs)");
      const double tpot_ms =
          h200 ? number(stated(metric, table.Column("note"), R"(mean TPOT ([0-9.]+) ms)")) : value;
      if (!(tokens > 0) || !(tpot_ms > 0)) {
        return Status::InvalidInput(where + "no Server tokens/s or mean TPOT for this run");
      }
      c.name =
          std::string("MLPerf v4.1 ") + (h200 ? "H200 TP1" : "H100 TP2") + " Server 1/mean TPOT";
      c.model = "llama2-70b";
      c.stack = "tensorrt-llm-2024";
      c.o.tp = h200 ? 1 : 2;
      c.o.max_batch = h200 ? 896 : 1024;
      c.o.max_num_tokens = 4096;
      NDT_ASSIGN_OR_RETURN(c.o.lengths, LoadDataset("mlperf-llama2-70b", data.data_dir));
      RescaleOutputs(mean_output, &c.o.lengths);
      c.o.scenario = Scenario::kServer;
      c.o.qps = std::round(1e4 * tokens / mean_output) / 1e4;  // fit_serving.py's "%.4f"
      c.tpot = true;
      c.measured_per_gpu = 1 / (tpot_ms * 1e-3);
    } else if (std::regex_match(metric, m, v10)) {
      c.o.tp = std::stoi(m[3].str());
      c.name = "TRT-LLM " + m[1].str() + " " + GpuWord(c.sku) + " 70B " + m[2].str() + " TP" +
               m[3].str() + " " + m[4].str() + "/" + m[5].str();
      c.model = "llama3-70b";
      c.seq = 131072;  // Llama 3.3's context (config.json max_position_embeddings)
      c.stack = "tensorrt-llm-2025";
      c.o.weights = m[2].str() == "FP4" ? Dtype::kFp4 : Dtype::kFp8;
      c.o.lengths = {{std::stoi(m[4].str()), std::stoi(m[5].str())}};
      c.o.cuda_graph_padding = true;  // the perf-overview's llm_options.yml
      const bool per_gpu = CsvFile::Cell(row, c_unit).find("=per GPU") != std::string::npos;
      c.measured_per_gpu = value / (per_gpu ? 1 : c.o.tp);
    } else if (std::regex_match(metric, m, v014)) {
      c.o.tp = std::stoi(m[1].str());
      if (c.sku == "Standard_ND96isr_H100_v5" && c.o.tp == 1) continue;  // not fitted (above)
      c.name = "TRT-LLM v0.14 " + GpuWord(c.sku) + " 70B FP8 TP" + m[1].str() + " " + m[2].str() +
               "/" + m[3].str();
      c.model = "llama3-70b";
      c.stack = "tensorrt-llm-2024";
      c.o.max_num_tokens = 8192;
      c.o.lengths = {{std::stoi(m[2].str()), std::stoi(m[3].str())}};
      c.measured_per_gpu = value / c.o.tp;
    } else if (std::regex_match(metric, m, azure70) || std::regex_match(metric, m, azure8)) {
      const bool is8b = metric.find("8B") != std::string::npos;
      c.sku = "Standard_ND128isr_NDR_GB200_v6";
      c.o.tp = is8b ? 1 : 4;
      c.name = std::string("Azure GB200 ") + (is8b ? "8B FP8 TP1 " : "70B FP8 TP4 ") + m[1].str() +
               "/" + m[2].str();
      c.model = is8b ? "llama3-8b" : "llama3-70b";
      c.stack = "tensorrt-llm-2025";
      c.o.requests = 1000;
      c.o.lengths = {{std::stoi(m[1].str()), std::stoi(m[2].str())}};
      c.measured_per_gpu = value / c.o.tp;
    } else {
      continue;
    }
    if (c.sku.empty()) return Status::InvalidInput(where + "system '" + system + "': no VM size");
    if (c.o.scenario != Scenario::kOffline && mlperf.has_value()) {
      const LatencyLimits& l =
          c.o.scenario == Scenario::kInteractive ? mlperf->interactive : mlperf->server;
      c.o.ttft_p99_s = l.ttft_s;
      c.o.tpot_p99_s = l.tpot_s;
    }
    cases.push_back(std::move(c));
  }
  std::vector<ValidationRow> rows;
  std::map<std::string, TransformerSpec> models;
  for (Case& c : cases) {
    if (!models.contains(c.model)) {
      NDT_ASSIGN_OR_RETURN(models[c.model], LoadModel(c.model, ModelsDir(data.data_dir)));
    }
    TransformerSpec model = models[c.model];
    if (c.seq > 0) {
      model.seq_len = c.seq;
      NDT_RETURN_IF_ERROR(Validate(model));
    }
    NDT_ASSIGN_OR_RETURN(const SkuSpec* sku, data.catalog->FindSku(c.sku));
    if (c.o.max_batch == 0 && c.o.max_num_tokens == 0) {  // trtllm-bench's own knobs
      const RequestLengths& l = c.o.lengths.front();
      std::tie(c.o.max_batch, c.o.max_num_tokens) = TrtllmBenchKnobs(
          model, data.catalog->GpuOf(*sku).memory_bytes, c.o.weights, c.o.kv, c.o.tp, c.o.pp,
          static_cast<int>(l.input_tokens), static_cast<int>(l.output_tokens));
      c.o.guaranteed_no_evict = true;  // trtllm-bench's default --scheduler_policy
    }
    if (auto it = traits.find(c.stack); it != traits.end()) {
      c.o.host_overlap = it->second.host_overlap;
      c.o.tp_allreduce = it->second.tp_allreduce;
      c.o.cuda_graphs = it->second.cuda_graphs;
    }
    ValidationRow v;
    v.suite = "inference";
    v.case_id = "calibration " + c.name;
    v.sku = sku->name;
    v.metric = c.tpot ? "tokens_per_s_per_sequence" : "output_tokens_per_s";
    v.unit = c.tpot ? "1/mean TPOT" : "tokens/s/GPU";
    v.measured = c.measured_per_gpu;
    v.calibration = true;
    v.source = CsvFile::Cell(*c.row, c_source);
    StatusOr<InferResult> r = RunInferenceOn(data, sku->name, model, c.o);
    if (r.ok() && c.tpot) {
      v.predicted = r->stats.tpot_s.mean > 0 ? 1 / r->stats.tpot_s.mean : 0;
    } else if (r.ok()) {
      v.predicted = r->per_gpu_output_tokens_per_s;
    } else {
      v.refused = r.status().message();
    }
    rows.push_back(std::move(v));
  }
  return rows;
}

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
