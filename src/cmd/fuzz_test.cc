// A seeded, bounded fuzz test of every door's input: random and hostile option values through
// RunJson for every command of the registry, and mutated model YAML, Hugging Face config.json
// and dataset CSV files through the commands that read them. The classes it covers (listed in
// the README's limits): a crash or abort (the test process would die), an exception leaving a
// command, a failure that is not a one-line Status naming what is wrong, an internal error on a
// user's input, and a non-finite number in a JSON result. Each run is bounded: values that
// would make legitimate work large are out of range (refused up front) or absent from the
// pools, and the iteration counts keep the test under ~15 s in Release (a quarter of them under
// the sanitizers). NDT_FUZZ_ITERATIONS scales it (e.g. 10 for a longer local run). validate is left
// out: it reads the validation data and --write-intervals writes data/.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "cmd/command.h"

namespace ndt {
namespace {

namespace fs = std::filesystem;

const Context& Ctx() {
  static const Context ctx = *Context::Load(NDT_DATA_DIR);
  return ctx;
}

// Sanitizers run the code ~10x slower: a quarter of the iterations keeps the test well under
// a minute there.
#if defined(__SANITIZE_ADDRESS__)
constexpr int kDivisor = 4;
#else
constexpr int kDivisor = 1;
#endif

// Iterations: `base` in Release, base/4 under the sanitizers, times NDT_FUZZ_ITERATIONS.
int Iterations(int base) {
  const char* s = std::getenv("NDT_FUZZ_ITERATIONS");
  const int v = s != nullptr ? std::atoi(s) : 1;
  return base / kDivisor * (v > 0 ? v : 1);
}

std::string TempDir() {
  static const std::string dir = [] {
    const fs::path p = fs::temp_directory_path() /
                       ("ndt_fuzz_" + std::to_string(static_cast<long long>(::getpid())));
    fs::create_directories(p);
    return p.string();
  }();
  return dir;
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every number in a JSON document is finite (NaN and infinities are not JSON; a library that
// computed one has divided by a zero or overflowed).
bool AllFinite(const Json& j, std::string* where, const std::string& path = "") {
  if (j.is_number_float()) {
    if (std::isfinite(j.get<double>())) return true;
    *where = path;
    return false;
  }
  if (j.is_object()) {
    for (const auto& [k, v] : j.items())
      if (!AllFinite(v, where, path + "." + k)) return false;
  }
  if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i)
      if (!AllFinite(j[i], where, path + "[" + std::to_string(i) + "]")) return false;
  }
  return true;
}

// Runs one command and checks the contract; returns whether it succeeded.
bool RunChecked(const Command& c, const Json& args) {
  SCOPED_TRACE(c.name + " " + args.dump(-1, ' ', false, Json::error_handler_t::replace));
  Diagnostics diag;
  StatusOr<CommandOutput> out = Status::Internal("not run");
  try {
    out = RunJson(c, Ctx(), args, &diag);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "exception: " << e.what();
    return false;
  }
  if (!out.ok()) {
    const std::string m = out.status().message();
    EXPECT_FALSE(m.empty());
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_NE(out.status().code(), StatusCode::kInternal) << m;
    return false;
  }
  std::string where;
  EXPECT_TRUE(AllFinite(out->json, &where)) << "non-finite number at " << where;
  EXPECT_NO_THROW((void)out->json.dump(2, ' ', false, Json::error_handler_t::replace));
  for (const std::string& w : diag.warnings) EXPECT_EQ(w.find('\n'), std::string::npos) << w;
  return true;
}

// Arguments that make each command do its work at a small scale, so a mutated option has
// something to act on.
Json BaseArgs(const std::string& cmd) {
  const std::string sku = "ND96isr_H100_v5";
  if (cmd == "sku show") return {{"name", sku}};
  if (cmd == "model show") return {{"name", "llama2-7b"}};
  if (cmd == "topo") return {{"sku", sku}, {"vms", 2}};
  if (cmd == "collective") return {{"sku", sku}, {"vms", 2}, {"max-bytes", "64K"}};
  if (cmd == "train")
    return {{"sku", sku}, {"model", "llama2-7b"}, {"gbs", 16}, {"zero", 1}, {"tp", 2}};
  if (cmd == "infer")
    return {{"sku", sku},     {"model", "llama2-7b"}, {"tp", 1},         {"max-batch", 16},
            {"requests", 32}, {"input-len", 128},     {"output-len", 16}};
  if (cmd == "plan train")
    return {
        {"model", "gpt3-125m"}, {"gbs", 16}, {"gpus", 8}, {"sku", sku}, {"fidelity", "analytical"}};
  if (cmd == "plan infer")
    return {{"model", "gpt3-125m"}, {"gpus", 8},       {"sku", sku},
            {"requests", 32},       {"input-len", 64}, {"output-len", 8}};
  if (cmd == "fleet")
    return {{"sku", sku},  {"step-time", 5.0}, {"gpus", 16},
            {"days", 1.0}, {"runs", 20},       {"model", "llama2-7b"}};
  if (cmd == "hpc") return {{"sku", sku}, {"vms", 2}, {"bench", "hpl"}, {"n", 20480}};
  return Json::object();
}

// Hostile and ordinary values per kind of option.
Json RandomValue(const Option& o, std::mt19937_64& rng) {
  auto pick = [&](const std::vector<Json>& pool) {
    return pool[std::uniform_int_distribution<size_t>(0, pool.size() - 1)(rng)];
  };
  const std::string t = o.type_name();
  if (t == "int") {
    return pick({0,
                 -1,
                 1,
                 2,
                 3,
                 4,
                 8,
                 16,
                 1000000000,
                 -2147483648LL,
                 2147483647LL,
                 4611686018427387904LL,
                 9223372036854775807LL,
                 2.0,
                 0.5,
                 1e300,
                 "8",
                 "x",
                 nullptr,
                 true,
                 Json::array()});
  }
  if (t == "float") {
    return pick(
        {0, -1, 1, 2, 0.5, 1e-300, 1e300, 1e18, -1e300, 1e6, 1.0000001, "1", nullptr, false});
  }
  if (t == "flag") return pick({true, false, nullptr, 1, "yes"});
  if (t == "list") return pick({Json::array(), Json::array({"", "x"}), "a,b", 3});
  // Strings: names, units, lists, paths (local files under the test's own folder only).
  if (o.local_file) {
    return pick({"", "/", TempDir(), TempDir() + "/out.json", "/nonexistent/dir/f",
                 TempDir() + "/missing.yaml"});
  }
  return pick({"",
               "x",
               " ",
               ",",
               "a,b,,",
               "0",
               "-1",
               "1e300",
               "nan",
               "inf",
               "1M",
               "8G",
               "2T",
               "ring",
               "ll",
               "2.18.5",
               "2.99.0",
               "fp8",
               "fp4",
               "server",
               "cost",
               "all",
               "tp,pp,dp,cp",
               "3:1",
               "0,1",
               "\xff\xfe",
               std::string(300, 'a'),
               5,
               2.5,
               "ND96isr_H100_v5",
               "Standard_ND96amsr_A100_v4",
               "llama2-7b",
               "mixtral-8x7b"});
}

TEST(Fuzz, RandomOptionValuesThroughEveryCommand) {
  std::mt19937_64 rng(20261126);
  const int per_command = Iterations(120);
  for (const Command& c : Registry()) {
    if (c.name == "validate") continue;  // reads validation/, and may write data/
    // Runs other commands from a spec file into a database (sweep/sweep_test.cc covers its spec
    // errors; the commands it runs are fuzzed here).
    if (c.name == "sweep") continue;
    OptionList options;
    auto req = c.new_request();
    req->Declare(&options);
    int ok = 0;
    for (int it = 0; it < per_command && !options.options().empty(); ++it) {
      Json args = BaseArgs(c.name);
      const int k = std::uniform_int_distribution<int>(1, 2)(rng);
      for (int m = 0; m < k; ++m) {
        const Option& o = options.options()[std::uniform_int_distribution<size_t>(
            0, options.options().size() - 1)(rng)];
        args[o.name] = RandomValue(o, rng);
      }
      ok += RunChecked(c, args);
    }
    // The base arguments run: the mutations act on a working command.
    EXPECT_TRUE(RunChecked(c, BaseArgs(c.name))) << c.name;
    (void)ok;
  }
}

// Mutations of a text file: a line dropped or doubled, a number replaced by a hostile one,
// bytes flipped, the text cut short, a byte-order mark, CRLF line ends.
std::string Mutate(const std::string& text, std::mt19937_64& rng) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);) lines.push_back(l);
  auto any = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  const char* numbers[] = {"0",      "-1",
                           "1e300",  "4611686018427387904",
                           "1e-300", ".nan",
                           ".inf",   "99999999999999999999",
                           "2.5",    "-9223372036854775808",
                           "\"x\"",  "null",
                           "[]",     "{}"};
  std::string out;
  switch (any(8)) {
    case 0:  // drop a line
      if (!lines.empty()) lines.erase(lines.begin() + any(lines.size()));
      break;
    case 1:  // double a line
      if (!lines.empty()) {
        const size_t i = any(lines.size());
        lines.insert(lines.begin() + i, lines[i]);
      }
      break;
    case 2:
    case 3:
    case 4: {  // replace the first number of a line
      if (lines.empty()) break;
      std::string& l = lines[any(lines.size())];
      const size_t p = l.find_first_of("0123456789");
      if (p == std::string::npos) break;
      const size_t e = l.find_first_not_of("0123456789.e-", p);
      l = l.substr(0, p) + numbers[any(std::size(numbers))] +
          (e == std::string::npos ? "" : l.substr(e));
      break;
    }
    case 5:  // flip a byte
      for (std::string& l : lines) out += l + "\n";
      if (!out.empty()) out[any(out.size())] = static_cast<char>(any(256));
      return out;
    case 6:  // cut short
      for (std::string& l : lines) out += l + "\n";
      return out.substr(0, any(out.size() + 1));
    default:  // as a spreadsheet writes it: BOM, CRLF, spaces around fields
      out = "\xEF\xBB\xBF";
      for (std::string& l : lines) out += " " + l + " \r\n";
      return out;
  }
  for (std::string& l : lines) out += l + "\n";
  return out;
}

TEST(Fuzz, MutatedModelYamlConfigJsonAndDatasetCsv) {
  std::mt19937_64 rng(7);
  const Command* show = FindCommand("model show");
  const Command* infer = FindCommand("infer");
  ASSERT_NE(show, nullptr);
  ASSERT_NE(infer, nullptr);
  const std::string models = std::string(NDT_DATA_DIR) + "/models/";
  const std::vector<std::string> yamls = {
      ReadText(models + "llama2-7b.yaml"), ReadText(models + "mixtral-8x7b.yaml"),
      ReadText(models + "deepseek-v3.yaml"), ReadText(models + "gpt3-175b.yaml")};
  const std::string config = R"({
  "architectures": ["MixtralForCausalLM"],
  "hidden_act": "silu",
  "hidden_size": 4096,
  "intermediate_size": 14336,
  "max_position_embeddings": 32768,
  "model_type": "mixtral",
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "num_local_experts": 8,
  "num_experts_per_tok": 2,
  "rms_norm_eps": 1e-05,
  "tie_word_embeddings": false,
  "vocab_size": 32000
}
)";
  std::string csv = "input_length,output_length\n";
  for (int i = 0; i < 40; ++i)
    csv += std::to_string(50 + 37 * i % 400) + "," + std::to_string(10 + 13 * i % 90) + "\n";
  const std::string yaml_path = TempDir() + "/fuzz_model.yaml";
  const std::string json_path = TempDir() + "/config.json";
  const std::string csv_path = TempDir() + "/lengths.csv";
  const int n = Iterations(200);
  for (int it = 0; it < n; ++it) {
    WriteText(yaml_path, Mutate(yamls[it % yamls.size()], rng));
    RunChecked(*show, {{"name", yaml_path}});
    WriteText(json_path, Mutate(config, rng));
    RunChecked(*show, {{"hf-config", json_path}});
    if (it % 4 == 0) {  // a serving run per mutated CSV is the costly part
      WriteText(csv_path, Mutate(csv, rng));
      RunChecked(*infer, {{"sku", "ND96isr_H100_v5"},
                          {"model", "llama2-7b"},
                          {"tp", 1},
                          {"max-batch", 16},
                          {"requests", 32},
                          {"dataset", csv_path}});
    }
  }
  // The unmutated inputs run.
  WriteText(yaml_path, yamls[0]);
  EXPECT_TRUE(RunChecked(*show, {{"name", yaml_path}}));
  WriteText(json_path, config);
  EXPECT_TRUE(RunChecked(*show, {{"hf-config", json_path}}));
  fs::remove_all(TempDir());
}

}  // namespace
}  // namespace ndt
