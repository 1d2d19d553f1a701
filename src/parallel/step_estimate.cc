// File: parallel/step_estimate.cc
// The closed-form step time; see step_estimate.h.
#include "parallel/step_estimate.h"

#include <algorithm>

namespace ndt {

TrainSimResult EstimateStep(const TransformerSpec& m, const Strategy& s,
                            const std::vector<std::vector<ChunkCost>>& chunks,
                            const std::vector<StageTail>& tails, double p2p_s) {
  const int pp = s.pp, vpp = s.vpp;
  const double mm = static_cast<double>(s.micro_batches());
  // Slowest stage's work per micro-batch; a blocking send costs its sender every chunk pass
  // that has a neighbour (all but the first forward and the last backward of the pipeline).
  double w_max = 0;
  std::vector<double> w(pp, 0.0), last_bwd(pp, 0.0);
  double stage0_p2p_slow = 0;  // per micro-batch
  for (int st = 0; st < pp; ++st) {
    for (int c = 0; c < vpp; ++c) {
      const LayerCost& a = chunks[st][c].sum;
      w[st] += a.fwd_s() + a.bwd_s();
      last_bwd[st] += a.bwd_s();
      if (pp > 1) {
        // A blocking send costs its sender the send; one on its own stream slows the passes
        // beside it by its share for as long as it runs.
        const int v = c * pp + st;
        const double sends = (v + 1 < pp * vpp ? p2p_s : 0.0) + (v > 0 ? p2p_s : 0.0);
        const double slow = sends * (tails.empty() ? 0.0 : tails[st].p2p_share);
        w[st] += s.overlap_p2p ? slow : sends;
        if (st == 0 && s.overlap_p2p) stage0_p2p_slow += slow;
      }
    }
    w_max = std::max(w_max, w[st]);
  }
  const double fill = s.schedule == PipeSchedule::kInterleaved ? (pp - 1.0) / vpp : pp - 1.0;
  const double sends = s.overlap_p2p && pp > 1 ? 2.0 * (pp - 1) * p2p_s : 0.0;
  const double pipe = (mm + fill) * w_max + sends;
  // After the pipeline: the gradients the last backward could not hide, the optimizer, the
  // gather; the stage that finishes last sets the step.
  // With overlap, the buckets before the last run beside the last backward and slow it by their
  // share (the overlap slowdown) for as long as both run.
  double step = pipe, stage0_tail = 0, stage0_slow = 0;
  for (int st = 0; st < pp; ++st) {
    const StageTail& t = tails[st];
    const double slow =
        s.overlap_dp
            ? t.dp_share * std::min(std::max(0.0, t.dp_full_s - t.dp_bucket_s), last_bwd[st])
            : 0.0;
    const double dp =
        s.overlap_dp ? std::max(t.dp_bucket_s + slow, t.dp_full_s - last_bwd[st]) : t.dp_full_s;
    const double tail = dp + t.optimizer_s + t.gather_s;
    step = std::max(step, pipe + tail);
    if (st == 0) {
      stage0_slow = std::min(slow, dp);
      stage0_tail = dp - stage0_slow + t.gather_s;
    }
  }
  TrainSimResult r;
  r.step_time_s = step;
  TimeBreakdown& bd = r.breakdown;
  const double busy = StageZeroWork(chunks[0], mm, &bd) + stage0_slow + mm * stage0_p2p_slow;
  bd.compute_s += stage0_slow + mm * stage0_p2p_slow;
  bd.optimizer_s = tails.empty() ? 0 : tails[0].optimizer_s;
  bd.dp_comm_s += stage0_tail;
  bd.pp_bubble_s = std::max(0.0, step - busy - bd.optimizer_s - bd.dp_comm_s);
  StepFlops(m, s, chunks, &r);
  return r;
}

double ParamGatherExposedS(double full_s, double first_bucket_s, double first_fwd_s, double share) {
  const double first = std::min(first_bucket_s, full_s);
  const double rest = full_s - first;
  return first + std::max(0.0, rest - first_fwd_s) + share * std::min(rest, first_fwd_s);
}

double StageZeroWork(const std::vector<ChunkCost>& stage0, double mm, TimeBreakdown* bd) {
  double busy = 0;
  for (const ChunkCost& cc : stage0) {
    const LayerCost& a = cc.sum;
    bd->compute_s += mm * (a.fwd_compute_s + a.bwd_compute_s);
    bd->tp_comm_s += mm * (a.fwd_tp_s + a.bwd_tp_s);
    bd->ep_comm_s += mm * (a.fwd_ep_s + a.bwd_ep_s);
    bd->cp_comm_s += mm * (a.fwd_cp_s + a.bwd_cp_s);
    bd->dp_comm_s += mm * (a.fwd_zero_s + a.bwd_zero_s);
    busy += mm * (a.fwd_s() + a.bwd_s() - a.fwd_zero_s - a.bwd_zero_s);
  }
  return busy;
}

void StepFlops(const TransformerSpec& m, const Strategy& s,
               const std::vector<std::vector<ChunkCost>>& chunks, TrainSimResult* r) {
  const double mm = static_cast<double>(s.micro_batches());
  double stage_flop = 0;
  for (const std::vector<ChunkCost>& stage : chunks) {
    for (const ChunkCost& cc : stage) stage_flop += mm * (cc.sum.fwd_flop + cc.sum.bwd_flop);
  }
  r->hardware_flop = stage_flop * s.tp * s.cp * s.dp;
  r->model_flop = TrainingFlopsPerToken(m, m.seq_len, false) * static_cast<double>(s.gbs) *
                  static_cast<double>(m.seq_len);
}

}  // namespace ndt
