// File: parallel/context_parallel.h
// Context-parallel (CP) communication of one transformer layer on one rank. Each of the cp ranks
// holds seq / cp tokens of every sequence, as two chunks of seq / (2 cp) (chunk r and 2 cp - 1 - r,
// Megatron-core's load balancing for causal attention), so every rank does 1 / cp of the causal
// work and every ring step below the same amount. Attention needs every earlier token's K and V;
// two implementations move them:
//  - kRing (Megatron-core / Transformer Engine `cp_comm_type p2p`, the default): forward runs cp
//    attention steps, one per K/V block; while step i computes, the block for step i + 1 travels
//    one hop (each rank sends its block to the next rank and receives from the previous one):
//    cp - 1 transfers of this rank's K and V, each hidden under one step (1 / cp of the attention
//    forward) and exposed by what exceeds it. Backward runs the ring again, moving each K/V block
//    with its dK/dV accumulator (twice the bytes per hop, under 1 / cp of the attention backward
//    each), plus one last hop that returns every dK/dV to its owner, exposed.
//  - kAllGather (Llama 3, section 3.3.2; TE `cp_comm_type all_gather`): forward all-gathers K and V
//    over the CP group, then attends locally; backward gathers them again and reduce-scatters
//    dK/dV. Not overlapped: all of it is exposed (Llama 3 accepts that because GQA makes K and V
//    small against O(S^2) attention).
// Times come from TrainCosts on the CP group's placement (rank order, parallel/strategy.h).
#ifndef NDTWIN_PARALLEL_CONTEXT_PARALLEL_H_
#define NDTWIN_PARALLEL_CONTEXT_PARALLEL_H_

#include <string>
#include <vector>

#include "model/transformer.h"
#include "parallel/costs.h"

namespace ndt {

enum class CpComm { kRing, kAllGather };
const char* CpCommName(CpComm c);
// "ring" (also "p2p") | "all_gather" (also "allgather"); false otherwise.
bool ParseCpComm(const std::string& s, CpComm* out);

// Bytes of K and V one rank holds for one layer and one micro-batch: 2 (K, V) x tokens (mbs * seq
// / cp) x local K/V heads (kv_heads / tp, at least one: replicated when kv_heads < tp) x head_dim
// x 2 B (bf16). MLA: the up-projected per-head K (nope + rope) and V the attention core gets.
double CpKvBytes(const TransformerSpec& m, double micro_batch, int tp, int cp);

struct CpLayerComm {
  double fwd_exposed_s = 0;   // added to the layer's forward
  double bwd_exposed_s = 0;   // added to the layer's backward (recompute not included)
  double fwd_sent_bytes = 0;  // bytes this rank sends in the forward
  double bwd_sent_bytes = 0;  // and in the backward
  double fwd_comm_s = 0;      // communication time before overlap
  double bwd_comm_s = 0;
};

// One layer's CP communication for a rank whose attention core takes attn_fwd_s / attn_bwd_s
// (all cp steps together). group: the CP group's global ranks in ring order (size cp >= 2).
CpLayerComm CpLayerCost(CpComm kind, double kv_bytes, double attn_fwd_s, double attn_bwd_s,
                        const std::vector<int>& group, const TrainCosts& costs);

}  // namespace ndt

#endif  // NDTWIN_PARALLEL_CONTEXT_PARALLEL_H_
