#include "ops/cuda/probe.h"

#include <cuda_runtime.h>

#include <cstdio>

namespace fusebox::cuda {
namespace {

__global__ void write_pattern(int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 3 * i + 1;
}

bool failed(cudaError_t e, const char* what, char* why, size_t why_size) {
  if (e == cudaSuccess) return false;
  std::snprintf(why, why_size, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
  return true;
}

}  // namespace

bool probe_device(char* device, size_t device_size, char* why, size_t why_size) {
  cudaDeviceProp prop{};
  if (failed(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties", why, why_size)) return false;
  std::snprintf(device, device_size, "%s (sm_%d%d)", prop.name, prop.major, prop.minor);
  constexpr int kN = 1000;
  int* d = nullptr;
  if (failed(cudaMalloc(&d, kN * sizeof(int)), "cudaMalloc", why, why_size)) return false;
  write_pattern<<<(kN + 255) / 256, 256>>>(d, kN);
  int host[kN];
  bool ok = !failed(cudaGetLastError(), "kernel launch", why, why_size) &&
            !failed(cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost), "cudaMemcpy", why, why_size);
  cudaFree(d);
  for (int i = 0; ok && i < kN; ++i) {
    if (host[i] != 3 * i + 1) {
      std::snprintf(why, why_size, "the probe kernel wrote %d at %d, expected %d", host[i], i, 3 * i + 1);
      ok = false;
    }
  }
  return ok;
}

}  // namespace fusebox::cuda
