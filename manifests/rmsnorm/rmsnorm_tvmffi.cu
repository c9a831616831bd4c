// The tvm-ffi binding of rmsnorm.cu (FlashInfer-Bench's default binding): destination-passing, DLPack
// tensors in, the launch on the stream the caller's framework set (TVMFFIEnvGetStream), no torch headers.
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>

#include "rmsnorm.h"

namespace {

void rmsnorm_impl(tvm::ffi::TensorView x, tvm::ffi::TensorView weight, tvm::ffi::TensorView y) {
  TVM_FFI_ICHECK(x.ndim() == 2 && y.ndim() == 2 && weight.ndim() == 1) << "x, y must be 2-D and weight 1-D";
  TVM_FFI_ICHECK(x.device().device_type == kDLCUDA) << "x must be a CUDA tensor";
  const DLDataType dt = x.dtype();
  const bool bf16 = dt.code == kDLBfloat && dt.bits == 16;
  TVM_FFI_ICHECK(bf16 || (dt.code == kDLFloat && dt.bits == 32)) << "x must be bfloat16 or float32";
  TVM_FFI_ICHECK(weight.size(0) == x.size(1) && y.size(0) == x.size(0) && y.size(1) == x.size(1))
      << "weight must be [hidden] and y [batch, hidden]";
  auto stream = static_cast<cudaStream_t>(TVMFFIEnvGetStream(x.device().device_type, x.device().device_id));
  const cudaError_t err = launch_rmsnorm(x.data_ptr(), weight.data_ptr(), y.data_ptr(), static_cast<int>(x.size(0)),
                                         static_cast<int>(x.size(1)), bf16, stream);
  TVM_FFI_ICHECK(err == cudaSuccess) << "rmsnorm launch failed: " << cudaGetErrorString(err);
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(rmsnorm, rmsnorm_impl);
