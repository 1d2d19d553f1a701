// File: cmd/common.h
// Option groups several commands share, each declared once: the model (--model, --model-file,
// --hf-config or inline sizes), the scale-out fabric (--tiers --radix ...), request lengths
// (--dataset --input-len --output-len --output-tokens-mean) and where the planners search
// (--sku/--skus, --gpus/--vms). Each group resolves itself against the Context.
#ifndef NDTWIN_CMD_COMMON_H_
#define NDTWIN_CMD_COMMON_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cmd/context.h"
#include "cmd/options.h"
#include "core/status.h"
#include "model/transformer.h"
#include "report/interval_render.h"
#include "serve/request.h"
#include "topo/builders.h"
#include "topo/cluster.h"

namespace ndt {

// --model NAME, --model-file FILE, --hf-config FILE, or inline --layers/--hidden/...; exactly
// one. --seq also overrides a preset's, file's or config's sequence length.
struct ModelArgs {
  std::string model, model_file, hf_config;
  std::optional<int64_t> layers, hidden, heads, kv_heads, ffn, vocab, seq;
  std::optional<std::string> arch;

  void Declare(OptionList* o);
  // The model the options name; kInvalidInput unless exactly one way is given.
  StatusOr<TransformerSpec> Resolve(const Context& ctx) const;
};

// The scale-out fabric: Azure does not publish its fat trees, so these are what-if parameters.
struct FabricArgs {
  int tiers = 0;             // 0: the fewest tiers the radix can wire
  std::optional<int> radix;  // nullopt: FabricSpec's default, raised where it cannot wire the VMs
  int vms_per_leaf = 0;
  double oversubscription = 1.0;
  bool ecmp_spread = false;

  void Declare(OptionList* o);
  // As a FabricSpec; tiers stays 0 ("the fewest that fit") for the caller to resolve.
  FabricSpec ToSpec() const;
  // Copies the options into spec->fabric; spec->sku must be set (tiers 0 picks the fewest;
  // without --radix, a radix that can wire the VMs: topo/builders.h ResolveFabric). Returns that
  // assumption in one line, or "".
  std::string Apply(ClusterSpec* spec) const;
};

// Request lengths: a dataset preset or CSV (default: the MLPerf dataset of the model, else
// mlperf-llama2-70b; serve/request.h DefaultDataset) or fixed lengths, every output rescaled to a
// mean if asked. An explicit 0 is an error, not "the default".
struct LengthArgs {
  std::string dataset;
  std::optional<int> input_len, output_len;
  std::optional<double> output_tokens_mean;

  void Declare(OptionList* o);
  bool fixed() const { return input_len.has_value() || output_len.has_value(); }
  // The dataset the lengths come from for `model` (the model's name): --dataset, else its
  // default; "" for fixed lengths.
  StatusOr<std::string> Dataset(const Context& ctx, const std::string& model) const;
  StatusOr<std::vector<RequestLengths>> Resolve(const Context& ctx, const std::string& model) const;
  // The dataset's own benchmark p99 limits for a server (interactive = false) or interactive
  // scenario (datasets.yaml server_p99 / interactive_p99); zeros for fixed lengths, a CSV or a
  // dataset that has none (the service then takes Llama-2-70B's).
  StatusOr<LatencyLimits> BenchmarkLimits(const Context& ctx, bool interactive,
                                          const std::string& model) const;
};

// Where both planners search: --sku / --skus and --gpus / --vms.
struct SizeArgs {
  std::string sku, skus;
  int gpus = 0, vms = 0;

  void Declare(OptionList* o);
  // --sku S, --skus all (the default) or --skus A,B,C; checks --gpus / --vms.
  StatusOr<std::vector<const SkuSpec*>> Resolve(const Catalog& cat) const;
};

// --price-per-hour SIZE=USD, repeatable: a VM size's pay-as-you-go price per VM-hour for this
// run (a size data/prices.yaml has no price for, or a negotiated rate), beating the file's.
struct PriceArgs {
  std::vector<std::string> prices;

  void Declare(OptionList* o);
  // `ctx` when no price is given; else a copy of it whose catalog carries the prices, kept in
  // *holder. kInvalidInput for a malformed entry or a price not in (0, 1e6] USD; kNotFound for an
  // unknown size.
  StatusOr<const Context*> Apply(const Context& ctx, std::optional<Context>* holder) const;
};

// Bounds several commands' options share: VMs (a cluster holds at most kMaxClusterGpus GPUs,
// topo/builders.h, so 1-GPU sizes reach it in VMs) and GPUs used per VM (the library checks the
// size's own count).
inline constexpr int kMaxVms = static_cast<int>(kMaxClusterGpus);
inline constexpr int kMaxGpusPerVm = 1024;

// Training: a global batch of up to 2^24 sequences (the largest published batches are 16M
// tokens, 2,048 sequences of 8K; 2^24 leaves room for short sequences); parallel degrees up to
// 1,024 (tp, cp, ep) or the layers (pp, vpp); up to 10^15 training tokens (the largest
// published runs are 15-36 x 10^12).
inline constexpr int64_t kMaxGbs = int64_t{1} << 24;
inline constexpr int kMaxDegree = 1024;
inline constexpr double kMaxTrainTokens = 1e15;
// Rows a planner prints (--top).
inline constexpr int kMaxTop = 1000;
// Threads of a command's --threads (plan, sweep): beyond, libgomp cannot start them (a sweep
// with --threads 100000 died in GOMP_parallel).
inline constexpr int kMaxThreads = 1024;
// The training options' ranges (train and plan train), on options already declared.
void RangeTrainOptions(OptionList* o);

// "a,b,c" -> {"a", "b", "c"}; "" -> {}.
std::vector<std::string> SplitCommas(const std::string& list);

// --threads: 0 (all cores) or 1..1024.
Status CheckThreads(int threads);

// The interval class of a VM size's GPU architecture for a workload (training, serving,
// collectives); report/interval_render.h renders it beside a number.
IntervalClass IntervalFor(const Context& ctx, const SkuSpec& sku, const std::string& workload);

}  // namespace ndt

#endif  // NDTWIN_CMD_COMMON_H_
