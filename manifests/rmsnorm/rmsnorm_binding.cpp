// The torch binding of rmsnorm.cu: checks, allocation and the launch on torch's current stream.
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

#include "rmsnorm.h"

torch::Tensor rmsnorm(torch::Tensor x, torch::Tensor weight) {
  TORCH_CHECK(x.is_cuda() && x.dim() == 2, "x must be a 2-D CUDA tensor");
  TORCH_CHECK(x.scalar_type() == at::kBFloat16 || x.scalar_type() == at::kFloat, "x must be bfloat16 or float32");
  TORCH_CHECK(weight.scalar_type() == x.scalar_type() && weight.numel() == x.size(1), "weight must be [hidden] of x's dtype");
  x = x.contiguous();
  weight = weight.contiguous();
  auto y = torch::empty_like(x);
  const cudaError_t err = launch_rmsnorm(x.data_ptr(), weight.data_ptr(), y.data_ptr(), x.size(0), x.size(1),
                                         x.scalar_type() == at::kBFloat16, c10::cuda::getCurrentCUDAStream());
  TORCH_CHECK(err == cudaSuccess, "rmsnorm launch failed: ", cudaGetErrorString(err));
  return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("rmsnorm", &rmsnorm, "RMSNorm (CUDA)"); }
