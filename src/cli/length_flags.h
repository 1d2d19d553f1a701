// File: cli/length_flags.h
// The request-length flags of the serving commands (infer, plan infer): a dataset preset or CSV
// (--dataset, default mlperf-llama2-70b) or fixed lengths (--input-len and --output-len), with
// every output rescaled to a mean (--output-tokens-mean). An explicit 0 is an error, not "use
// the default", so the flags remember whether they were given.
#ifndef NDTWIN_CLI_LENGTH_FLAGS_H_
#define NDTWIN_CLI_LENGTH_FLAGS_H_

#include <string>
#include <vector>

#include "cli/cli.h"
#include "core/status.h"
#include "serve/request.h"

namespace ndt {

struct LengthFlags {
  std::string dataset;
  int input_len = 0, output_len = 0;
  double output_tokens_mean = 0;
  CLI::Option *input_len_flag = nullptr, *output_len_flag = nullptr, *otm_flag = nullptr;

  bool fixed() const;    // --input-len or --output-len given
  bool rescale() const;  // --output-tokens-mean given
};

void AddLengthFlags(CLI::App* sub, LengthFlags* f);

// The lengths the flags name: fixed, else the dataset, then rescaled if asked. kInvalidInput on
// --dataset beside fixed lengths, a bad length or mean, or a dataset that does not load.
StatusOr<std::vector<RequestLengths>> ResolveLengths(const LengthFlags& f,
                                                     const std::string& data_dir);

}  // namespace ndt

#endif  // NDTWIN_CLI_LENGTH_FLAGS_H_
