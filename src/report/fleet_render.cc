#include "report/fleet_render.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "report/intervals.h"
#include "report/text.h"

namespace ndt {
namespace {

std::string Fmt(const char* fmt, double v) {
  char b[64];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

std::string Bytes(double b) {
  if (b >= 1e12) return Fmt("%.2f TB", b / 1e12);
  if (b >= 1e9) return Fmt("%.2f GB", b / 1e9);
  return Fmt("%.1f MB", b / 1e6);
}

std::string Duration(double s) {
  if (!std::isfinite(s)) return "none";  // --failure-scale 0: no failure, no Daly interval
  if (s >= 86400) return Fmt("%.2f d", s / 86400);
  if (s >= 3600) return Fmt("%.2f h", s / 3600);
  if (s >= 60) return Fmt("%.1f min", s / 60);
  return Fmt("%.3g s", s);
}

Json Q(const Quantiles& q, double scale) {
  return Json{{"p10", q.p10 * scale}, {"p50", q.p50 * scale}, {"p90", q.p90 * scale}};
}

// Where the GPU's class is not the one the rates were fitted on, a note saying whose rates it
// uses; "" otherwise.
std::string RatesNote(const std::string& arch, const std::string& fitted) {
  return arch == fitted ? ""
                        : arch + " uses " + fitted +
                              "'s interruption rates (data/reliability.yaml: fitted on Llama 3's "
                              "H100 run; no per-class data for " +
                              arch + ")";
}

// What the JSON and the text both derive from a view.
struct FleetDerived {
  std::string rates_note;
  double price = 0;      // USD per VM-hour, 0 without a price
  double usd_per_s = 0;  // the VMs and the hot spares at that price
  bool tokens_mode = false;
  double tokens_per_s = 0;
};

FleetDerived Derive(const FleetView& v) {
  FleetDerived d;
  d.rates_note = RatesNote(v.arch, v.fitted);
  d.price = v.sku.price ? v.sku.price->usd_per_hour : 0;
  d.usd_per_s = d.price * (v.cluster.vms + v.spares) / 3600;
  d.tokens_mode = v.length.work_s > 0;
  d.tokens_per_s = v.tokens_per_step > 0 ? v.tokens_per_step / v.step_s : 0;
  return d;
}

}  // namespace

Json FleetJson(const FleetView& v) {
  const SkuSpec& sku = v.sku;
  const FleetCluster& fc = v.cluster;
  const RunLength& len = v.length;
  const FleetModel& model = v.model;
  const CheckpointPlan& ckpt = v.checkpoint;
  const MonteCarloResult& mc = v.monte_carlo;
  const ClosedForm& cf = v.closed_form;
  const CheckpointTarget target = v.target;
  const double interval = v.interval_s;
  const bool interval_given = v.interval_given;
  const Placement& place = v.placement;
  const std::string& arch = v.arch;
  const std::string& fitted = v.fitted;
  const FleetDerived d = Derive(v);
  const std::string& rates_note = d.rates_note;
  const double price = d.price;
  const double usd_per_s = d.usd_per_s;
  const bool tokens_mode = d.tokens_mode;
  const double tokens_per_s = d.tokens_per_s;
  Json js;
  js["schema"] = "ndtwin.fleet/1";
  js["ndtwin_version"] = NDT_VERSION;
  js["sku"] = sku.name;
  js["model"] = v.model_name.empty() ? Json(nullptr) : Json(v.model_name);
  js["gpus"] = fc.gpus;
  js["vms"] = fc.vms;
  js["spares"] = v.spares;
  js["step_time_s"] = v.step_s;
  js["step_time_source"] = v.step_simulated ? "simulated" : "given";
  js["tokens"] = tokens_mode ? Json(v.tokens) : Json(nullptr);
  js["days"] = tokens_mode ? Json(nullptr) : Json(v.days);
  js["failure_free_days"] = tokens_mode ? Json(len.work_s / 86400) : Json(nullptr);
  js["runs"] = v.runs;
  js["seed"] = v.seed;
  js["failure_scale"] = v.failure_scale;
  js["rates"] = Json{{"fitted_on", fitted},
                     {"architecture", arch},
                     {"note", rates_note.empty() ? Json(nullptr) : Json(rates_note)}};
  Json by_class = Json::object();
  for (size_t i = 0; i < model.classes.size(); ++i) {
    const ClassRate& c = model.classes[i];
    by_class[c.name] = Json{
        {"per_hour", c.per_s * 3600}, {"planned", c.planned}, {"mean", mc.interruptions_mean[i]}};
  }
  js["interruptions"] = Json{{"unexpected_mean", mc.unexpected_mean},
                             {"planned_mean", mc.planned_mean},
                             {"by_class", by_class}};
  js["mtbi_hours"] = cf.mtbi_s / 3600;
  js["checkpoint"] = Json{{"target", CheckpointTargetName(target)},
                          {"async", v.async_checkpoint},
                          {"bytes_per_gpu", ckpt.bytes_per_gpu},
                          {"total_bytes", ckpt.total_bytes},
                          {"write_s", ckpt.write_s},
                          {"block_s", ckpt.block_s},
                          {"load_s", ckpt.load_s},
                          {"write_limit", ckpt.write_limit},
                          {"load_limit", ckpt.load_limit},
                          {"interval_s", interval},
                          {"interval_steps", std::round(interval / v.step_s)},
                          {"interval_choice", interval_given ? "given" : "simulated optimum"},
                          {"daly_interval_s", cf.daly_interval_s},
                          {"young_interval_s", cf.young_interval_s}};
  js["restart"] = Json{{"detection_s", model.detection_s},
                       {"replacement_s", v.spares > 0 ? model.spare_swap_s : model.new_vm_s},
                       {"replacement", v.spares > 0 ? "hot spare" : "new VM"},
                       {"init_s", model.init_s},
                       {"load_s", model.load_s},
                       {"mean_unexpected_s", MeanUnexpectedRestartS(model)},
                       {"mean_planned_s", MeanPlannedRestartS(model)}};
  js["goodput"] = mc.goodput.mean;
  js["goodput_quantiles"] = Q(mc.goodput, 1);
  js["goodput_closed_form"] = cf.goodput;
  js["time_to_train_days"] = tokens_mode ? Q(mc.wall_s, 1.0 / 86400) : Json(nullptr);
  js["trained_tokens"] =
      !tokens_mode && tokens_per_s > 0 ? Q(mc.work_s, tokens_per_s) : Json(nullptr);
  js["cost_usd"] = price > 0 ? Q(mc.wall_s, usd_per_s) : Json(nullptr);
  Json lost = Json::object();
  double lost_total = 0;
  for (size_t i = 0; i <= model.classes.size(); ++i) {
    const std::string name = i < model.classes.size() ? model.classes[i].name : "checkpoint";
    lost[name] = mc.lost_gpu_hours_mean[i];
    lost_total += mc.lost_gpu_hours_mean[i];
  }
  js["lost_gpu_hours"] = lost_total;
  js["lost_gpu_hours_by_cause"] = lost;
  Json warns = Json::array();
  for (const std::string& w : place.warnings) warns.push_back(w);
  js["placement"] = Json{{"scale_sets", place.scale_sets},
                         {"racks", place.racks},
                         {"azure_arranged", place.azure_arranged},
                         {"warnings", warns}};

  return js;
}

std::string FleetText(const FleetView& v) {
  const SkuSpec& sku = v.sku;
  const FleetCluster& fc = v.cluster;
  const RunLength& len = v.length;
  const FleetModel& model = v.model;
  const CheckpointPlan& ckpt = v.checkpoint;
  const MonteCarloResult& mc = v.monte_carlo;
  const ClosedForm& cf = v.closed_form;
  const CheckpointTarget target = v.target;
  const double interval = v.interval_s;
  const bool interval_given = v.interval_given;
  const Placement& place = v.placement;
  const std::string& fitted = v.fitted;
  const FleetDerived d = Derive(v);
  const std::string& rates_note = d.rates_note;
  const double price = d.price;
  const double usd_per_s = d.usd_per_s;
  const bool tokens_mode = d.tokens_mode;
  const double tokens_per_s = d.tokens_per_s;
  TextOut p;
  p("Job:            %s%s%d x %s (%d GPUs)", v.model_name.c_str(),
    v.model_name.empty() ? "" : " on ", fc.vms, sku.name.c_str(), fc.gpus);
  if (v.spares > 0) p(" + %d hot spare VM%s", v.spares, v.spares == 1 ? "" : "s");
  p("\nStep time:      %.4f s (%s)\n", v.step_s,
    v.step_simulated ? "simulated, as train" : "given");
  if (tokens_mode) {
    p("Run:            %.3g tokens = %.2f days of failure-free training\n", v.tokens,
      len.work_s / 86400);
  } else {
    p("Run:            %.4g days of wall clock\n", v.days);
  }
  p("Failure rates:  fitted on %s (Llama 3: 16,384 H100, 54 days), x%g%s\n", fitted.c_str(),
    v.failure_scale, rates_note.empty() ? "" : "; see note");
  p("Interruptions:  %.1f unexpected (MTBI %s), %.1f planned; mean of %d runs\n",
    mc.unexpected_mean,
    std::isfinite(cf.mtbi_s) ? Fmt("%.2f h", cf.mtbi_s / 3600).c_str() : "none: no failures",
    mc.planned_mean, v.runs);
  std::string cls;
  for (size_t i = 0; i < model.classes.size(); ++i) {
    cls += (i ? ", " : "") + model.classes[i].name + " " + Fmt("%.1f", mc.interruptions_mean[i]);
  }
  p("  by class:     %s\n", cls.c_str());
  p("Checkpoint:     %s per GPU (%s in all) to %s, %s: blocks %s, written in %s (%s); load %s\n",
    Bytes(ckpt.bytes_per_gpu).c_str(), Bytes(ckpt.total_bytes).c_str(),
    CheckpointTargetName(target), v.async_checkpoint ? "async" : "sync",
    Duration(ckpt.block_s).c_str(), Duration(ckpt.write_s).c_str(), ckpt.write_limit.c_str(),
    Duration(ckpt.load_s).c_str());
  const double steps = std::round(interval / v.step_s);
  p("Interval:       %s (%.0f %s), %s; Daly %s, Young %s\n", Duration(interval).c_str(), steps,
    steps == 1 ? "step" : "steps", interval_given ? "given" : "simulated optimum",
    Duration(cf.daly_interval_s).c_str(), Duration(cf.young_interval_s).c_str());
  p("Restart:        %s mean (unexpected): detection %s, %s %s (VM classes), init %s, load %s\n",
    Duration(MeanUnexpectedRestartS(model)).c_str(), Duration(model.detection_s).c_str(),
    v.spares > 0 ? "hot spare" : "new VM",
    Duration(v.spares > 0 ? model.spare_swap_s : model.new_vm_s).c_str(),
    Duration(model.init_s).c_str(), Duration(model.load_s).c_str());
  p("Goodput:        %.1f%% (p10–p90 %.1f–%.1f%%; closed form %.1f%%)\n", 100 * mc.goodput.mean,
    100 * mc.goodput.p10, 100 * mc.goodput.p90, 100 * cf.goodput);
  if (tokens_mode) {
    p("Time to train:  %.2f days (p10–p90 %.2f–%.2f)\n", mc.wall_s.p50 / 86400,
      mc.wall_s.p10 / 86400, mc.wall_s.p90 / 86400);
  } else if (tokens_per_s > 0) {
    p("Trained:        %.3g tokens (p10–p90 %.3g–%.3g)\n", mc.work_s.p50 * tokens_per_s,
      mc.work_s.p10 * tokens_per_s, mc.work_s.p90 * tokens_per_s);
  }
  if (price > 0 && tokens_mode) {
    p("Cost:           $%.0f (p10–p90 $%.0f–%.0f) at $%.2f per VM-hour, spares included\n",
      mc.wall_s.p50 * usd_per_s, mc.wall_s.p10 * usd_per_s, mc.wall_s.p90 * usd_per_s, price);
  } else if (price > 0) {
    p("Cost:           $%.0f for the %.4g days at $%.2f per VM-hour, spares included\n",
      mc.wall_s.p50 * usd_per_s, v.days, price);
  } else {
    p("Cost:           no price for this size\n");
  }
  double lost_total = 0;
  for (size_t i = 0; i <= model.classes.size(); ++i) lost_total += mc.lost_gpu_hours_mean[i];
  std::string causes;
  for (size_t i = 0; i <= model.classes.size(); ++i) {
    const double h = mc.lost_gpu_hours_mean[i];
    if (h <= 0) continue;
    const std::string name = i < model.classes.size() ? model.classes[i].name : "checkpoint";
    causes += (causes.empty() ? "" : ", ") + name + " " +
              Fmt("%.0f%%", lost_total > 0 ? 100 * h / lost_total : 0);
  }
  // No cause when nothing was lost (no interruption, no checkpoint in the window).
  p("Lost GPU-hours: %.0f%s%s\n", lost_total, causes.empty() ? "" : ": ", causes.c_str());
  p("Placement:      %d scale set%s%s", place.scale_sets, place.scale_sets == 1 ? "" : "s",
    place.azure_arranged ? " (beyond a customer scale set: Azure-arranged)" : "");
  if (place.racks > 0) p(", %d NVL72 rack%s", place.racks, place.racks == 1 ? "" : "s");
  p("\n");
  if (!rates_note.empty()) p("Note:           %s\n", rates_note.c_str());
  return p.take();
}

Trace FleetTrace(const std::vector<FleetSpan>& spans, uint64_t seed) {
  Trace t;
  t.title = "ndtwin fleet (one simulated run, seed " + std::to_string(seed) + ")";
  t.tracks.push_back({0, 0, "job", "timeline"});
  t.tracks.push_back({0, 1, "job", "interruptions"});
  for (const FleetSpan& s : spans) {
    t.spans.push_back({s.track, s.name, s.category, s.start_s, s.dur_s});
  }
  return t;
}

}  // namespace ndt
