#include "report/train_render.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace ndt {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

// A hand-built iteration: 2 VMs of 8 GPUs, tp 8 x pp 2, gbs 8 of mbs 1 (8 micro-batches), a
// 2 s step of which compute 1.5 s, TP 0.2 s, bubble 0.3 s; MFU 50% of 989 TFLOP/s; 47 GiB of
// 80 GiB per GPU; 10^12 tokens in 9.25 days for $1000 at $98.32 per VM-hour. The interval class
// has p10 0.9 and p90 1.1 over 4 cases.
struct Iteration {
  TrainJob job;
  TrainReport r;
  SkuSpec sku;
  IntervalClass iv;
  Placement place;
  PlacementData limits;
  std::string stack = "megatron";

  Iteration() {
    job.model.name = "toy";
    job.model.seq_len = 2048;
    job.num_gpus = 16;
    job.gpus_per_vm = 8;
    job.gpu_memory_bytes = 80 * kGiB;
    job.tokens = 1e12;
    job.vm_usd_per_hour = 98.32;
    r.strategy.tp = 8;
    r.strategy.pp = 2;
    r.strategy.dp = 1;
    r.strategy.mbs = 1;
    r.strategy.gbs = 8;
    r.strategy.zero = 1;
    r.sim.step_time_s = 2.0;
    r.sim.breakdown.compute_s = 1.5;
    r.sim.breakdown.tp_comm_s = 0.2;
    r.sim.breakdown.pp_bubble_s = 0.3;
    r.memory.weights_bytes = 10 * kGiB;
    r.memory.gradients_bytes = 10 * kGiB;
    r.memory.optimizer_bytes = 20 * kGiB;
    r.memory.activations_bytes = 5 * kGiB;
    r.memory.comm_buffers_bytes = 1 * kGiB;
    r.reserve.cuda_context_bytes = 0.5 * kGiB;
    r.reserve.cublas_workspace_bytes = 0.25 * kGiB;
    r.reserve.nccl_buffers_bytes = 1 * kGiB;
    r.reserve.nccl_communicators = 4;
    r.reserve.allocator_fragmentation_bytes = 3.25 * kGiB;
    r.usable_bytes = 75 * kGiB;
    r.tokens_per_s = 8 * 2048 / 2.0;
    r.mfu = 0.5;
    r.peak_flops = 989e12;
    r.model_tflops_per_gpu = 494.5;
    r.time_to_train_s = 9.25 * 86400;
    r.cost_usd = 1000;
    sku.name = "ND96isr_H100_v5";
    sku.infiniband = InfinibandSpec{};
    iv.name = "Hopper training";
    iv.cases = 4;
    iv.p10 = 0.9;
    iv.p90 = 1.1;
  }
  TrainView View(int nics) const { return TrainView{job, stack, sku, r, iv, place, limits, nics}; }
};

bool Has(const std::string& text, const std::string& line) {
  return text.find(line) != std::string::npos;
}

TEST(TrainRender, TextLines) {
  const Iteration it;
  const std::string t = TrainText(it.View(8));
  EXPECT_EQ(t.find("Job:           toy, seq 2048, on 2 x ND96isr_H100_v5 (16 GPUs)\n"), 0u) << t;
  EXPECT_TRUE(Has(t,
                  "Strategy:      megatron: tp 8, pp 2, dp 1, cp 1, ep 1, vpp 1, sp off, "
                  "zero 1, recompute "))
      << t;
  EXPECT_TRUE(Has(t, "gbs 8 (8 micro-batches)")) << t;
  // A time's interval is [t / p90, t / p10] = [2 / 1.1, 2 / 0.9] = [1.818, 2.222] (%.4g).
  EXPECT_TRUE(Has(t,
                  "Step time:     2.0000 s (p10\u2013p90 1.818\u20132.222 s; 4 cases, Hopper "
                  "training)\n"))
      << t;
  EXPECT_TRUE(Has(t, "Throughput:    8192 tokens/s\n")) << t;
  // MFU's interval is a rate's: [50 x 0.9, 50 x 1.1] percent, no space before "%".
  EXPECT_TRUE(Has(t,
                  "Model FLOP/s:  494.5 TFLOP/s per GPU, MFU 50.0% of 989 TFLOP/s peak "
                  "(p10\u2013p90 45.0\u201355.0% MFU; 4 cases, Hopper training)\n"))
      << t;
  EXPECT_TRUE(Has(t,
                  "Memory/GPU:    46.0 GiB of 75.0 GiB usable (stage 0): weights 10.0, grads "
                  "10.0, optimizer 20.0, activations 5.0, comm 1.0\n"))
      << t;
  // The reserve: 0.5 + 0.25 + 1 + 0 + 3.25 = 5.0 GiB of the 80.
  EXPECT_TRUE(Has(t,
                  "Reserve/GPU:   5.0 GiB of 80.0 GiB: CUDA context 0.50, cuBLAS 0.25, NCCL 1.00 "
                  "(4 communicators), userbuffers 0.00, allocator fragmentation 3.25\n"))
      << t;
  // Shares of the 2 s step: 1.5 s = 75%, 0.2 s = 10%, 0.3 s = 15%.
  EXPECT_TRUE(Has(t,
                  "Breakdown:     compute 1.5000 s (75.0%), TP 0.2000 s (10.0%), CP 0.0000 s "
                  "(0.0%), EP 0.0000 s (0.0%), bubble 0.3000 s (15.0%)"))
      << t;
  EXPECT_TRUE(Has(t, "Time to train: 9.25 days for 1e+12 tokens, $1000 at $98.32 per VM-hour\n"))
      << t;
  // 2 VMs are within a scale set's default 100 and there are no racks: no placement line.
  EXPECT_FALSE(Has(t, "Placement:")) << t;
}

TEST(TrainRender, PlacementLineWhereTheLimitsBind) {
  Iteration it;
  it.limits.scale_set_default_vms = 1;  // 2 VMs now exceed it
  const std::string t = TrainText(it.View(8));
  const size_t at = t.find("Placement:     ");
  ASSERT_NE(at, std::string::npos) << t;
  EXPECT_EQ(t.find('\n', at), t.size() - 1);  // the last line
  it.sku.infiniband.reset();                  // without InfiniBand the scale set does not bind
  EXPECT_FALSE(Has(TrainText(it.View(0)), "Placement:"));
}

TEST(TrainRender, JsonFieldsAndPlacementOnlyWithAFabric) {
  Iteration it;
  const Json j = TrainJson(it.View(8));
  EXPECT_EQ(j["schema"], "ndtwin.train/1");
  EXPECT_EQ(j["vms"], 2);
  EXPECT_EQ(j["gpus"], 16);
  EXPECT_DOUBLE_EQ(j["step_time_s"].get<double>(), 2.0);
  EXPECT_NEAR(j["step_time_s_interval"]["p10"].get<double>(), 2 / 1.1, 1e-12);
  EXPECT_NEAR(j["step_time_s_interval"]["p90"].get<double>(), 2 / 0.9, 1e-12);
  // 10 + 10 + 20 + 5 + 1 GiB; usable 75 of 80; the reserve 0.5 + 0.25 + 1 + 3.25 = 5 GiB.
  EXPECT_DOUBLE_EQ(j["memory"]["peak_bytes_per_gpu"].get<double>(), 46 * kGiB);
  EXPECT_DOUBLE_EQ(j["memory"]["usable_bytes"].get<double>(), 75 * kGiB);
  EXPECT_DOUBLE_EQ(j["memory"]["reserve"]["total_bytes"].get<double>(), 5 * kGiB);
  EXPECT_EQ(j["memory"]["reserve"]["nccl_communicators"], 4);
  EXPECT_FALSE(j["memory"].contains("workspace_bytes"));
  EXPECT_EQ(j["strategy"]["micro_batches"], 8);
  EXPECT_DOUBLE_EQ(j["cost_usd"].get<double>(), 1000);
  ASSERT_TRUE(j.contains("placement"));
  EXPECT_EQ(j["placement"]["scale_sets"], 1);
  EXPECT_FALSE(TrainJson(it.View(0)).contains("placement"));
  it.job.vm_usd_per_hour = 0;  // no price: cost null, and the text says so
  EXPECT_TRUE(TrainJson(it.View(0))["cost_usd"].is_null());
  EXPECT_TRUE(Has(TrainText(it.View(0)), "for 1e+12 tokens (no price for this size)\n"));
}

// The Strategy line and "strategy.precision" say the precision the GEMMs run in. A V100 has fp16
// tensor cores and no bf16 ones (data/gpus/v100_sxm2_32gb.yaml: fp16 125 TFLOP/s, no bf16): a bf16
// job (the default stack's) computes in fp16 there (compute/ EffectivePrecision: the next wider
// path it has), so the line says fp16, not bf16. A GPU with bf16 (an H100: bf16 = fp16 rate)
// keeps bf16, as does a view without its GPU.
TEST(TrainRender, StrategyNamesThePrecisionTheGpuComputesIn) {
  Iteration it;
  it.r.strategy.precision = Dtype::kBf16;
  GpuSpec v100;
  v100.name = "V100-SXM2-32GB";
  v100.fp16_flops = 125e12;
  v100.fp32_flops = 15.7e12;
  GpuSpec h100;
  h100.name = "H100-SXM5-80GB";
  h100.fp16_flops = h100.bf16_flops = 989e12;
  h100.fp8_flops = 1979e12;
  for (const auto& [gpu, want] : std::vector<std::pair<const GpuSpec*, std::string>>{
           {&v100, "fp16"}, {&h100, "bf16"}, {nullptr, "bf16"}}) {
    TrainView v = it.View(8);
    v.gpu = gpu;
    EXPECT_TRUE(Has(TrainText(v), "1f1b, " + want + "\n")) << TrainText(v);
    EXPECT_EQ(TrainJson(v)["strategy"]["precision"], want);
  }
  // fp16 asked on a V100 is fp16; fp8 on an H100 stays fp8.
  it.r.strategy.precision = Dtype::kFp16;
  TrainView v = it.View(8);
  v.gpu = &v100;
  EXPECT_EQ(TrainJson(v)["strategy"]["precision"], "fp16");
  it.r.strategy.precision = Dtype::kFp8;
  v.gpu = &h100;
  EXPECT_EQ(TrainJson(v)["strategy"]["precision"], "fp8");
}

}  // namespace
}  // namespace ndt
