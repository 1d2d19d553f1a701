#include "parallel/stack.h"

#include <gtest/gtest.h>

#include <string>

#include "hw/catalog.h"

namespace ndt {
namespace {

StatusOr<SoftwareStack> Parse(const std::string& text) {
  NDT_ASSIGN_OR_RETURN(YamlMap m, LoadYamlMapString(text, "bad.yaml"));
  return ParseStack(m);
}

// A valid training stack; tests break one line of it at a time.
const char* kGood = R"(name: t
date: "2021-04"
kind: training
description: "test"
knobs:
  precision: {value: fp16, source: "s"}
  recompute: {value: full, source: "s"}
  flash_attention: {value: false, source: "s"}
  grad_accum_fusion: {value: false, source: "s"}
  overlap_dp: {value: false, source: "s"}
  overlap_p2p: {value: false, source: "s"}
  sp: {value: true, source: "s"}
  tp_overlap: {value: true, source: "s"}
  zero: {value: 3, source: "s"}
traits:
  zero3_gather: {value: per_tensor, source: "s"}
  zero3_persistence_threshold: {value: 100000, source: "s"}
  zero3_prefetch_bucket: {value: 50000000, source: "s"}
  zero3_copy_out_per_rank: {value: true, source: "s"}
  zero3_reduce_per_tensor: {value: true, source: "s"}
  zero3_host_view_op: {value: "2.8 us", source: "s"}
  zero3_zero_fill: {value: true, source: "s"}
  zero3_grad_reduce_dtype: {value: fp16, source: "s"}
  tp_overlap_comm_sms: {value: 16, source: "s"}
  tp_overlap_ag_copy_engine: {value: true, source: "s"}
  tp_overlap_gemm_pieces: {value: true, source: "s"}
  tp_overlap_rs_splits: {value: 4, source: "s"}
  attention_kernel: {value: fa2, source: "s"}
)";

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(Stacks, EveryFileLoadsAndTheNamedOnesExist) {
  StatusOr<std::vector<SoftwareStack>> all = LoadStacks();
  ASSERT_TRUE(all.ok()) << all.status().message();
  for (const char* name :
       {"megatron-lm-2021", "megatron-lm-2022", "megatron-core-2024", "torchtitan-fsdp2-2024",
        "deepspeed-zero3-2021", "meta-llama3-2024", "tensorrt-llm-2024", "tensorrt-llm-2025",
        "llm-foundry-2023", "nemo-2024", "nemo-2025", kDefaultTrainStack}) {
    StatusOr<SoftwareStack> st = FindStack(*all, name);
    ASSERT_TRUE(st.ok()) << st.status().message();
    EXPECT_FALSE(st->sources.empty()) << name;
    for (const auto& [key, source] : st->sources) EXPECT_FALSE(source.empty()) << name << key;
  }
  // Megatron-Core's TP overlap runs TE userbuffers' defaults: 16 SMs, all-gathers by copy engine.
  StatusOr<SoftwareStack> mc = FindStack(*all, "megatron-core-2024", StackKind::kTraining);
  ASSERT_TRUE(mc.ok());
  EXPECT_EQ(mc->tp_ub.comm_sms, 16);
  EXPECT_TRUE(mc->tp_ub.ag_copy_engine);
  EXPECT_TRUE(mc->tp_ub.gemm_pieces);
  EXPECT_EQ(mc->tp_ub.rs_splits, 4);
  // Only Megatron-Core overlaps the weights' all-gather with the next forward
  // (--overlap-param-gather); the other stacks leave the knob out (after the optimizer).
  EXPECT_EQ(mc->knobs.overlap_param_gather, std::optional<bool>(true));
  for (const char* name : {"megatron-lm-2021", "megatron-lm-2022", "meta-llama3-2024"}) {
    EXPECT_FALSE(FindStack(*all, name)->knobs.overlap_param_gather.has_value()) << name;
  }
  // Megatron-LM's scripts keep fp32 gradients with bf16 (4 B per parameter); NeMo's 2024
  // performance recipes keep and reduce them in bf16 (2 B), the one trait nemo-2024 changes.
  EXPECT_DOUBLE_EQ(mc->grad_bytes_per_param, 4.0);
  StatusOr<SoftwareStack> nemo = FindStack(*all, "nemo-2024", StackKind::kTraining);
  ASSERT_TRUE(nemo.ok());
  EXPECT_DOUBLE_EQ(nemo->grad_bytes_per_param, 2.0);
  EXPECT_EQ(nemo->knobs.zero, mc->knobs.zero);
  EXPECT_EQ(nemo->attention_kernel, mc->attention_kernel);
  // NeMo 25.04's performance runs scale FP8 by the current amax (TE Float8CurrentScaling); the
  // 2024 stacks, on TE 1.x, had delayed scaling only (the trait absent).
  StatusOr<SoftwareStack> nemo25 = FindStack(*all, "nemo-2025", StackKind::kTraining);
  ASSERT_TRUE(nemo25.ok());
  EXPECT_TRUE(nemo25->fp8_current_scaling);
  EXPECT_FALSE(nemo25->sources.at("traits.fp8_scaling").empty());
  EXPECT_DOUBLE_EQ(nemo25->grad_bytes_per_param, 2.0);
  EXPECT_FALSE(nemo->fp8_current_scaling);
  EXPECT_FALSE(mc->fp8_current_scaling);
  // Transformer Engine prefers cuDNN's fused attention on Hopper and Blackwell (compute
  // capability >= 9.0); torchtitan 2024 ran SDPA's
  // FlashAttention-2 backend; the 2021-22 stacks have no fused attention (FA2 if forced on).
  EXPECT_EQ(mc->attention_kernel, AttentionKernel::kCudnnFused);
  for (const char* name : {"torchtitan-fsdp2-2024", "megatron-lm-2021", "megatron-lm-2022"}) {
    EXPECT_EQ(FindStack(*all, name)->attention_kernel, AttentionKernel::kFlash2) << name;
  }
  // torchtitan 2024 runs without torch.compile: its norms, RoPE and SwiGLU are eager kernels;
  // Megatron's (apex, TE, jit-fused) and DeepSpeed 2021's GPT (LayerNorm, GELU) are not.
  StatusOr<SoftwareStack> tt = FindStack(*all, "torchtitan-fsdp2-2024", StackKind::kTraining);
  ASSERT_TRUE(tt.ok());
  EXPECT_TRUE(tt->eager_elementwise);
  EXPECT_FALSE(tt->sources.at("traits.elementwise_kernels").empty());
  // ... and its selective recompute is PyTorch's op-level policy, not Megatron's attention core.
  EXPECT_EQ(tt->selective_recompute, SelectiveRecompute::kAlternateMatmuls);
  EXPECT_DOUBLE_EQ(tt->host_issue_per_kernel_s, 22.5e-6);  // measured, data/measured/
  // torchtitan's loss upcasts the logits out of place (train.py loss_fn: pred.float()); the
  // other stacks' sources name a fused or in-place cross-entropy, or nothing: the default.
  EXPECT_TRUE(tt->loss_fp32_copy);
  EXPECT_FALSE(tt->sources.at("traits.loss_logits").empty());
  for (const SoftwareStack& other : *all) {
    if (other.name != "torchtitan-fsdp2-2024") {
      EXPECT_FALSE(other.loss_fp32_copy) << other.name;
    }
  }
  EXPECT_EQ(FindStack(*all, "megatron-core-2024")->host_issue_per_kernel_s, 0);
  EXPECT_EQ(FindStack(*all, "megatron-lm-2022")->selective_recompute,
            SelectiveRecompute::kAttentionCore);
  for (const char* name :
       {"megatron-lm-2021", "megatron-lm-2022", "megatron-core-2024", "deepspeed-zero3-2021"}) {
    EXPECT_FALSE(FindStack(*all, name)->eager_elementwise) << name;
  }
  Strategy applied;
  ApplyTrainStack(*tt, StrategyKnobs{}, &applied);
  EXPECT_TRUE(applied.eager_elementwise);
  EXPECT_EQ(applied.selective_recompute, SelectiveRecompute::kAlternateMatmuls);
  ApplyTrainStack(*mc, StrategyKnobs{}, &applied);
  EXPECT_FALSE(applied.eager_elementwise);
  EXPECT_EQ(applied.selective_recompute, SelectiveRecompute::kAttentionCore);
  EXPECT_EQ(applied.attention_kernel, AttentionKernel::kCudnnFused);
  StrategyKnobs fa2;
  fa2.attention_kernel = AttentionKernel::kFlash2;  // --attention-kernel fa2 beats the stack
  ApplyTrainStack(*mc, fa2, &applied);
  EXPECT_EQ(applied.attention_kernel, AttentionKernel::kFlash2);
  StatusOr<SoftwareStack> ds = FindStack(*all, "deepspeed-zero3-2021", StackKind::kTraining);
  ASSERT_TRUE(ds.ok());
  EXPECT_EQ(ds->zero3.gather, Zero3Gather::kPerTensor);
  EXPECT_EQ(ds->zero3.persistence_threshold_params, 1e5);
  EXPECT_EQ(ds->zero3.prefetch_bucket_params, 5e7);
  EXPECT_TRUE(ds->zero3.copy_out_per_rank);
  EXPECT_TRUE(ds->zero3.reduce_per_tensor);
  EXPECT_DOUBLE_EQ(ds->zero3.host_view_s, 6.0e-6);
  EXPECT_TRUE(ds->zero3.zero_fill);
  EXPECT_EQ(*ds->knobs.zero, 3);
  // LLM Foundry 2023 (MPT tables): FSDP1 FULL_SHARD per MPTBlock, flat parameters (no
  // copy-out), Composer's DEFAULT mixed precision reducing in fp32, full activation checkpointing.
  StatusOr<SoftwareStack> lf = FindStack(*all, "llm-foundry-2023", StackKind::kTraining);
  ASSERT_TRUE(lf.ok()) << lf.status().message();
  EXPECT_EQ(*lf->knobs.zero, 3);
  EXPECT_EQ(*lf->knobs.recompute, Recompute::kFull);
  EXPECT_EQ(lf->zero3.gather, Zero3Gather::kPerBlock);
  EXPECT_FALSE(lf->zero3.block_copy_out);
  EXPECT_DOUBLE_EQ(lf->zero3.grad_reduce_bytes_per_param, 4.0);
  EXPECT_FALSE(*lf->knobs.tp_overlap);
  EXPECT_FALSE(*lf->knobs.grad_accum_fusion);
  StatusOr<SoftwareStack> trt = FindStack(*all, "tensorrt-llm-2025", StackKind::kServing);
  ASSERT_TRUE(trt.ok());
  EXPECT_EQ(*trt->serve.kv_block_tokens, 32);
  EXPECT_DOUBLE_EQ(*trt->serve.kv_free_memory_frac, 0.9);
  // Host/GPU overlap: the 2025 PyTorch-backend executor overlaps (overlap scheduler, on by
  // default), the 2024 C++ executor does not.
  EXPECT_TRUE(trt->host_overlap);
  EXPECT_FALSE(trt->sources.at("traits.host_overlap").empty());
  StatusOr<SoftwareStack> trt24 = FindStack(*all, "tensorrt-llm-2024", StackKind::kServing);
  ASSERT_TRUE(trt24.ok());
  EXPECT_FALSE(trt24->host_overlap);
  EXPECT_EQ(trt24->tp_allreduce, "trtllm-2024");
  EXPECT_FALSE(trt24->cuda_graphs);
  EXPECT_EQ(trt->tp_allreduce, "trtllm-2025");
  EXPECT_TRUE(trt->cuda_graphs);
}

TEST(Stacks, GoodTextParses) {
  StatusOr<SoftwareStack> st = Parse(kGood);
  ASSERT_TRUE(st.ok()) << st.status().message();
  EXPECT_EQ(st->sources.size(), 22u);  // 9 knobs + 13 traits
}

// The trait's values: fa2, cudnn_fused, and hopper_fused, cudnn_fused's older name (stack files
// written when only Hopper had a fused-attention calibration), read as cudnn_fused.
TEST(Stacks, AttentionKernelTraitTakesTheOldHopperName) {
  const std::string fa2 = "attention_kernel: {value: fa2,";
  StatusOr<SoftwareStack> st = Parse(kGood);
  ASSERT_TRUE(st.ok()) << st.status().message();
  EXPECT_EQ(st->attention_kernel, AttentionKernel::kFlash2);
  for (const char* fused : {"cudnn_fused", "hopper_fused"}) {
    st = Parse(Replace(kGood, fa2, std::string("attention_kernel: {value: ") + fused + ","));
    ASSERT_TRUE(st.ok()) << st.status().message();
    EXPECT_EQ(st->attention_kernel, AttentionKernel::kCudnnFused) << fused;
  }
}

TEST(Stacks, BadFilesErrWithFileAndLine) {
  struct Case {
    std::string from, to, want;
  };
  const Case cases[] = {
      // unknown key (line 14 of the text, before zero)
      {"  zero: {value: 3", "  fused_adam: {value: true, source: \"s\"}\n  zero: {value: 3",
       "bad.yaml:14: knobs.fused_adam"},
      // missing source
      {"  zero: {value: 3, source: \"s\"}", "  zero: {value: 3}", "bad.yaml:14"},
      // empty source
      {"  zero: {value: 3, source: \"s\"}", "  zero: {value: 3, source: \"\"}", "bad.yaml:14"},
      // bad choice, with a suggestion
      {"{value: per_tensor,", "{value: per_tensr,", "did you mean 'per_tensor'"},
      // ZeRO stage out of range
      {"zero: {value: 3,", "zero: {value: 4,", "bad.yaml:14"},
      // unknown kind
      {"kind: training", "kind: trainin", "bad.yaml:3"},
      // date not a month
      {"date: \"2021-04\"", "date: 2021", "bad.yaml:2"},
      // a host view op without its unit, and one of 5 ms (line 21 of the text)
      {"{value: \"2.8 us\", source: \"s\"}", "{value: 2.8, source: \"s\"}", "bad.yaml:21"},
      {"{value: \"2.8 us\", source: \"s\"}", "{value: \"5 ms\", source: \"s\"}",
       "between 0 and 1 ms"},
      // an attention kernel that is not one of fa2, cudnn_fused (hopper_fused)
      {"attention_kernel: {value: fa2", "attention_kernel: {value: fa3", "attention_kernel"},
      // element-wise kernels that are neither fused nor eager (the optional trait, when given)
      {"  attention_kernel: {value: fa2, source: \"s\"}",
       "  attention_kernel: {value: fa2, source: \"s\"}\n"
       "  elementwise_kernels: {value: compiled, source: \"s\"}",
       "unknown value 'compiled'; expected one of: fused, eager"},
      {"  attention_kernel: {value: fa2, source: \"s\"}",
       "  attention_kernel: {value: fa2, source: \"s\"}\n"
       "  selective_recompute: {value: attention, source: \"s\"}",
       "unknown value 'attention'"},
      // a host issue cost out of range
      {"  attention_kernel: {value: fa2, source: \"s\"}",
       "  attention_kernel: {value: fa2, source: \"s\"}\n"
       "  host_issue_per_kernel: {value: \"5 ms\", source: \"s\"}",
       "host_issue_per_kernel: expected a host time between 0 and 1 ms"},
  };
  for (const Case& c : cases) {
    StatusOr<SoftwareStack> st = Parse(Replace(kGood, c.from, c.to));
    ASSERT_FALSE(st.ok()) << c.to;
    EXPECT_EQ(st.status().code(), StatusCode::kInvalidInput) << c.to;
    EXPECT_NE(st.status().message().find(c.want), std::string::npos) << st.status().message();
    EXPECT_EQ(st.status().message().find('\n'), std::string::npos);  // one line
  }
  // The optional knobs: cp_comm one of ring, all_gather; uneven_stages a bool with its source.
  for (const char* bad :
       {"  cp_comm: {value: alltoall, source: \"s\"}\n", "  uneven_stages: {value: true}\n"}) {
    StatusOr<SoftwareStack> o =
        Parse(Replace(kGood, "  zero: {value: 3", std::string(bad) + "  zero: {value: 3"));
    ASSERT_FALSE(o.ok()) << bad;
    EXPECT_NE(o.status().message().find("bad.yaml:14"), std::string::npos) << o.status().message();
  }
  // A missing knob names it.
  StatusOr<SoftwareStack> st = Parse(Replace(kGood, "  sp: {value: true, source: \"s\"}\n", ""));
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("sp: missing required key"), std::string::npos)
      << st.status().message();
}

// The optional trait zero_stages (planfix): the ZeRO stages the software runs, ascending, the
// stack's own among them; absent means not stated. Every training stack of data/ states them,
// and Megatron-Core 2024 (0.9: the distributed optimizer, no FSDP before 0.10) runs 0 and 1 only.
TEST(Stacks, ZeroStagesListWhatTheSoftwareRuns) {
  StatusOr<SoftwareStack> plain = Parse(kGood);
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->zero_stages.empty());
  const std::string at = "  attention_kernel: {value: fa2, source: \"s\"}";
  StatusOr<SoftwareStack> st =
      Parse(Replace(kGood, at, at + "\n  zero_stages: {value: [0, 2, 3], source: \"z\"}"));
  ASSERT_TRUE(st.ok()) << st.status().message();
  EXPECT_EQ(st->zero_stages, (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(st->sources.at("traits.zero_stages"), "z");
  // Out of order, out of range, and a list without the stack's own stage (knobs.zero 3).
  for (const char* bad : {"[0, 3, 2]", "[0, 4]", "[0, 1]", "[]"}) {
    StatusOr<SoftwareStack> b = Parse(Replace(
        kGood, at, at + "\n  zero_stages: {value: " + std::string(bad) + ", source: \"z\"}"));
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_NE(b.status().message().find("bad.yaml:29"), std::string::npos) << b.status().message();
  }
  StatusOr<std::vector<SoftwareStack>> all = LoadStacks();
  ASSERT_TRUE(all.ok());
  for (const SoftwareStack& s : *all) {
    if (s.kind == StackKind::kTraining) {
      EXPECT_FALSE(s.zero_stages.empty()) << s.name;
    }
  }
  StatusOr<SoftwareStack> core = FindStack(*all, "megatron-core-2024", StackKind::kTraining);
  ASSERT_TRUE(core.ok());
  EXPECT_EQ(core->zero_stages, (std::vector<int>{0, 1}));
}

TEST(Stacks, ServingFractionNeedsItsUnit) {
  const char* text = R"(name: s
date: "2025-08"
kind: serving
description: "test"
knobs:
  max_batch: {value: 2048, source: "s"}
  max_num_tokens: {value: 8192, source: "s"}
  kv_free_memory_fraction: {value: 0.9, source: "s"}
  kv_block_tokens: {value: 32, source: "s"}
traits:
  in_flight_batching: {value: true, source: "s"}
  chunked_prefill: {value: true, source: "s"}
  host_overlap: {value: false, source: "s"}
  tp_allreduce: {value: "nccl", source: "s"}
  cuda_graphs: {value: false, source: "s"}
)";
  StatusOr<SoftwareStack> st = Parse(text);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("bad.yaml:8"), std::string::npos) << st.status().message();
  const std::string fixed = Replace(text, "value: 0.9,", "value: \"90%\",");
  StatusOr<SoftwareStack> ok = Parse(fixed);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_DOUBLE_EQ(*ok->serve.kv_free_memory_frac, 0.9);
  StatusOr<SoftwareStack> no_ifb = Parse(
      Replace(fixed, "in_flight_batching: {value: true", "in_flight_batching: {value: false"));
  ASSERT_FALSE(no_ifb.ok());
  EXPECT_NE(no_ifb.status().message().find("not modelled"), std::string::npos);
}

TEST(Stacks, UnknownNameSuggestsAndListsAndKindIsChecked) {
  StatusOr<std::vector<SoftwareStack>> all = LoadStacks();
  ASSERT_TRUE(all.ok());
  StatusOr<SoftwareStack> st = FindStack(*all, "megatron-lm-221", StackKind::kTraining);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.status().code(), StatusCode::kNotFound);
  const std::string msg = st.status().message();
  EXPECT_NE(msg.find("did you mean 'megatron-lm-2021'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("deepspeed-zero3-2021"), std::string::npos) << msg;  // the list
  EXPECT_EQ(msg.find("tensorrt-llm"), std::string::npos) << msg;          // training stacks only
  StatusOr<SoftwareStack> wrong = FindStack(*all, "tensorrt-llm-2025", StackKind::kTraining);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), StatusCode::kInvalidInput);
}

TEST(Stacks, FlagsBeatTheStackWhichBeatsTheDefaults) {
  StatusOr<SoftwareStack> st = Parse(kGood);
  ASSERT_TRUE(st.ok());
  Strategy s;  // defaults: bf16, no recompute, flash on, fusion on, zero 0
  s.tp = 4;
  StrategyKnobs user;
  user.precision = Dtype::kBf16;  // the user's --precision bf16 beats the stack's fp16
  user.zero = 1;                  // --zero 1 beats the stack's 3
  ApplyTrainStack(*st, user, &s);
  EXPECT_EQ(s.precision, Dtype::kBf16);
  EXPECT_EQ(s.zero, 1);
  EXPECT_EQ(s.recompute, Recompute::kFull);  // from the stack
  EXPECT_FALSE(s.flash_attention);
  EXPECT_FALSE(s.grad_accum_fusion);
  EXPECT_TRUE(s.sp);  // tp 4: the stack's SP applies
  EXPECT_TRUE(s.tp_overlap);
  EXPECT_EQ(s.zero3.gather, Zero3Gather::kPerTensor);  // traits always come from the stack
  // Without TP the stack's SP and TP overlap do not apply; an explicit flag still would.
  Strategy one;
  ApplyTrainStack(*st, {}, &one);
  EXPECT_FALSE(one.sp);
  EXPECT_FALSE(one.tp_overlap);
  EXPECT_EQ(one.zero, 3);
  StrategyKnobs no_flash;
  no_flash.flash_attention = true;
  Strategy two;
  ApplyTrainStack(*st, no_flash, &two);
  EXPECT_TRUE(two.flash_attention);
}

// Llama 3's layout and CP are knobs of Meta's stack (optional in a stack file: absent, the
// strategy keeps its defaults, ring CP and even stages); --cp-comm and --uneven-stages beat them.
TEST(Stacks, CpCommAndUnevenStagesAreOptionalKnobs) {
  StatusOr<SoftwareStack> good = Parse(kGood);
  ASSERT_TRUE(good.ok());
  EXPECT_FALSE(good->knobs.cp_comm.has_value());
  EXPECT_FALSE(good->knobs.uneven_stages.has_value());
  Strategy plain;
  ApplyTrainStack(*good, {}, &plain);
  EXPECT_EQ(plain.cp_comm, CpComm::kRing);
  EXPECT_FALSE(plain.uneven_stages);

  StatusOr<SoftwareStack> st = Parse(Replace(kGood, "  zero: {value: 3",
                                             "  cp_comm: {value: all_gather, source: \"s\"}\n"
                                             "  uneven_stages: {value: true, source: \"u\"}\n"
                                             "  zero: {value: 3"));
  ASSERT_TRUE(st.ok()) << st.status().message();
  EXPECT_EQ(st->sources.size(), 24u);  // 11 knobs + 13 traits
  EXPECT_EQ(st->sources.at("knobs.uneven_stages"), "u");
  Strategy s;
  ApplyTrainStack(*st, {}, &s);
  EXPECT_EQ(s.cp_comm, CpComm::kAllGather);
  EXPECT_TRUE(s.uneven_stages);
  StrategyKnobs user;
  user.cp_comm = CpComm::kRing;  // --cp-comm ring
  user.uneven_stages = false;    // --uneven-stages=false
  Strategy u;
  ApplyTrainStack(*st, user, &u);
  EXPECT_EQ(u.cp_comm, CpComm::kRing);
  EXPECT_FALSE(u.uneven_stages);

  // Meta's stack as the Llama 3 paper states it: all-gather CP, one layer fewer on the first and
  // last stages, ZeRO-2 with FP32 gradient reduce-scatter, asynchronous P2P, no recompute, and the
  // values it does not state marked as assumptions in their sources.
  StatusOr<std::vector<SoftwareStack>> all = LoadStacks();
  ASSERT_TRUE(all.ok());
  StatusOr<SoftwareStack> meta = FindStack(*all, "meta-llama3-2024", StackKind::kTraining);
  ASSERT_TRUE(meta.ok()) << meta.status().message();
  EXPECT_EQ(*meta->knobs.cp_comm, CpComm::kAllGather);
  EXPECT_TRUE(*meta->knobs.uneven_stages);
  EXPECT_EQ(*meta->knobs.zero, 2);
  EXPECT_EQ(*meta->knobs.recompute, Recompute::kNone);
  EXPECT_TRUE(*meta->knobs.overlap_p2p);
  EXPECT_FALSE(*meta->knobs.tp_overlap);
  EXPECT_FALSE(*meta->knobs.grad_accum_fusion);
  EXPECT_EQ(meta->zero3.grad_reduce_bytes_per_param, 4.0);
  EXPECT_EQ(meta->attention_kernel, AttentionKernel::kFlash2);
  for (const char* k : {"knobs.tp_overlap", "knobs.grad_accum_fusion", "traits.attention_kernel"}) {
    EXPECT_EQ(meta->sources.at(k).rfind("ASSUMPTION", 0), 0u) << k;
  }
  EXPECT_NE(meta->sources.at("knobs.cp_comm").find("Llama 3 paper"), std::string::npos);
}

TEST(Stacks, Fp8TrainingNeedsFp8TensorCores) {
  // Transformer Engine's check_fp8_support refuses FP8 below compute capability 8.9: FP8 training
  // on an A100 is refused (kUnsupported naming --precision), on an H100 allowed; bf16 is allowed
  // on both.
  StatusOr<Catalog> cat = Catalog::Load(Catalog::DefaultDataDir());
  ASSERT_TRUE(cat.ok()) << cat.status().message();
  const GpuSpec& a100 = cat->GpuOf(*cat->FindSku("Standard_ND96amsr_A100_v4").value());
  const GpuSpec& h100 = cat->GpuOf(*cat->FindSku("Standard_ND96isr_H100_v5").value());
  const Status refused = CheckTrainPrecision(a100, Dtype::kFp8);
  EXPECT_EQ(refused.code(), StatusCode::kUnsupported);
  EXPECT_NE(refused.message().find("--precision fp8"), std::string::npos) << refused.message();
  EXPECT_TRUE(CheckTrainPrecision(a100, Dtype::kBf16).ok());
  EXPECT_TRUE(CheckTrainPrecision(h100, Dtype::kFp8).ok());
  EXPECT_TRUE(CheckTrainPrecision(h100, Dtype::kBf16).ok());
}

}  // namespace
}  // namespace ndt
