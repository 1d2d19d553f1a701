#include "serve/request.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>

#include "core/csv.h"
#include "core/strings.h"
#include "core/yaml.h"

namespace ndt {
namespace {

std::string DataDirOr(const std::string& data_dir) {
  return data_dir.empty() ? std::string(NDT_DATA_DIR) : data_dir;
}

bool ParseNumber(const std::string& s, double* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(*out);
}

constexpr double kMaxArrivalS = 1e6;  // 11.6 days of trace: beyond it the simulated clock is noise

// Reads column `name` of a row as a token count into *out. `zero_as_one`: a 0 counts as 1 token
// (presets whose rows have empty prompts or answers: a prompt holds at least its BOS token, an
// engine emits at least one token).
Status ParseTokens(const std::string& where, const std::string& name, const std::string& cell,
                   bool zero_as_one, int* out) {
  double v = 0;
  if (!ParseNumber(cell, &v) || v != std::floor(v) || v < 0) {
    return Status::InvalidInput(where + name + " '" + cell +
                                "' is not a whole number of tokens; want 1.." +
                                std::to_string(kMaxTokensPerRequest));
  }
  if (v > kMaxTokensPerRequest) {
    return Status::InvalidInput(where + name + " " + cell + " is above " +
                                std::to_string(kMaxTokensPerRequest) +
                                " tokens (2^20, beyond any model's context); fix or drop the row");
  }
  if (v == 0 && !zero_as_one) {
    return Status::InvalidInput(where + name +
                                " is 0; a request has at least 1 input and 1 output token: fix "
                                "or drop the row");
  }
  *out = std::max(1, static_cast<int>(v));
  return Status::Ok();
}

std::string Where(const std::string& path, int line_no) {
  return path + ":" + std::to_string(line_no) + ": ";
}

// Reads a CSV with a header (core/csv.h); calls row(line_no, cells) for each data row, column
// indices of `want` (all required) in `idx`.
Status ReadCsv(const std::string& path, const std::vector<std::string>& want, std::vector<int>* idx,
               const std::function<Status(int, const std::vector<std::string>&)>& row) {
  NDT_ASSIGN_OR_RETURN(CsvFile f, CsvFile::Read(path));
  if (f.header().empty())
    return Status::InvalidInput(path + ":1: empty file; want a header " + Join(want, ","));
  NDT_RETURN_IF_ERROR(f.Require(want));
  idx->clear();
  for (const std::string& w : want) idx->push_back(f.Column(w));
  for (const CsvRow& r : f.rows()) NDT_RETURN_IF_ERROR(row(r.line, r.cells));
  return Status::Ok();
}

// The `input_length,output_length` CSV at `path`; see ParseTokens for `zero_as_one`.
StatusOr<std::vector<RequestLengths>> LoadLengths(const std::string& path, bool zero_as_one) {
  std::vector<RequestLengths> out;
  std::vector<int> idx;
  Status s = ReadCsv(path, {"input_length", "output_length"}, &idx,
                     [&](int line_no, const std::vector<std::string>& cells) -> Status {
                       const std::string where = Where(path, line_no);
                       if (static_cast<int>(cells.size()) <= std::max(idx[0], idx[1])) {
                         return Status::InvalidInput(where +
                                                     "missing cells; want input_length and "
                                                     "output_length on every row");
                       }
                       RequestLengths l;
                       NDT_RETURN_IF_ERROR(ParseTokens(where, "input_length", cells[idx[0]],
                                                       zero_as_one, &l.input_tokens));
                       NDT_RETURN_IF_ERROR(ParseTokens(where, "output_length", cells[idx[1]],
                                                       zero_as_one, &l.output_tokens));
                       out.push_back(l);
                       return Status::Ok();
                     });
  NDT_RETURN_IF_ERROR(s);
  if (out.empty())
    return Status::InvalidInput(path + ": no requests (want rows input_length,output_length)");
  return out;
}

}  // namespace

StatusOr<std::vector<DatasetPreset>> LoadDatasetPresets(const std::string& data_dir) {
  std::string dir = DataDirOr(data_dir) + "/datasets";
  NDT_ASSIGN_OR_RETURN(YamlMap top, LoadYamlMapFile(dir + "/datasets.yaml"));
  NDT_ASSIGN_OR_RETURN(std::vector<YamlMap> items, top.MapList("datasets"));
  NDT_RETURN_IF_ERROR(top.Finish());
  std::vector<DatasetPreset> out;
  for (const YamlMap& m : items) {
    DatasetPreset p;
    NDT_ASSIGN_OR_RETURN(p.name, m.String("name"));
    NDT_ASSIGN_OR_RETURN(p.aliases, m.StringList("aliases"));
    if (m.Has("models")) {
      NDT_ASSIGN_OR_RETURN(p.models, m.StringList("models"));
    }
    NDT_ASSIGN_OR_RETURN(std::string file, m.String("file"));
    p.file = dir + "/" + file;
    NDT_ASSIGN_OR_RETURN(int64_t n, m.Int("requests"));
    p.requests = static_cast<int>(n);
    NDT_ASSIGN_OR_RETURN(p.source, m.String("source"));
    NDT_ASSIGN_OR_RETURN(std::optional<std::string> note, m.OptionalString("note"));
    p.note = note.value_or("");
    for (auto [key, limits] :
         {std::pair{"server_p99", &p.server}, std::pair{"interactive_p99", &p.interactive}}) {
      NDT_ASSIGN_OR_RETURN(std::optional<YamlMap> l, m.OptionalMap(key));
      if (!l) continue;
      NDT_ASSIGN_OR_RETURN(Sourced ttft, l->Quantity("ttft", Dim::kTime));
      NDT_ASSIGN_OR_RETURN(Sourced tpot, l->Quantity("tpot", Dim::kTime));
      NDT_ASSIGN_OR_RETURN(std::string source, l->String("source"));
      (void)source;  // every limit says where it comes from (mlperf.conf)
      NDT_RETURN_IF_ERROR(l->Finish());
      *limits = LatencyLimits{ttft.value, tpot.value};
    }
    NDT_RETURN_IF_ERROR(m.Finish());
    out.push_back(std::move(p));
  }
  return out;
}

StatusOr<std::vector<RequestLengths>> LoadLengthsCsv(const std::string& path) {
  return LoadLengths(path, false);
}

namespace {

// The preset named `name` or aliased so (case-insensitive), or nullptr.
const DatasetPreset* MatchPreset(const std::vector<DatasetPreset>& presets,
                                 const std::string& name) {
  for (const DatasetPreset& p : presets) {
    bool hit = EqualsIgnoreCase(p.name, name);
    for (const std::string& a : p.aliases) hit = hit || EqualsIgnoreCase(a, name);
    if (hit) return &p;
  }
  return nullptr;
}

}  // namespace

StatusOr<std::optional<DatasetPreset>> FindDatasetPreset(const std::string& name_or_path,
                                                         const std::string& data_dir) {
  NDT_ASSIGN_OR_RETURN(std::vector<DatasetPreset> presets, LoadDatasetPresets(data_dir));
  const DatasetPreset* p = MatchPreset(presets, name_or_path);
  return p != nullptr ? std::optional<DatasetPreset>(*p) : std::optional<DatasetPreset>();
}

StatusOr<std::string> DefaultDataset(const std::string& model, const std::string& data_dir) {
  NDT_ASSIGN_OR_RETURN(std::vector<DatasetPreset> presets, LoadDatasetPresets(data_dir));
  for (const DatasetPreset& p : presets) {
    for (const std::string& m : p.models) {
      if (EqualsIgnoreCase(m, model)) return p.name;
    }
  }
  return std::string(kDefaultDataset);
}

StatusOr<std::vector<RequestLengths>> LoadDataset(const std::string& name_or_path,
                                                  const std::string& data_dir) {
  NDT_ASSIGN_OR_RETURN(std::vector<DatasetPreset> presets, LoadDatasetPresets(data_dir));
  // Presets are published data as extracted (ShareGPT has empty prompts and answers), so their
  // zeros count as one token; datasets.yaml says so.
  if (const DatasetPreset* p = MatchPreset(presets, name_or_path))
    return LoadLengths(p->file, true);
  std::vector<std::string> names;
  for (const DatasetPreset& p : presets) names.push_back(p.name);
  std::error_code ec;
  // A path that exists is read as a CSV (a directory or a device is refused there, by name).
  if (std::filesystem::exists(name_or_path, ec)) return LoadLengthsCsv(name_or_path);
  return Status::NotFound("unknown dataset '" + name_or_path + "'" +
                          DidYouMean(name_or_path, names) + " (presets: " + Join(names, ", ") +
                          "; or give a CSV path)");
}

StatusOr<RequestLengths> FixedLengths(bool input_given, int input_tokens, bool output_given,
                                      int output_tokens) {
  if (input_given != output_given) {
    return Status::InvalidInput(
        std::string("fixed lengths need both --input-len and --output-len (") +
        (input_given ? "--output-len" : "--input-len") + " is missing)");
  }
  if (input_tokens < 1 || output_tokens < 1 || input_tokens > kMaxTokensPerRequest ||
      output_tokens > kMaxTokensPerRequest) {
    return Status::InvalidInput("--input-len and --output-len must both be in 1.." +
                                std::to_string(kMaxTokensPerRequest) + " tokens (got " +
                                std::to_string(input_tokens) + " and " +
                                std::to_string(output_tokens) + ")");
  }
  return RequestLengths{input_tokens, output_tokens};
}

double MeanOutputTokens(const std::vector<RequestLengths>& lengths) {
  if (lengths.empty()) return 0;
  double sum = 0;
  for (const RequestLengths& l : lengths) sum += l.output_tokens;
  return sum / static_cast<double>(lengths.size());
}

void RescaleOutputs(double mean_tokens, std::vector<RequestLengths>* lengths) {
  NDT_CHECK(mean_tokens >= 1, "RescaleOutputs: mean must be >= 1");
  double cur = MeanOutputTokens(*lengths);
  if (cur <= 0) return;
  double k = mean_tokens / cur;
  for (RequestLengths& l : *lengths) {
    const double v = std::clamp(std::round(l.output_tokens * k), 1.0, double{kMaxTokensPerRequest});
    l.output_tokens = static_cast<int>(v);
  }
}

Status RescaleOutputsChecked(double mean_tokens, std::vector<RequestLengths>* lengths) {
  const std::string flag = "--output-tokens-mean " + fmt::format("{:.10g}", mean_tokens);
  if (!(mean_tokens >= 1 && mean_tokens <= kMaxTokensPerRequest)) {
    return Status::InvalidInput(flag + ": want 1.." + std::to_string(kMaxTokensPerRequest) +
                                " tokens");
  }
  if (lengths->empty()) return Status::Ok();
  int longest = 0;
  for (const RequestLengths& l : *lengths) longest = std::max(longest, l.output_tokens);
  // The same arithmetic as RescaleOutputs, so the check and the rescaling agree at the limit.
  const double scaled = std::round(longest * (mean_tokens / MeanOutputTokens(*lengths)));
  if (scaled > kMaxTokensPerRequest) {
    return Status::InvalidInput(flag + " scales the longest output from " +
                                std::to_string(longest) + " to " + fmt::format("{:.10g}", scaled) +
                                " tokens, above " + std::to_string(kMaxTokensPerRequest) +
                                "; lower it");
  }
  RescaleOutputs(mean_tokens, lengths);
  return Status::Ok();
}

double Rng::Exponential(double rate) { return -std::log1p(-Uniform()) / rate; }

std::vector<Request> OfflineRequests(const std::vector<RequestLengths>& lengths, int count) {
  std::vector<Request> out(count);
  for (int i = 0; i < count; ++i) {
    const RequestLengths& l = lengths[i % lengths.size()];
    out[i] = {i, 0.0, l.input_tokens, l.output_tokens};
  }
  return out;
}

std::vector<Request> PoissonRequests(const std::vector<RequestLengths>& lengths, int count,
                                     double qps, uint64_t seed) {
  NDT_CHECK(qps > 0 && !lengths.empty(), "PoissonRequests: need qps > 0 and lengths");
  Rng rng(seed);
  std::vector<int> perm(lengths.size());
  std::vector<Request> out(count);
  double t = 0;
  size_t pos = perm.size();
  for (int i = 0; i < count; ++i) {
    if (pos == perm.size()) {  // a fresh Fisher-Yates permutation
      for (size_t j = 0; j < perm.size(); ++j) perm[j] = static_cast<int>(j);
      for (size_t j = perm.size(); j > 1; --j) std::swap(perm[j - 1], perm[rng.Below(j)]);
      pos = 0;
    }
    t += rng.Exponential(qps);
    const RequestLengths& l = lengths[perm[pos++]];
    out[i] = {i, t, l.input_tokens, l.output_tokens};
  }
  return out;
}

StatusOr<std::vector<Request>> LoadTraceCsv(const std::string& path) {
  std::vector<Request> out;
  std::vector<int> idx;
  Status s = ReadCsv(
      path, {"arrival_s", "input_tokens", "output_tokens"}, &idx,
      [&](int line_no, const std::vector<std::string>& c) -> Status {
        const std::string where = Where(path, line_no);
        if (static_cast<int>(c.size()) <= std::max({idx[0], idx[1], idx[2]})) {
          return Status::InvalidInput(
              where + "missing cells; want arrival_s, input_tokens and output_tokens on every row");
        }
        Request r;
        if (!ParseNumber(c[idx[0]], &r.arrival_s) || r.arrival_s < 0 ||
            r.arrival_s > kMaxArrivalS) {
          return Status::InvalidInput(where + "arrival_s '" + c[idx[0]] +
                                      "' is not a time in 0..1e6 s (seconds from the start)");
        }
        NDT_RETURN_IF_ERROR(ParseTokens(where, "input_tokens", c[idx[1]], false, &r.input_tokens));
        NDT_RETURN_IF_ERROR(
            ParseTokens(where, "output_tokens", c[idx[2]], false, &r.output_tokens));
        out.push_back(r);
        return Status::Ok();
      });
  NDT_RETURN_IF_ERROR(s);
  if (out.empty()) return Status::InvalidInput(path + ": no requests in trace");
  std::stable_sort(out.begin(), out.end(),
                   [](const Request& a, const Request& b) { return a.arrival_s < b.arrival_s; });
  for (size_t i = 0; i < out.size(); ++i) out[i].id = static_cast<int>(i);
  return out;
}

}  // namespace ndt
