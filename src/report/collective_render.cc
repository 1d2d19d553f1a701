#include "report/collective_render.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "report/interval_render.h"
#include "report/text.h"

namespace ndt {

Json CollectiveJson(const CollectiveView& v) {
  Json rows = Json::array();
  for (size_t i = 0; i < v.results.size(); ++i) {
    const auto& [b, r] = v.results[i];
    Json row;
    row["bytes"] = static_cast<int64_t>(b);
    row["time_us"] = r.time_s * 1e6;
    row["algbw_GBps"] = r.algbw_Bps / 1e9;
    row["busbw_GBps"] = r.busbw_Bps / 1e9;
    const IntervalClass& iv = v.intervals[i];
    row["busbw_GBps_interval"] = IntervalJson(iv, iv.OfRate(r.busbw_Bps / 1e9));
    row["algorithm"] = AlgoName(r.algo);
    row["protocol"] = ProtoName(r.proto);
    rows.push_back(row);
  }
  Json j;
  j["schema"] = "ndtwin.collective/1";
  j["sku"] = v.sku;
  j["vms"] = v.vms;
  j["gpus"] = v.gpus;
  j["op"] = CollOpName(v.op);
  j["fidelity"] = v.fidelity;
  j["nccl_version"] = NcclVersionName(v.nccl_version);
  j["rows"] = rows;
  return j;
}

std::string CollectiveText(const CollectiveView& v) {
  TextOut p;
  p("# ndtwin collective: %s, %d VM(s) of %s, %d GPUs, %s model, NCCL %s tuner\n", CollOpName(v.op),
    v.vms, v.sku.c_str(), v.gpus, v.fidelity.c_str(), NcclVersionName(v.nccl_version).c_str());
  p("%12s %12s %6s %10s %9s %9s  %-13s %s\n", "size(B)", "count", "type", "time(us)", "algbw",
    "busbw", "algorithm", "protocol");
  // The interval goes in the JSON only: the text table stays nccl-tests' columns.
  for (const auto& [b, r] : v.results) {
    double count = std::floor(b / 4);  // float elements
    p("%12.0f %12.0f %6s %10.2f %9.2f %9.2f  %-13s %s\n", b, count, "float", r.time_s * 1e6,
      r.algbw_Bps / 1e9, r.busbw_Bps / 1e9, AlgoName(r.algo), ProtoName(r.proto));
  }
  return p.take();
}

}  // namespace ndt
