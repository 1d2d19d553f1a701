// File: serve/request.h
// Requests to an inference service: lengths (input and output tokens) from a dataset CSV
// (`input_length,output_length`, e.g. the MLPerf sets in data/datasets/), a named preset, or
// fixed lengths; arrivals all at t = 0 (MLPerf Offline), Poisson at a rate (MLPerf Server), or
// from a trace CSV (`arrival_s,input_tokens,output_tokens`). Randomness is one seeded
// std::mt19937_64 with our own uniform and exponential draws, so a seed gives the same requests
// on every compiler. Times in seconds, lengths in tokens.
#ifndef NDTWIN_SERVE_REQUEST_H_
#define NDTWIN_SERVE_REQUEST_H_

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/status.h"

namespace ndt {

struct RequestLengths {
  int input_tokens = 0;
  int output_tokens = 0;  // >= 1
};

struct Request {
  int id = 0;
  double arrival_s = 0;
  int input_tokens = 0;
  int output_tokens = 0;
  // Disaggregated decode: the prompt's K/V arrive computed with the first output token, so the
  // engine admits the request straight into decode.
  bool prefilled = false;
};

// A named length dataset of data/datasets/datasets.yaml.
// A benchmark's p99 latency limits (seconds; 0 = the benchmark sets none).
struct LatencyLimits {
  double ttft_s = 0, tpot_s = 0;
};

struct DatasetPreset {
  std::string name;
  std::vector<std::string> aliases;
  std::vector<std::string> models;  // catalog models its MLPerf benchmark runs (datasets.yaml)
  std::string file;                 // absolute path
  int requests = 0;
  std::string source;
  std::string note;
  // The MLPerf benchmark's own Server and Interactive limits for this dataset (mlperf.conf),
  // the defaults of --ttft-p99/--tpot-p99 when the dataset is used.
  LatencyLimits server, interactive;
};

// Presets of data_dir/datasets/datasets.yaml ("" = NDT_DATA_DIR), in file order.
StatusOr<std::vector<DatasetPreset>> LoadDatasetPresets(const std::string& data_dir);

// The most tokens an input or output length may have: 2^20, 8x the 128K context Llama 3.1 and
// DeepSeek-V3 serve (data/models gives their shorter pre-training lengths); larger ones would
// overflow the engine's int counters.
constexpr int kMaxTokensPerRequest = 1 << 20;

// Loads a CSV with header `input_length,output_length` (extra columns ignored). Every length
// is a whole number of tokens in 1..2^20; kInvalidInput otherwise, naming file:line, the column
// and the value.
StatusOr<std::vector<RequestLengths>> LoadLengthsCsv(const std::string& path);
// `name_or_path`: a preset name or alias (case-insensitive) or a CSV path. A preset's lengths of
// 0 (ShareGPT has empty prompts and answers) count as 1 token; a CSV path's are errors. Unknown
// names that are not files: "unknown dataset 'x'; did you mean 'y'? (presets: ...)".
// The preset named name_or_path (or one of its aliases), or nullptr when none is (a CSV path).
StatusOr<std::optional<DatasetPreset>> FindDatasetPreset(const std::string& name_or_path,
                                                         const std::string& data_dir);

StatusOr<std::vector<RequestLengths>> LoadDataset(const std::string& name_or_path,
                                                  const std::string& data_dir);
// The dataset infer and plan infer take without --dataset: the preset whose `models` lists
// `model` (case-insensitive: llama3-405b -> mlperf-llama3-1-405b), else mlperf-llama2-70b.
inline constexpr const char* kDefaultDataset = "mlperf-llama2-70b";
StatusOr<std::string> DefaultDataset(const std::string& model, const std::string& data_dir);
// The fixed lengths of --input-len and --output-len (`*_given`: the flag was on the command
// line). kInvalidInput unless both are given, each in 1..kMaxTokensPerRequest.
StatusOr<RequestLengths> FixedLengths(bool input_given, int input_tokens, bool output_given,
                                      int output_tokens);

// Rescales every output length by mean/current mean, rounding to the nearest integer (>= 1,
// <= kMaxTokensPerRequest), so the mean becomes `mean_tokens` within rounding.
// REQUIRES: mean_tokens >= 1.
void RescaleOutputs(double mean_tokens, std::vector<RequestLengths>* lengths);
// The same for a user's --output-tokens-mean: kInvalidInput, with the numbers, when the mean is
// not in 1..kMaxTokensPerRequest or the longest output would exceed kMaxTokensPerRequest.
Status RescaleOutputsChecked(double mean_tokens, std::vector<RequestLengths>* lengths);
double MeanOutputTokens(const std::vector<RequestLengths>& lengths);

// Deterministic random numbers (mt19937_64 + our own draws, same on every compiler).
class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}
  // Uniform in [0, 1): the top 53 bits of one 64-bit draw.
  double Uniform() { return static_cast<double>(gen_() >> 11) * 0x1.0p-53; }
  // Exponential with the given rate (mean 1/rate): -ln(1 - U) / rate.
  double Exponential(double rate);
  // Uniform integer in [0, n).
  uint64_t Below(uint64_t n) { return gen_() % n; }

 private:
  std::mt19937_64 gen_;
};

// `count` requests, all arriving at t = 0, taking lengths in dataset order (wrapping around).
std::vector<Request> OfflineRequests(const std::vector<RequestLengths>& lengths, int count);
// `count` requests with Poisson arrivals at `qps` (exponential gaps from t = 0); lengths follow
// seeded random permutations of the dataset, one after another (MLPerf's equal-issue mode).
// REQUIRES: qps > 0, lengths not empty.
std::vector<Request> PoissonRequests(const std::vector<RequestLengths>& lengths, int count,
                                     double qps, uint64_t seed);
// Trace CSV `arrival_s,input_tokens,output_tokens`: arrivals in 0..1e6 s, token counts whole
// numbers in 1..2^20 (errors name file:line); rows sorted by arrival on load (stable).
StatusOr<std::vector<Request>> LoadTraceCsv(const std::string& path);

}  // namespace ndt

#endif  // NDTWIN_SERVE_REQUEST_H_
