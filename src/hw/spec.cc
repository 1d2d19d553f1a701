// File: hw/spec.cc
// Names and sizes of precisions, peak rates by precision, and the names of the fabric and NIC
// enums as they appear in data/vms/*.yaml and in the CLI's output.
#include "hw/spec.h"

#include "core/strings.h"

namespace ndt {

double BytesPer(Precision p) {
  switch (p) {
    case Precision::kFp64:
      return 8;
    case Precision::kFp32:
      return 4;
    case Precision::kTf32:
      return 4;  // stored as fp32
    case Precision::kFp16:
      return 2;
    case Precision::kBf16:
      return 2;
    case Precision::kFp8:
      return 1;
    case Precision::kFp4:
      return 0.5;
    case Precision::kInt8:
      return 1;
  }
  return 0;
}

const char* PrecisionName(Precision p) {
  switch (p) {
    case Precision::kFp64:
      return "fp64";
    case Precision::kFp32:
      return "fp32";
    case Precision::kTf32:
      return "tf32";
    case Precision::kFp16:
      return "fp16";
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp8:
      return "fp8";
    case Precision::kFp4:
      return "fp4";
    case Precision::kInt8:
      return "int8";
  }
  return "?";
}

bool ParsePrecision(const std::string& s, Precision* out) {
  static constexpr Precision kAll[] = {Precision::kFp64, Precision::kFp32, Precision::kTf32,
                                       Precision::kFp16, Precision::kBf16, Precision::kFp8,
                                       Precision::kFp4,  Precision::kInt8};
  for (Precision p : kAll) {
    if (EqualsIgnoreCase(s, PrecisionName(p))) {
      *out = p;
      return true;
    }
  }
  return false;
}

double GpuSpec::PeakFlops(Precision p) const {
  switch (p) {
    // Tensor-core fp64 where the GPU has it (A100 on): the faster of the two paths.
    case Precision::kFp64:
      return fp64_tensor_flops > fp64_flops ? fp64_tensor_flops : fp64_flops;
    case Precision::kFp32:
      return fp32_flops;
    case Precision::kTf32:
      return tf32_flops;
    case Precision::kFp16:
      return fp16_flops;
    case Precision::kBf16:
      return bf16_flops;
    case Precision::kFp8:
      return fp8_flops;
    case Precision::kFp4:
      return fp4_flops;
    case Precision::kInt8:
      return int8_ops;
  }
  return 0;
}

const char* IntraVmFabricName(IntraVmFabric f) {
  switch (f) {
    case IntraVmFabric::kPcie:
      return "pcie";
    case IntraVmFabric::kNvlinkCubeMesh:
      return "nvlink_cube_mesh";
    case IntraVmFabric::kNvswitch:
      return "nvswitch";
    case IntraVmFabric::kNvl72:
      return "nvl72";
  }
  return "?";
}

const char* NicAffinityName(NicAffinity a) {
  switch (a) {
    case NicAffinity::kNone:
      return "none";
    case NicAffinity::kPerGpu:
      return "per_gpu";
    case NicAffinity::kPerVm:
      return "per_vm";
    case NicAffinity::kPerGpuC2c:
      return "per_gpu_c2c";
  }
  return "?";
}

}  // namespace ndt
