// RMSNorm with CUTLASS's CuTe: each block owns one row, viewed as a (kVec, cols / kVec) tensor so that
// every thread moves 16 bytes at a time with CuTe's vectorizing copy; fp32 accumulation. It defines
// the same launcher as rmsnorm.cu (rmsnorm.h), so it shares the torch binding rmsnorm_binding.cpp.
#include <cute/tensor.hpp>
#include <cutlass/numeric_types.h>

#include "rmsnorm.h"

using namespace cute;

namespace rmsnorm_cute_impl {  // named: nvcc cannot register kernel templates from an anonymous namespace

__device__ __forceinline__ float block_sum(float v) {
  __shared__ float partial[32];
  __shared__ float total;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < ((blockDim.x + 31) >> 5) ? partial[threadIdx.x] : 0.f;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    if (threadIdx.x == 0) total = v;
  }
  __syncthreads();
  return total;
}

template <class T, int kVec>
__global__ void rmsnorm_cute(T const* x, T const* w, T* y, int cols, float eps) {
  auto row = make_layout(make_shape(Int<kVec>{}, cols / kVec));  // (v, i) -> v + kVec * i
  Tensor gX = make_tensor(make_gmem_ptr(x + static_cast<size_t>(blockIdx.x) * cols), row);
  Tensor gY = make_tensor(make_gmem_ptr(y + static_cast<size_t>(blockIdx.x) * cols), row);
  Tensor gW = make_tensor(make_gmem_ptr(w), row);
  Tensor rX = make_tensor<T>(Shape<Int<kVec>>{});
  Tensor rW = make_tensor<T>(Shape<Int<kVec>>{});
  Tensor rY = make_tensor<T>(Shape<Int<kVec>>{});
  const AutoVectorizingCopyWithAssumedAlignment<128> vec;

  float ss = 0.f;
  for (int i = threadIdx.x; i < size<1>(gX); i += blockDim.x) {
    copy(vec, gX(_, i), rX);
    CUTE_UNROLL
    for (int v = 0; v < kVec; ++v) ss += static_cast<float>(rX(v)) * static_cast<float>(rX(v));
  }
  const float inv = rsqrtf(block_sum(ss) / cols + eps);
  for (int i = threadIdx.x; i < size<1>(gX); i += blockDim.x) {
    copy(vec, gX(_, i), rX);
    copy(vec, gW(_, i), rW);
    CUTE_UNROLL
    for (int v = 0; v < kVec; ++v) rY(v) = static_cast<T>(static_cast<float>(rX(v)) * inv * static_cast<float>(rW(v)));
    copy(vec, rY, gY(_, i));
  }
}

template <class T>
cudaError_t launch(const void* x, const void* w, void* y, int rows, int cols, cudaStream_t stream) {
  constexpr int kVec = 16 / sizeof(T);
  if (cols % kVec != 0) return cudaErrorInvalidValue;  // rows of whole 16-byte vectors only
  int threads = ((cols / kVec + 31) / 32) * 32;
  threads = threads < 32 ? 32 : (threads > 1024 ? 1024 : threads);
  rmsnorm_cute<T, kVec><<<rows, threads, 0, stream>>>(static_cast<T const*>(x), static_cast<T const*>(w),
                                                       static_cast<T*>(y), cols, 1e-6f);
  return cudaGetLastError();
}

}  // namespace rmsnorm_cute_impl

cudaError_t launch_rmsnorm(const void* x, const void* w, void* y, int rows, int cols, bool bf16, cudaStream_t stream) {
  using namespace rmsnorm_cute_impl;
  return bf16 ? launch<cutlass::bfloat16_t>(x, w, y, rows, cols, stream) : launch<float>(x, w, y, rows, cols, stream);
}
