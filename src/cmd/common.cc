#include "cmd/common.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "topo/builders.h"

namespace ndt {
namespace {

constexpr int kMaxPlanGpus = 131072;
constexpr int kMaxThreads = 1024;

}  // namespace

std::vector<std::string> SplitCommas(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (!list.empty() && start <= list.size()) {
    const size_t end = std::min(list.find(',', start), list.size());
    out.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

void ModelArgs::Declare(OptionList* o) {
  o->Add("model", &model, "Model preset or YAML file (see: ndtwin model list)");
  o->Add("model-file", &model_file, "Model YAML file").LocalFile();
  o->Add("hf-config", &hf_config, "Hugging Face config.json").LocalFile();
  o->Add("layers", &layers, "Inline model: layers");
  o->Add("hidden", &hidden, "Inline model: hidden size");
  o->Add("heads", &heads, "Inline model: attention heads");
  o->Add("kv-heads", &kv_heads, "Inline model: K/V heads");
  o->Add("ffn", &ffn, "Inline model: MLP intermediate size");
  o->Add("vocab", &vocab, "Inline model: vocabulary");
  o->Add("seq", &seq, "Sequence length (inline model, or overrides a model's)");
  o->Add("arch", &arch, "Inline model: gpt | llama");
}

StatusOr<TransformerSpec> ModelArgs::Resolve(const Context& ctx) const {
  bool inline_given = arch.has_value();
  InlineModelArgs in;
  const std::pair<const char*, std::pair<const std::optional<int64_t>*, int64_t*>> sizes[] = {
      {"--layers", {&layers, &in.layers}}, {"--hidden", {&hidden, &in.hidden}},
      {"--heads", {&heads, &in.heads}},    {"--kv-heads", {&kv_heads, &in.kv_heads}},
      {"--ffn", {&ffn, &in.ffn}},          {"--vocab", {&vocab, &in.vocab}}};
  for (const auto& [name, p] : sizes) {
    if (!p.first->has_value()) continue;
    inline_given = true;
    if (**p.first < 1) {
      return Status::InvalidInput(std::string(name) + " must be >= 1 (got " +
                                  std::to_string(**p.first) + "); omit it for the default");
    }
    *p.second = **p.first;
  }
  if (seq.has_value()) {
    if (*seq < 1) {
      return Status::InvalidInput("--seq must be >= 1 (got " + std::to_string(*seq) + ")");
    }
    in.seq = *seq;
  }
  if (arch.has_value()) in.arch = *arch;
  const int given = !model.empty() + !model_file.empty() + !hf_config.empty() + inline_given;
  if (given != 1) {
    return Status::InvalidInput(
        "give exactly one of --model NAME, --model-file FILE, --hf-config FILE or inline "
        "--layers/--hidden/--heads (see: ndtwin model list)");
  }
  StatusOr<TransformerSpec> m = Status::InvalidInput("no model");
  if (!model.empty()) {
    m = LoadModel(model, ModelsDir(ctx.data_dir));
  } else if (!model_file.empty()) {
    m = LoadModelFile(model_file);
  } else if (!hf_config.empty()) {
    m = LoadHfConfigFile(hf_config);
  } else {
    return BuildInlineModel(in);
  }
  if (m.ok() && seq.has_value()) {
    m->seq_len = *seq;
    NDT_RETURN_IF_ERROR(Validate(*m));
  }
  return m;
}

void FabricArgs::Declare(OptionList* o) {
  o->Add("tiers", &tiers, "Fat-tree tiers, 2 or 3 (default: fewest that fit)");
  o->Add("radix", &radix, "Ports per IB switch (default 64)");
  o->Add("vms-per-leaf", &vms_per_leaf, "VMs per leaf group (default radix/2)");
  o->Add("oversubscription", &oversubscription,
         "Leaf down:up bandwidth ratio (default 1 = non-blocking)");
  o->Add("ecmp-spread", &ecmp_spread,
         "Spread each flow over all uplinks, like adaptive routing (default: one hashed uplink "
         "per GPU pair)");
}

FabricSpec FabricArgs::ToSpec() const {
  FabricSpec s;
  s.tiers = tiers;
  s.switch_radix = radix;
  s.vms_per_leaf = vms_per_leaf;
  s.oversubscription = oversubscription;
  s.ecmp_spread = ecmp_spread;
  return s;
}

void FabricArgs::Apply(ClusterSpec* spec) const {
  spec->fabric = ToSpec();
  if (spec->fabric.tiers == 0) spec->fabric.tiers = ChooseTiers(*spec);
}

void LengthArgs::Declare(OptionList* o) {
  o->Add("dataset", &dataset, "Length dataset preset or CSV (default mlperf-llama2-70b)");
  o->Add("input-len", &input_len, "Fixed input tokens per request");
  o->Add("output-len", &output_len, "Fixed output tokens per request");
  o->Add("output-tokens-mean", &output_tokens_mean, "Rescale every output length so the mean is X");
}

StatusOr<std::vector<RequestLengths>> LengthArgs::Resolve(const Context& ctx) const {
  std::vector<RequestLengths> lengths;
  if (fixed()) {
    if (!dataset.empty()) {
      return Status::InvalidInput("give either --dataset or --input-len/--output-len, not both");
    }
    NDT_ASSIGN_OR_RETURN(RequestLengths l,
                         FixedLengths(input_len.has_value(), input_len.value_or(0),
                                      output_len.has_value(), output_len.value_or(0)));
    lengths = {l};
  } else {
    NDT_ASSIGN_OR_RETURN(
        lengths, LoadDataset(dataset.empty() ? "mlperf-llama2-70b" : dataset, ctx.data_dir));
  }
  if (output_tokens_mean.has_value()) {
    NDT_RETURN_IF_ERROR(RescaleOutputsChecked(*output_tokens_mean, &lengths));
  }
  return lengths;
}

void SizeArgs::Declare(OptionList* o) {
  o->Add("sku", &sku, "One VM size (see: ndtwin sku list)");
  o->Add("skus", &skus, "all (default) or a comma-separated list of sizes");
  o->Add("gpus", &gpus, "Total GPUs (sizes whose GPUs per VM divide it)");
  o->Add("vms", &vms, "VMs of each size (instead of --gpus)");
}

StatusOr<std::vector<const SkuSpec*>> SizeArgs::Resolve(const Catalog& cat) const {
  if (gpus > 0 && vms > 0) return Status::InvalidInput("give --gpus N or --vms N (not both)");
  if (gpus < 0 || vms < 0) return Status::InvalidInput("--gpus and --vms must be >= 1");
  // The largest clusters built today are ~100k GPUs; beyond that no fabric in data/ is sourced.
  if (gpus > kMaxPlanGpus || vms > kMaxPlanGpus / 2) {
    return Status::InvalidInput("plan searches up to " + std::to_string(kMaxPlanGpus) +
                                " GPUs (--gpus) or " + std::to_string(kMaxPlanGpus / 2) +
                                " VMs (--vms); ask for fewer");
  }
  if (!sku.empty() && !skus.empty()) {
    return Status::InvalidInput("give --sku NAME or --skus all|A,B,... (not both)");
  }
  std::vector<const SkuSpec*> out;
  if (sku.empty() && (skus.empty() || skus == "all")) {
    for (const SkuSpec& s : cat.skus()) {
      if (s.gpus > 0) out.push_back(&s);
    }
    return out;
  }
  for (const std::string& name : SplitCommas(sku.empty() ? skus : sku)) {
    NDT_ASSIGN_OR_RETURN(const SkuSpec* s, cat.FindSku(name));
    out.push_back(s);
  }
  return out;
}

Status CheckThreads(int threads) {
  if (threads < 0 || threads > kMaxThreads) {
    return Status::InvalidInput("--threads must be in 1.." + std::to_string(kMaxThreads) +
                                " (got " + std::to_string(threads) + "); omit it for all cores");
  }
  return Status::Ok();
}

IntervalClass IntervalFor(const Context& ctx, const SkuSpec& sku, const std::string& workload) {
  return ctx.intervals.For(ArchClassName(ctx.catalog.GpuOf(sku).arch), workload);
}

Json IntervalJson(const IntervalClass& c, std::pair<double, double> lo_hi) {
  return Json{{"p10", lo_hi.first},
              {"p90", lo_hi.second},
              {"basis", c.basis},
              {"cases", c.cases},
              {"class", c.name}};
}

std::string IntervalText(const IntervalClass& c, std::pair<double, double> lo_hi,
                         const char* num_fmt, const std::string& unit) {
  char lo[32], hi[32];
  std::snprintf(lo, sizeof lo, num_fmt, lo_hi.first);
  std::snprintf(hi, sizeof hi, num_fmt, lo_hi.second);
  std::string s = std::string(" (p10\u2013p90 ") + lo + "\u2013" + hi +
                  (unit.empty() || unit[0] == '%' ? "" : " ") + unit + "; " +
                  std::to_string(c.cases) + (c.cases == 1 ? " case, " : " cases, ") + c.name;
  if (c.default_width) s += "; fewer than 3 cases: default width";
  return s + ")";
}

}  // namespace ndt
