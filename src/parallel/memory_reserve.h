// File: parallel/memory_reserve.h
// The bytes of a GPU a training process cannot use for model state and activations, from
// data/memory_reserve.yaml (every number there with its unit and source; the unsourced ones say
// "ASSUMPTION"): the CUDA context with its module images, the cuBLAS workspace, NCCL's buffers
// (one set of Simple + LL + LL128 FIFOs per channel per communicator), Transformer Engine's
// TP-overlap userbuffers (memory.h UserbufferBytes), and the caching allocator's fragmentation,
// a fraction of its pool (what CUDA can allocate less what is allocated outside it: the context,
// NCCL's and TE's buffers). UsableBytes is the one answer to "how many bytes may the weights,
// gradients, optimizer states, activations and pipeline buffers take" for a strategy on a GPU.
#ifndef NDTWIN_PARALLEL_MEMORY_RESERVE_H_
#define NDTWIN_PARALLEL_MEMORY_RESERVE_H_

#include <string>
#include <vector>

#include "core/status.h"
#include "model/transformer.h"
#include "parallel/strategy.h"

namespace ndt {

// One architecture's reserve, as data/memory_reserve.yaml states it. arch "": not loaded.
struct MemoryReserve {
  std::string arch;
  double cuda_context_bytes = 0;
  double cublas_workspace_bytes = 0;
  int nccl_channels = 0;               // channels NCCL sets up per communicator
  double nccl_channel_bytes = 0;       // Simple + LL + LL128 buffers of one channel
  double allocator_fragmentation = 0;  // fraction of the caching allocator's pool lost
  bool loaded() const { return !arch.empty(); }
};

struct MemoryReserveTable {
  std::vector<MemoryReserve> archs;
  // The entry for `arch`; an error naming the file and what to add when it has none.
  StatusOr<MemoryReserve> For(const std::string& arch) const;
};

// data_dir/memory_reserve.yaml (strict). Errors carry file:line.
StatusOr<MemoryReserveTable> LoadMemoryReserve(const std::string& data_dir);
StatusOr<MemoryReserveTable> ParseMemoryReserve(const std::string& text, const std::string& name);

// NCCL communicators a rank of strategy `s` holds buffers for: one per distinct group of ranks
// that runs a collective or p2p (PyTorch creates a process group's NCCL communicator at its first
// collective). Megatron-Core's groups (parallel_state.initialize_model_parallel):
//   TP (tp > 1): the layers' all-gathers / reduce-scatters;
//   CP (cp > 1): the attention ring's send/recv;
//   DP x CP (dp x cp > 1): the gradients' reduce-scatter and the parameters' all-gather;
//   DP alone (dp > 1 and cp > 1): the loss average over the data-parallel group;
//   PP (pp > 1): the stages' send/recv;
//   EP (ep > 1): the MoE all-to-alls; expert DP (ep > 1 and dp x cp / ep > 1): experts' gradients;
//   MP = TP x PP (tp > 1 and pp > 1): the gradient norm's all-reduce;
//   the world (default group: barriers, logging) where it is not one of the above.
int NcclCommunicators(const Strategy& s);

// The reserve of strategy `s` of `model` on a GPU of `capacity_bytes` (data/gpus memory).
struct ReserveBreakdown {
  double cuda_context_bytes = 0;
  double cublas_workspace_bytes = 0;
  double nccl_buffers_bytes = 0;
  double userbuffers_bytes = 0;
  double allocator_fragmentation_bytes = 0;
  int nccl_communicators = 0;
  double total_bytes() const {
    return cuda_context_bytes + cublas_workspace_bytes + nccl_buffers_bytes + userbuffers_bytes +
           allocator_fragmentation_bytes;
  }
  // What the weights, gradients, optimizer states, activations and pipeline buffers may take on a
  // GPU of `capacity_bytes`.
  double usable_bytes(double capacity_bytes) const { return capacity_bytes - total_bytes(); }
};
ReserveBreakdown ReserveOf(const MemoryReserve& r, double capacity_bytes,
                           const TransformerSpec& model, const Strategy& s);
// capacity_bytes - ReserveOf(...).total_bytes(): what MemoryBreakdown::total_bytes() may reach.
double UsableBytes(const MemoryReserve& r, double capacity_bytes, const TransformerSpec& model,
                   const Strategy& s);

}  // namespace ndt

#endif  // NDTWIN_PARALLEL_MEMORY_RESERVE_H_
