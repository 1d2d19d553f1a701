// File: parallel/stack.cc
// Loading and applying named software stacks; see stack.h and the comment atop each file under
// data/stacks/.
#include "parallel/stack.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "compute/compute.h"
#include "core/strings.h"

namespace ndt {
namespace {

namespace fs = std::filesystem;

std::string Key(std::string_view section, std::string_view key) {
  return std::string(section) + "." + std::string(key);
}

// Each knob and trait is {value: ..., source: "..."}; the source must not be empty. Records the
// source as "section.key" and returns the entry (the caller reads "value" and calls Finish).
StatusOr<YamlMap> Entry(const YamlMap& m, std::string_view section, std::string_view key,
                        SoftwareStack* st) {
  NDT_ASSIGN_OR_RETURN(YamlMap e, m.Map(key));
  NDT_ASSIGN_OR_RETURN(std::string source, e.String("source"));
  if (source.empty()) return e.Error("source", "must not be empty: say where the value comes from");
  st->sources[Key(section, key)] = source;
  return e;
}

StatusOr<bool> BoolEntry(const YamlMap& m, std::string_view section, std::string_view key,
                         SoftwareStack* st) {
  NDT_ASSIGN_OR_RETURN(YamlMap e, Entry(m, section, key, st));
  NDT_ASSIGN_OR_RETURN(bool v, e.Bool("value"));
  NDT_RETURN_IF_ERROR(e.Finish());
  return v;
}

// One of `names`, or an error listing them.
StatusOr<std::string> ChoiceEntry(const YamlMap& m, std::string_view section, std::string_view key,
                                  const std::vector<std::string>& names, SoftwareStack* st) {
  NDT_ASSIGN_OR_RETURN(YamlMap e, Entry(m, section, key, st));
  NDT_ASSIGN_OR_RETURN(std::string v, e.String("value"));
  NDT_RETURN_IF_ERROR(e.Finish());
  if (std::find(names.begin(), names.end(), v) == names.end()) {
    return e.Error("value", fmt::format("unknown value '{}'{}; expected one of: {}", v,
                                        DidYouMean(v, names), Join(names, ", ")));
  }
  return v;
}

// A whole number >= 1 (a count of elements, sequences or tokens), with its source.
StatusOr<double> CountEntry(const YamlMap& m, std::string_view section, std::string_view key,
                            SoftwareStack* st) {
  NDT_ASSIGN_OR_RETURN(Sourced s, m.Count(key));
  if (s.source.empty()) {
    return m.Error(key, "no source; write {value: ..., source: \"where the value comes from\"}");
  }
  if (s.value < 1 || s.value != std::floor(s.value) || s.value > 1e15) {
    return m.Error(key, fmt::format("expected a whole number >= 1, found {}", s.value));
  }
  st->sources[Key(section, key)] = s.source;
  return s.value;
}

const std::vector<std::string> kPrecisions = {"fp16", "bf16", "fp8"};
const std::vector<std::string> kRecomputes = {"none", "selective", "full"};
const std::vector<std::string> kGathers = {"per_block", "per_tensor"};
const std::vector<std::string> kReduceDtypes = {"fp16", "bf16", "fp32"};
// cudnn_fused: cuDNN's fused attention (TE FusedAttention) on Hopper and Blackwell; hopper_fused
// is its older name (the stacks of 2026-11 said it when only Hopper had a calibration).
const std::vector<std::string> kAttentionKernels = {"fa2", "cudnn_fused", "hopper_fused"};

Status ParseTraining(const YamlMap& knobs, const YamlMap& traits, SoftwareStack* st) {
  StrategyKnobs& k = st->knobs;
  NDT_ASSIGN_OR_RETURN(std::string prec, ChoiceEntry(knobs, "knobs", "precision", kPrecisions, st));
  Dtype d;
  ParseDtype(prec, &d);
  k.precision = d;
  NDT_ASSIGN_OR_RETURN(std::string rc, ChoiceEntry(knobs, "knobs", "recompute", kRecomputes, st));
  Recompute r;
  ParseRecompute(rc, &r);
  k.recompute = r;
  NDT_ASSIGN_OR_RETURN(k.flash_attention, BoolEntry(knobs, "knobs", "flash_attention", st));
  NDT_ASSIGN_OR_RETURN(k.grad_accum_fusion, BoolEntry(knobs, "knobs", "grad_accum_fusion", st));
  NDT_ASSIGN_OR_RETURN(k.overlap_dp, BoolEntry(knobs, "knobs", "overlap_dp", st));
  NDT_ASSIGN_OR_RETURN(k.overlap_p2p, BoolEntry(knobs, "knobs", "overlap_p2p", st));
  NDT_ASSIGN_OR_RETURN(k.sp, BoolEntry(knobs, "knobs", "sp", st));
  NDT_ASSIGN_OR_RETURN(k.tp_overlap, BoolEntry(knobs, "knobs", "tp_overlap", st));
  {
    NDT_ASSIGN_OR_RETURN(YamlMap e, Entry(knobs, "knobs", "zero", st));
    NDT_ASSIGN_OR_RETURN(int64_t z, e.Int("value"));
    NDT_RETURN_IF_ERROR(e.Finish());
    if (z < 0 || z > 3) return e.Error("value", fmt::format("{} is not a ZeRO stage; use 0-3", z));
    k.zero = static_cast<int>(z);
  }
  if (knobs.Has("cp_comm")) {
    NDT_ASSIGN_OR_RETURN(std::string cc,
                         ChoiceEntry(knobs, "knobs", "cp_comm", {"ring", "all_gather"}, st));
    CpComm c;
    ParseCpComm(cc, &c);
    k.cp_comm = c;
  }
  if (knobs.Has("uneven_stages")) {
    NDT_ASSIGN_OR_RETURN(k.uneven_stages, BoolEntry(knobs, "knobs", "uneven_stages", st));
  }
  if (knobs.Has("overlap_param_gather")) {  // optional: absent means after the optimizer
    NDT_ASSIGN_OR_RETURN(k.overlap_param_gather,
                         BoolEntry(knobs, "knobs", "overlap_param_gather", st));
  }
  NDT_RETURN_IF_ERROR(knobs.Finish());

  if (traits.Has("zero_stages")) {  // optional: absent means not stated (stack.h)
    NDT_ASSIGN_OR_RETURN(YamlMap e, Entry(traits, "traits", "zero_stages", st));
    NDT_ASSIGN_OR_RETURN(std::vector<int64_t> zs, e.IntList("value"));
    NDT_RETURN_IF_ERROR(e.Finish());
    for (size_t i = 0; i < zs.size(); ++i) {
      if (zs[i] < 0 || zs[i] > 3 || (i > 0 && zs[i] <= zs[i - 1])) {
        return e.Error("value", "expected ZeRO stages 0-3 in ascending order, each once");
      }
      st->zero_stages.push_back(static_cast<int>(zs[i]));
    }
    if (std::find(st->zero_stages.begin(), st->zero_stages.end(), *k.zero) ==
        st->zero_stages.end()) {
      return e.Error("value",
                     fmt::format("does not list the stack's own stage (knobs.zero {})", *k.zero));
    }
  }
  Zero3Traits& z3 = st->zero3;
  NDT_ASSIGN_OR_RETURN(std::string g, ChoiceEntry(traits, "traits", "zero3_gather", kGathers, st));
  ParseZero3Gather(g, &z3.gather);
  if (z3.gather == Zero3Gather::kPerTensor) {
    NDT_ASSIGN_OR_RETURN(z3.persistence_threshold_params,
                         CountEntry(traits, "traits", "zero3_persistence_threshold", st));
    NDT_ASSIGN_OR_RETURN(z3.prefetch_bucket_params,
                         CountEntry(traits, "traits", "zero3_prefetch_bucket", st));
    NDT_ASSIGN_OR_RETURN(z3.copy_out_per_rank,
                         BoolEntry(traits, "traits", "zero3_copy_out_per_rank", st));
    NDT_ASSIGN_OR_RETURN(z3.reduce_per_tensor,
                         BoolEntry(traits, "traits", "zero3_reduce_per_tensor", st));
    NDT_ASSIGN_OR_RETURN(Sourced view, traits.Quantity("zero3_host_view_op", Dim::kTime));
    if (view.source.empty()) {
      return traits.Error("zero3_host_view_op",
                          "no source; write {value: \"2.8 us\", source: \"where it comes from\"}");
    }
    if (view.value < 0 || view.value > 1e-3) {
      return traits.Error(
          "zero3_host_view_op",
          "expected a host time between 0 and 1 ms (microseconds, e.g. \"2.8 us\")");
    }
    st->sources[Key("traits", "zero3_host_view_op")] = view.source;
    z3.host_view_s = view.value;
    NDT_ASSIGN_OR_RETURN(z3.zero_fill, BoolEntry(traits, "traits", "zero3_zero_fill", st));
  }
  if (z3.gather == Zero3Gather::kPerBlock) {
    NDT_ASSIGN_OR_RETURN(z3.block_copy_out,
                         BoolEntry(traits, "traits", "zero3_block_copy_out", st));
  }
  NDT_ASSIGN_OR_RETURN(std::string rd,
                       ChoiceEntry(traits, "traits", "zero3_grad_reduce_dtype", kReduceDtypes, st));
  z3.grad_reduce_bytes_per_param = rd == "fp32" ? 4.0 : 2.0;
  NDT_ASSIGN_OR_RETURN(double sms, CountEntry(traits, "traits", "tp_overlap_comm_sms", st));
  st->tp_ub.comm_sms = static_cast<int>(std::min(sms, 1e6));
  NDT_ASSIGN_OR_RETURN(st->tp_ub.ag_copy_engine,
                       BoolEntry(traits, "traits", "tp_overlap_ag_copy_engine", st));
  NDT_ASSIGN_OR_RETURN(st->tp_ub.gemm_pieces,
                       BoolEntry(traits, "traits", "tp_overlap_gemm_pieces", st));
  NDT_ASSIGN_OR_RETURN(double splits, CountEntry(traits, "traits", "tp_overlap_rs_splits", st));
  st->tp_ub.rs_splits = static_cast<int>(std::min(splits, 1024.0));
  NDT_ASSIGN_OR_RETURN(std::string ak,
                       ChoiceEntry(traits, "traits", "attention_kernel", kAttentionKernels, st));
  st->attention_kernel = ak == "fa2" ? AttentionKernel::kFlash2 : AttentionKernel::kCudnnFused;
  if (traits.Has("elementwise_kernels")) {  // optional: absent means fused
    NDT_ASSIGN_OR_RETURN(std::string ew, ChoiceEntry(traits, "traits", "elementwise_kernels",
                                                     {"fused", "eager"}, st));
    st->eager_elementwise = ew == "eager";
  }
  if (traits.Has("selective_recompute")) {  // optional: absent means the attention core
    NDT_ASSIGN_OR_RETURN(std::string sr, ChoiceEntry(traits, "traits", "selective_recompute",
                                                     {"attention_core", "alternate_matmuls"}, st));
    st->selective_recompute = sr == "alternate_matmuls" ? SelectiveRecompute::kAlternateMatmuls
                                                        : SelectiveRecompute::kAttentionCore;
  }
  if (traits.Has("loss_logits")) {  // optional: absent means in place (Megatron's)
    NDT_ASSIGN_OR_RETURN(std::string ll, ChoiceEntry(traits, "traits", "loss_logits",
                                                     {"in_place", "fp32_copy"}, st));
    st->loss_fp32_copy = ll == "fp32_copy";
  }
  if (traits.Has("grad_dtype")) {  // optional: absent means the precision's default
    NDT_ASSIGN_OR_RETURN(std::string gd,
                         ChoiceEntry(traits, "traits", "grad_dtype", {"bf16", "fp32"}, st));
    st->grad_bytes_per_param = gd == "bf16" ? 2.0 : 4.0;
  }
  if (traits.Has("fp8_scaling")) {  // optional: absent means delayed (TE 1.x's only recipe)
    NDT_ASSIGN_OR_RETURN(std::string fs,
                         ChoiceEntry(traits, "traits", "fp8_scaling", {"delayed", "current"}, st));
    st->fp8_current_scaling = fs == "current";
  }
  if (traits.Has("host_issue_per_kernel")) {  // optional: absent means 0
    NDT_ASSIGN_OR_RETURN(Sourced issue, traits.Quantity("host_issue_per_kernel", Dim::kTime));
    if (issue.source.empty()) {
      return traits.Error("host_issue_per_kernel",
                          "no source; write {value: \"22 us\", source: \"where it comes from\"}");
    }
    if (issue.value < 0 || issue.value > 1e-3) {
      return traits.Error("host_issue_per_kernel",
                          "expected a host time between 0 and 1 ms (microseconds, e.g. \"22 us\")");
    }
    st->sources[Key("traits", "host_issue_per_kernel")] = issue.source;
    st->host_issue_per_kernel_s = issue.value;
  }
  return traits.Finish();
}

Status ParseServing(const YamlMap& knobs, const YamlMap& traits, SoftwareStack* st) {
  ServeKnobs& k = st->serve;
  NDT_ASSIGN_OR_RETURN(double mb, CountEntry(knobs, "knobs", "max_batch", st));
  NDT_ASSIGN_OR_RETURN(double mnt, CountEntry(knobs, "knobs", "max_num_tokens", st));
  NDT_ASSIGN_OR_RETURN(double blk, CountEntry(knobs, "knobs", "kv_block_tokens", st));
  if (mb > 1e6 || mnt > 1e7 || blk > 1e4) {
    return knobs.Error("", "max_batch, max_num_tokens or kv_block_tokens out of range");
  }
  k.max_batch = static_cast<int>(mb);
  k.max_num_tokens = static_cast<int>(mnt);
  k.kv_block_tokens = static_cast<int>(blk);
  NDT_ASSIGN_OR_RETURN(Sourced frac, knobs.Quantity("kv_free_memory_fraction", Dim::kFraction));
  if (frac.source.empty()) {
    return knobs.Error("kv_free_memory_fraction",
                       "no source; write {value: \"90%\", source: \"...\"}");
  }
  if (frac.value <= 0 || frac.value > 1) {
    return knobs.Error("kv_free_memory_fraction", "must be in (0%, 100%]");
  }
  k.kv_free_memory_frac = frac.value;
  st->sources["knobs.kv_free_memory_fraction"] = frac.source;
  NDT_RETURN_IF_ERROR(knobs.Finish());
  NDT_ASSIGN_OR_RETURN(st->in_flight_batching,
                       BoolEntry(traits, "traits", "in_flight_batching", st));
  NDT_ASSIGN_OR_RETURN(st->chunked_prefill, BoolEntry(traits, "traits", "chunked_prefill", st));
  NDT_ASSIGN_OR_RETURN(st->host_overlap, BoolEntry(traits, "traits", "host_overlap", st));
  NDT_ASSIGN_OR_RETURN(st->tp_allreduce, ChoiceEntry(traits, "traits", "tp_allreduce",
                                                     {"nccl", "trtllm-2024", "trtllm-2025"}, st));
  NDT_ASSIGN_OR_RETURN(st->cuda_graphs, BoolEntry(traits, "traits", "cuda_graphs", st));
  // serve/engine.h schedules in flight with chunked prefill and nothing else: a stack that ran
  // otherwise would be predicted with an engine it did not have.
  if (!st->in_flight_batching) {
    return traits.Error("in_flight_batching", "false is not modelled (serve/ batches in flight)");
  }
  if (!st->chunked_prefill) {
    return traits.Error("chunked_prefill", "false is not modelled (serve/ chunks prefills)");
  }
  return traits.Finish();
}

}  // namespace

StatusOr<SoftwareStack> ParseStack(const YamlMap& m) {
  SoftwareStack st;
  st.file = m.file();
  NDT_ASSIGN_OR_RETURN(st.name, m.String("name"));
  if (st.name.empty()) return m.Error("name", "must not be empty");
  NDT_ASSIGN_OR_RETURN(st.date, m.String("date"));
  if (st.date.size() != 7 || st.date[4] != '-' ||
      !std::all_of(st.date.begin(), st.date.end(),
                   [](char c) { return c == '-' || (c >= '0' && c <= '9'); })) {
    return m.Error("date", "'" + st.date + "' is not a month; write \"YYYY-MM\" in quotes");
  }
  NDT_ASSIGN_OR_RETURN(st.description, m.String("description"));
  NDT_ASSIGN_OR_RETURN(std::string kind, m.String("kind"));
  if (kind != "training" && kind != "serving") {
    return m.Error("kind", "unknown value '" + kind + "'; expected one of: training, serving");
  }
  st.kind = kind == "training" ? StackKind::kTraining : StackKind::kServing;
  NDT_ASSIGN_OR_RETURN(YamlMap knobs, m.Map("knobs"));
  NDT_ASSIGN_OR_RETURN(YamlMap traits, m.Map("traits"));
  if (st.kind == StackKind::kTraining) {
    NDT_RETURN_IF_ERROR(ParseTraining(knobs, traits, &st));
  } else {
    NDT_RETURN_IF_ERROR(ParseServing(knobs, traits, &st));
  }
  NDT_RETURN_IF_ERROR(m.Finish());
  return st;
}

StatusOr<SoftwareStack> LoadStackFile(const std::string& path) {
  NDT_ASSIGN_OR_RETURN(YamlMap m, LoadYamlMapFile(path));
  return ParseStack(m);
}

StatusOr<std::vector<SoftwareStack>> LoadStacks(const std::string& data_dir) {
  const std::string dir = (data_dir.empty() ? std::string(NDT_DATA_DIR) : data_dir) + "/stacks";
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) {
    return Status::NotFound(fmt::format("{}: cannot read directory ({})", dir, ec.message()));
  }
  std::vector<std::string> files;
  for (const fs::directory_entry& e : it) {
    if (e.path().extension() == ".yaml") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  std::vector<SoftwareStack> out;
  for (const std::string& f : files) {
    NDT_ASSIGN_OR_RETURN(SoftwareStack st, LoadStackFile(f));
    if (fs::path(f).stem().string() != st.name) {
      return Status::InvalidInput(
          fmt::format("{}: name '{}' differs from the file name; name the "
                      "file {}.yaml",
                      f, st.name, st.name));
    }
    out.push_back(std::move(st));
  }
  return out;
}

StatusOr<SoftwareStack> FindStack(const std::vector<SoftwareStack>& stacks, const std::string& name,
                                  std::optional<StackKind> kind) {
  std::vector<std::string> names;
  for (const SoftwareStack& st : stacks) {
    if (kind && st.kind != *kind) continue;
    if (st.name == name) return st;
    names.push_back(st.name);
  }
  for (const SoftwareStack& st : stacks) {
    if (st.name == name) {
      return Status::InvalidInput(
          fmt::format("stack '{}' is a {} stack; use one of: {}", name,
                      st.kind == StackKind::kTraining ? "training" : "serving", Join(names, ", ")));
    }
  }
  return Status::NotFound(fmt::format("unknown stack '{}'{} (known: {})", name,
                                      DidYouMean(name, names), Join(names, ", ")));
}

void ApplyTrainStack(const SoftwareStack& stack, const StrategyKnobs& user, Strategy* s) {
  const StrategyKnobs& k = stack.knobs;
  auto pick = [](const auto& u, const auto& st, auto* out) {
    if (u) {
      *out = *u;
    } else if (st) {
      *out = *st;
    }
  };
  pick(user.precision, k.precision, &s->precision);
  pick(user.recompute, k.recompute, &s->recompute);
  pick(user.flash_attention, k.flash_attention, &s->flash_attention);
  pick(user.grad_accum_fusion, k.grad_accum_fusion, &s->grad_accum_fusion);
  pick(user.overlap_dp, k.overlap_dp, &s->overlap_dp);
  pick(user.overlap_p2p, k.overlap_p2p, &s->overlap_p2p);
  pick(user.zero, k.zero, &s->zero);
  pick(user.cp_comm, k.cp_comm, &s->cp_comm);
  pick(user.uneven_stages, k.uneven_stages, &s->uneven_stages);
  pick(user.overlap_param_gather, k.overlap_param_gather, &s->overlap_param_gather);
  // SP and TP overlap exist only with tensor parallelism: a stack turns them on where they apply.
  if (user.sp) {
    s->sp = *user.sp;
  } else if (k.sp) {
    s->sp = *k.sp && s->tp > 1;
  }
  if (user.tp_overlap) {
    s->tp_overlap = *user.tp_overlap;
  } else if (k.tp_overlap) {
    s->tp_overlap = *k.tp_overlap && s->sp && s->tp > 1;
  }
  s->zero3 = stack.zero3;
  s->tp_ub = stack.tp_ub;
  s->attention_kernel = user.attention_kernel.value_or(stack.attention_kernel);
  s->eager_elementwise = stack.eager_elementwise;
  s->selective_recompute = stack.selective_recompute;
  s->host_issue_per_kernel_s = stack.host_issue_per_kernel_s;
  s->loss_fp32_copy = stack.loss_fp32_copy;
  s->grad_bytes_per_param = stack.grad_bytes_per_param;
  s->fp8_current_scaling = stack.fp8_current_scaling;
}

Status CheckTrainPrecision(const GpuSpec& gpu, Dtype precision) {
  if (precision != Dtype::kFp8 || EffectivePrecision(gpu, Dtype::kFp8) == Precision::kFp8) {
    return Status::Ok();
  }
  return Status::Unsupported(
      fmt::format("--precision fp8: {} has no fp8 tensor cores, and FP8 training needs them "
                  "(Transformer Engine refuses compute capability < 8.9); use bf16",
                  gpu.name));
}

}  // namespace ndt
