// The launcher rmsnorm.cu defines and rmsnorm_binding.cpp calls: plain pointers, no torch types.
#pragma once
#include <cuda_runtime.h>

cudaError_t launch_rmsnorm(const void* x, const void* w, void* y, int rows, int cols, bool bf16, cudaStream_t stream);
