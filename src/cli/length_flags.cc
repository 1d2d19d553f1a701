#include "cli/length_flags.h"

namespace ndt {

bool LengthFlags::fixed() const {
  return input_len_flag->count() > 0 || output_len_flag->count() > 0;
}

bool LengthFlags::rescale() const { return otm_flag->count() > 0; }

void AddLengthFlags(CLI::App* sub, LengthFlags* f) {
  sub->add_option("--dataset", f->dataset,
                  "Length dataset preset or CSV (default mlperf-llama2-70b)");
  f->input_len_flag =
      sub->add_option("--input-len", f->input_len, "Fixed input tokens per request");
  f->output_len_flag =
      sub->add_option("--output-len", f->output_len, "Fixed output tokens per request");
  f->otm_flag = sub->add_option("--output-tokens-mean", f->output_tokens_mean,
                                "Rescale every output length so the mean is X");
}

StatusOr<std::vector<RequestLengths>> ResolveLengths(const LengthFlags& f,
                                                     const std::string& data_dir) {
  std::vector<RequestLengths> lengths;
  if (f.fixed()) {
    if (!f.dataset.empty()) {
      return Status::InvalidInput("give either --dataset or --input-len/--output-len, not both");
    }
    NDT_ASSIGN_OR_RETURN(RequestLengths l,
                         FixedLengths(f.input_len_flag->count() > 0, f.input_len,
                                      f.output_len_flag->count() > 0, f.output_len));
    lengths = {l};
  } else {
    NDT_ASSIGN_OR_RETURN(
        lengths, LoadDataset(f.dataset.empty() ? "mlperf-llama2-70b" : f.dataset, data_dir));
  }
  if (f.rescale()) NDT_RETURN_IF_ERROR(RescaleOutputsChecked(f.output_tokens_mean, &lengths));
  return lengths;
}

}  // namespace ndt
