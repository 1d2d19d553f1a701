#include "cmd/common.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "serve/request.h"
#include "topo/builders.h"

namespace ndt {
namespace {

constexpr int kMaxPlanGpus = 131072;

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
  o->Add("model", &model, "Model preset or YAML file (see: ndtwin model list)").PresetOrFile();
  o->Add("model-file", &model_file, "Model YAML file").LocalFile();
  o->Add("hf-config", &hf_config, "Hugging Face config.json").LocalFile();
  // The same bounds as a model file's keys (model/transformer.h).
  const char* kDefault = "omit it for the default";
  o->Add("layers", &layers, "Inline model: layers").Range(1, kMaxModelLayers, kDefault);
  o->Add("hidden", &hidden, "Inline model: hidden size").Range(1, kMaxModelHidden, kDefault);
  o->Add("heads", &heads, "Inline model: attention heads").Range(1, kMaxModelHeads, kDefault);
  o->Add("kv-heads", &kv_heads, "Inline model: K/V heads").Range(1, kMaxModelHeads, kDefault);
  o->Add("ffn", &ffn, "Inline model: MLP intermediate size").Range(1, kMaxModelFfn, kDefault);
  o->Add("vocab", &vocab, "Inline model: vocabulary").Range(1, kMaxModelVocab, kDefault);
  o->Add("seq", &seq, "Sequence length (inline model, or overrides a model's)")
      .Range(1, kMaxModelSeq, kDefault);
  o->Add("arch", &arch,
         "Inline model: gpt | llama (default gpt; mixture of experts: --model, --model-file or "
         "--hf-config)");
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
    *p.second = **p.first;  // in range: CheckRanges ran before
  }
  if (seq.has_value()) in.seq = *seq;
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
  o->Add("tiers", &tiers, "Fat-tree tiers, 2 or 3 (default: fewest that fit)")
      .Range(0, 3, "2 or 3 tiers, 0 for the fewest that fit");
  o->Add("radix", &radix,
         "Ports per IB switch (default 64, doubled where 3 tiers of 64 cannot wire the VMs)")
      .Range(4, kMaxSwitchRadix, "ports per InfiniBand switch (Quantum-2: 64)");
  o->Add("vms-per-leaf", &vms_per_leaf, "VMs per leaf group (default radix/2)")
      .Range(0, kMaxSwitchRadix, "0 for radix/2");
  o->Add("oversubscription", &oversubscription,
         "Leaf down:up bandwidth ratio (default 1 = non-blocking)")
      .Range(1, kMaxOversubscription, "leaf down:up bandwidth, 1 = non-blocking");
  o->Add("ecmp-spread", &ecmp_spread,
         "Spread each flow over all uplinks, like adaptive routing (default: one hashed uplink "
         "per GPU pair)");
}

FabricSpec FabricArgs::ToSpec() const {
  FabricSpec s;
  s.tiers = tiers;
  s.switch_radix = radix.value_or(s.switch_radix);
  s.default_radix = !radix.has_value();
  s.vms_per_leaf = vms_per_leaf;
  s.oversubscription = oversubscription;
  s.ecmp_spread = ecmp_spread;
  return s;
}

std::string FabricArgs::Apply(ClusterSpec* spec) const {
  spec->fabric = ToSpec();
  return ResolveFabric(spec);
}

void PriceArgs::Declare(OptionList* o) {
  o->Add("price-per-hour", &prices,
         "SIZE=USD: a size's pay-as-you-go price per VM-hour for this run (repeatable; beats "
         "data/prices.yaml; sizes without a price are left out of cost rankings)");
}

StatusOr<const Context*> PriceArgs::Apply(const Context& ctx,
                                          std::optional<Context>* holder) const {
  if (prices.empty()) return &ctx;
  holder->emplace(ctx);
  for (const std::string& p : prices) {
    const size_t eq = p.find('=');
    const std::string size = eq == std::string::npos ? "" : p.substr(0, eq);
    const std::string usd = eq == std::string::npos ? "" : p.substr(eq + 1);
    char* end = nullptr;
    const double v = usd.empty() ? 0 : std::strtod(usd.c_str(), &end);
    if (size.empty() || usd.empty() || end == nullptr || *end != '\0') {
      return Status::InvalidInput("--price-per-hour '" + p +
                                  "': use SIZE=USD, e.g. ND96isr_H200_v5=110.5");
    }
    // A VM-hour of the largest size costs about 100 USD; 1e6 leaves room for any what-if.
    if (!(v > 0 && v <= 1e6)) {
      return Status::InvalidInput("--price-per-hour '" + p +
                                  "': the price must be > 0 and <= 1e6 USD per VM-hour");
    }
    PriceSpec price;
    price.usd_per_hour = v;
    price.source = "--price-per-hour";
    NDT_RETURN_IF_ERROR((*holder)->catalog.SetPrice(size, price));
  }
  return &**holder;
}

void LengthArgs::Declare(OptionList* o) {
  o->Add("dataset", &dataset,
         "Length dataset preset or CSV (default: the model's MLPerf dataset, else "
         "mlperf-llama2-70b)")
      .PresetOrFile();
  o->Add("input-len", &input_len, "Fixed input tokens per request").Range(1, kMaxTokensPerRequest);
  o->Add("output-len", &output_len, "Fixed output tokens per request")
      .Range(1, kMaxTokensPerRequest);
  o->Add("output-tokens-mean", &output_tokens_mean, "Rescale every output length so the mean is X")
      .Range(1, kMaxTokensPerRequest);
}

StatusOr<std::string> LengthArgs::Dataset(const Context& ctx, const std::string& model) const {
  if (fixed()) return std::string();
  if (!dataset.empty()) return dataset;
  return DefaultDataset(model, ctx.data_dir);
}

StatusOr<std::vector<RequestLengths>> LengthArgs::Resolve(const Context& ctx,
                                                          const std::string& model) const {
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
    NDT_ASSIGN_OR_RETURN(std::string name, Dataset(ctx, model));
    NDT_ASSIGN_OR_RETURN(lengths, LoadDataset(name, ctx.data_dir));
  }
  if (output_tokens_mean.has_value()) {
    NDT_RETURN_IF_ERROR(RescaleOutputsChecked(*output_tokens_mean, &lengths));
  }
  return lengths;
}

StatusOr<LatencyLimits> LengthArgs::BenchmarkLimits(const Context& ctx, bool interactive,
                                                    const std::string& model) const {
  if (fixed()) return LatencyLimits{};
  NDT_ASSIGN_OR_RETURN(std::string name, Dataset(ctx, model));
  NDT_ASSIGN_OR_RETURN(std::optional<DatasetPreset> p, FindDatasetPreset(name, ctx.data_dir));
  if (!p) return LatencyLimits{};
  return interactive ? p->interactive : p->server;
}

void SizeArgs::Declare(OptionList* o) {
  o->Add("sku", &sku, "One VM size (see: ndtwin sku list)");
  o->Add("skus", &skus, "all (default) or a comma-separated list of sizes");
  o->Add("gpus", &gpus, "Total GPUs (sizes whose GPUs per VM divide it); this or --vms is needed")
      .Range(0, kMaxPlanGpus, "plan searches up to " + std::to_string(kMaxPlanGpus) + " GPUs");
  o->Add("vms", &vms, "VMs of each size (instead of --gpus)")
      .Range(0, kMaxPlanGpus / 2,
             "plan searches up to " + std::to_string(kMaxPlanGpus / 2) + " VMs");
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
  const std::string& list = sku.empty() ? skus : sku;
  for (std::string name : SplitCommas(list)) {
    name.erase(0, name.find_first_not_of(' '));  // "A, B" as people write it
    name.erase(name.find_last_not_of(' ') + 1);
    if (name.empty()) {
      return Status::InvalidInput(std::string(sku.empty() ? "--skus" : "--sku") + " '" + list +
                                  "' has an empty entry; list sizes as A,B,C");
    }
    NDT_ASSIGN_OR_RETURN(const SkuSpec* s, cat.FindSku(name));
    // A size listed twice (or under two spellings) is searched once.
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  }
  return out;
}

void RangeTrainOptions(OptionList* o) {
  const char* choose = "omit it to choose it automatically";
  auto range = [&](const char* name, double lo, double hi, const char* note = "") {
    // Options a shared group already ranged (plan's --vms, 0 for "not given") keep theirs.
    if (o->Find(name) != nullptr && !o->Find(name)->min.has_value()) o->Range(name, lo, hi, note);
  };
  range("vms", 1, kMaxVms);
  range("gbs", 1, kMaxGbs, "sequences per iteration");
  range("mbs", 1, kMaxGbs, choose);
  range("tp", 1, kMaxDegree);
  range("cp", 1, kMaxDegree);
  range("ep", 1, kMaxDegree);
  range("pp", 1, kMaxModelLayers);
  range("vpp", 1, kMaxModelLayers, choose);
  range("dp", 1, kMaxClusterGpus, choose);
  range("zero", 0, 3, "ZeRO stages are 0, 1, 2 and 3");
  range("tokens", 0, kMaxTrainTokens, "training tokens; 0 for none");
  range("top", 1, kMaxTop);
  range("threads", 0, kMaxThreads, "0 or omitted for all cores");
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

}  // namespace ndt
