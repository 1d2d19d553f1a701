// Small-copy latencies behind data/hpc.yaml's mpi.cuda_copy_latency and cuda_ipc_latency
// assumptions: cudaMemcpyAsync of 8 B (D2H into pinned memory, H2D, D2D) and an empty kernel,
// each issued and waited for (cudaStreamSynchronize), median of 2000 after 200 warm-ups.
// Build: nvcc -O2 -std=c++17 -o copy_latency copy_latency.cu. Output: one line per case, us.
// Run 2026-11-26 on a lent H100 SXM (CUDA 13.0, driver 580.159.04; not an Azure VM):
//   d2h 8 B 6.97, h2d 8 B 6.04, d2d 8 B 9.79, d2h 4 KiB 7.00, h2d 4 KiB 7.30, d2d 4 KiB 9.70,
//   empty kernel 9.08 (issue + cudaStreamSynchronize, host clock).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

__global__ void Empty() {}

template <typename F>
double MedianUs(F f) {
  for (int i = 0; i < 200; ++i) f();
  std::vector<double> t;
  for (int i = 0; i < 2000; ++i) {
    auto a = std::chrono::steady_clock::now();
    f();
    auto b = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::micro>(b - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main() {
  cudaStream_t s;
  cudaStreamCreate(&s);
  char *d0, *d1, *h;
  cudaMalloc(&d0, 1 << 20);
  cudaMalloc(&d1, 1 << 20);
  cudaMallocHost(&h, 1 << 20);
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  int rt = 0, drv = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  std::printf("device %s runtime %d driver %d\n", p.name, rt, drv);
  for (size_t n : {8ul, 4096ul}) {
    std::printf("d2h %zu B: %.2f us\n", n, MedianUs([&] {
                  cudaMemcpyAsync(h, d0, n, cudaMemcpyDeviceToHost, s);
                  cudaStreamSynchronize(s);
                }));
    std::printf("h2d %zu B: %.2f us\n", n, MedianUs([&] {
                  cudaMemcpyAsync(d0, h, n, cudaMemcpyHostToDevice, s);
                  cudaStreamSynchronize(s);
                }));
    std::printf("d2d %zu B: %.2f us\n", n, MedianUs([&] {
                  cudaMemcpyAsync(d1, d0, n, cudaMemcpyDeviceToDevice, s);
                  cudaStreamSynchronize(s);
                }));
  }
  std::printf("empty kernel: %.2f us\n", MedianUs([&] {
                Empty<<<1, 1, 0, s>>>();
                cudaStreamSynchronize(s);
              }));
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
