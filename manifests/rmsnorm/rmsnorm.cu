// RMSNorm in CUDA C++: one block per row, fp32 accumulation, result in the input dtype.
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_bf16.h>

template <typename T> __device__ __forceinline__ float to_float(T v) { return static_cast<float>(v); }
template <> __device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ __forceinline__ T from_float(float v) { return static_cast<T>(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_float(float v) { return __float2bfloat16(v); }

__device__ __forceinline__ float block_sum(float v) {
  __shared__ float partial[32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  const int warps = (blockDim.x + 31) >> 5;
  v = (threadIdx.x < warps) ? partial[threadIdx.x] : 0.f;
  if (warp == 0)
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  __shared__ float total;
  if (threadIdx.x == 0) total = v;
  __syncthreads();
  return total;
}

template <typename T>
__global__ void rmsnorm_kernel(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y,
                               int cols, float eps) {
  const T* xr = x + static_cast<long>(blockIdx.x) * cols;
  T* yr = y + static_cast<long>(blockIdx.x) * cols;
  float ss = 0.f;
  for (int i = threadIdx.x; i < cols; i += blockDim.x) {
    float v = to_float(xr[i]);
    ss += v * v;
  }
  const float inv = rsqrtf(block_sum(ss) / cols + eps);
  for (int i = threadIdx.x; i < cols; i += blockDim.x)
    yr[i] = from_float<T>(to_float(xr[i]) * inv * to_float(w[i]));
}

torch::Tensor rmsnorm(torch::Tensor x, torch::Tensor weight) {
  TORCH_CHECK(x.is_cuda() && x.dim() == 2, "x must be a 2-D CUDA tensor");
  x = x.contiguous();
  auto y = torch::empty_like(x);
  const int rows = x.size(0), cols = x.size(1);
  const int threads = std::min(1024, std::max(32, ((cols / 8 + 31) / 32) * 32));
  auto stream = at::cuda::getCurrentCUDAStream();
  if (x.scalar_type() == at::kBFloat16) {
    rmsnorm_kernel<__nv_bfloat16><<<rows, threads, 0, stream>>>(
        reinterpret_cast<const __nv_bfloat16*>(x.data_ptr()), reinterpret_cast<const __nv_bfloat16*>(weight.data_ptr()),
        reinterpret_cast<__nv_bfloat16*>(y.data_ptr()), cols, 1e-6f);
  } else {
    TORCH_CHECK(x.scalar_type() == at::kFloat, "x must be bfloat16 or float32");
    rmsnorm_kernel<float><<<rows, threads, 0, stream>>>(x.data_ptr<float>(), weight.data_ptr<float>(),
                                                         y.data_ptr<float>(), cols, 1e-6f);
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("rmsnorm", &rmsnorm, "RMSNorm (CUDA)"); }
