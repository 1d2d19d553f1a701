// File: parallel/validate.cc
// Megatron Table 1 replay; see validate.h.
#include "parallel/validate.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "compute/compute.h"
#include "parallel/cluster_costs.h"
#include "parallel/train.h"
#include "topo/builders.h"

namespace ndt {
namespace {

constexpr const char* kSku = "Standard_ND96amsr_A100_v4";

// Splits one CSV line (double-quoted fields may hold commas).
std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  return out;
}

}  // namespace

StatusOr<std::vector<ValidationRow>> ValidateTraining(const Catalog& catalog,
                                                      const std::string& shared_dir,
                                                      const std::string& data_dir) {
  const std::string path = shared_dir + "/validation/training/megatron_table1.csv";
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read '" + path + "'");
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = SplitCsv(line);
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  for (const char* need : {"params_billion", "attention_heads", "hidden_size", "num_layers",
                           "tensor_parallel", "pipeline_parallel", "num_gpus",
                           "global_batch_size", "achieved_tflops_per_gpu", "seq_len", "vocab"}) {
    if (!col.count(need)) return Status::InvalidInput(path + ": missing column '" + need + "'");
  }
  NDT_ASSIGN_OR_RETURN(const SkuSpec* sku, catalog.FindSku(kSku));
  const GpuSpec& gpu = catalog.GpuOf(*sku);
  NDT_ASSIGN_OR_RETURN(ComputeCalibration cal, LoadComputeCalibration(data_dir));
  std::vector<ValidationRow> rows;
  int line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    const std::vector<std::string> f = SplitCsv(line);
    auto num = [&](const char* c) {
      const std::string& t = f.at(col[c]);
      char* end = nullptr;
      const double v = std::strtod(t.c_str(), &end);
      return end == t.c_str() ? -1.0 : v;
    };
    if (f.size() < header.size() - 1) {
      return Status::InvalidInput(path + ":" + std::to_string(line_no) + ": too few columns");
    }
    if (num("num_gpus") <= 0 || num("achieved_tflops_per_gpu") <= 0) {
      return Status::InvalidInput(path + ":" + std::to_string(line_no) + ": bad number");
    }
    InlineModelArgs a;
    a.layers = static_cast<int64_t>(num("num_layers"));
    a.hidden = static_cast<int64_t>(num("hidden_size"));
    a.heads = static_cast<int64_t>(num("attention_heads"));
    a.vocab = static_cast<int64_t>(num("vocab"));
    a.seq = static_cast<int64_t>(num("seq_len"));
    a.arch = "gpt";
    a.name = "gpt-" + f.at(col["params_billion"]) + "b";
    NDT_ASSIGN_OR_RETURN(TransformerSpec model, BuildInlineModel(a));
    const int gpus = static_cast<int>(num("num_gpus"));
    ClusterSpec cs;
    cs.sku = sku;
    cs.gpu = &gpu;
    cs.vms = gpus / sku->gpus;
    cs.fabric.tiers = ChooseTiers(cs);
    NDT_ASSIGN_OR_RETURN(Cluster cluster, BuildCluster(cs));
    ClusterCosts costs(cluster, cal, Dtype::kBf16, Fidelity::kAnalytical);
    TrainJob job;
    job.model = model;
    job.strategy.tp = static_cast<int>(num("tensor_parallel"));
    job.strategy.pp = static_cast<int>(num("pipeline_parallel"));
    job.strategy.gbs = static_cast<int64_t>(num("global_batch_size"));
    job.strategy.recompute = Recompute::kFull;
    job.strategy.precision = Dtype::kFp16;
    // Megatron-LM as the paper ran it (2021) computed attention unfused; FlashAttention is 2022.
    job.strategy.flash_attention = false;
    // ... and, as Megatron-LM v2 did: synchronous pipeline send/recv, and the data-parallel
    // gradient all-reduce after the backward pass (local DDP), not overlapped with it.
    job.strategy.overlap_p2p = false;
    job.strategy.overlap_dp = false;
    job.mbs_given = false;
    job.vpp_given = false;
    job.num_gpus = gpus;
    job.nvlink_domain_gpus = sku->nvlink_domain_gpus;
    job.gpu_memory_bytes = gpu.memory_bytes;
    job.gpus_per_vm = sku->gpus;
    NDT_ASSIGN_OR_RETURN(TrainReport rep, RunTraining(job, costs));
    const double flop = NarayananIterationFlops(model, static_cast<double>(job.strategy.gbs),
                                                model.seq_len, /*full_recompute=*/true);
    ValidationRow row;
    row.suite = "training";
    row.case_id = "gpt " + f.at(col["params_billion"]) + "B " + std::to_string(gpus) +
                  " GPUs tp" + std::to_string(rep.strategy.tp) + " pp" +
                  std::to_string(rep.strategy.pp) + " dp" + std::to_string(rep.strategy.dp) +
                  " vpp" + std::to_string(rep.strategy.vpp) + " mbs" +
                  std::to_string(rep.strategy.mbs);
    row.metric = "tflops_per_gpu";
    row.unit = "TFLOP/s";
    row.measured = num("achieved_tflops_per_gpu");
    row.predicted = flop / rep.sim.step_time_s / gpus / 1e12;
    row.source = "Narayanan et al. SC21 (arXiv:2104.04473) Table 1";
    rows.push_back(row);
  }
  return rows;
}

}  // namespace ndt
