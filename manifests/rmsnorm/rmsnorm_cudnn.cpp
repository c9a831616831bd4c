// RMSNorm with cuDNN's graph API (the header-only cudnn frontend over libcudnn): an inference-phase
// rmsnorm node, fp32 compute. A graph is built once per (device, rows, cols, dtype) and kept; each call
// binds the pointers and runs on torch's current stream. No CUDA kernels of our own, so this file is
// compiled by the host compiler alone.
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <cudnn_frontend.h>

#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace fe = cudnn_frontend;

namespace {

struct Plan {
  std::shared_ptr<fe::graph::Graph> graph;
  std::shared_ptr<fe::graph::Tensor_attributes> x, scale, eps, y;
  int64_t workspace = 0;
};

void check(fe::error_t status, const char* what) {
  TORCH_CHECK(status.is_good(), "cudnn frontend ", what, ": ", status.get_message());
}

cudnnHandle_t handle_for(int device) {
  static std::mutex lock;
  static std::map<int, cudnnHandle_t> handles;
  std::lock_guard<std::mutex> guard(lock);
  auto it = handles.find(device);
  if (it == handles.end()) {
    cudnnHandle_t h;
    TORCH_CHECK(cudnnCreate(&h) == CUDNN_STATUS_SUCCESS, "cudnnCreate failed");
    it = handles.emplace(device, h).first;
  }
  return it->second;
}

Plan build(cudnnHandle_t handle, int64_t rows, int64_t cols, fe::DataType_t io) {
  Plan p;
  p.graph = std::make_shared<fe::graph::Graph>();
  p.graph->set_io_data_type(io).set_intermediate_data_type(fe::DataType_t::FLOAT).set_compute_data_type(fe::DataType_t::FLOAT);
  p.x = p.graph->tensor(fe::graph::Tensor_attributes().set_name("x").set_dim({rows, cols, 1, 1}).set_stride({cols, 1, cols, cols}));
  p.scale = p.graph->tensor(fe::graph::Tensor_attributes().set_name("scale").set_dim({1, cols, 1, 1}).set_stride({cols, 1, cols, cols}));
  p.eps = p.graph->tensor(fe::graph::Tensor_attributes().set_name("eps").set_dim({1, 1, 1, 1}).set_stride({1, 1, 1, 1})
                              .set_is_pass_by_value(true).set_data_type(fe::DataType_t::FLOAT));
  auto options = fe::graph::Rmsnorm_attributes().set_forward_phase(fe::NormFwdPhase_t::INFERENCE).set_epsilon(p.eps);
  auto outputs = p.graph->rmsnorm(p.x, p.scale, options);
  p.y = outputs[0];
  p.y->set_output(true);
  check(p.graph->validate(), "validate");
  check(p.graph->build_operation_graph(handle), "build_operation_graph");
  check(p.graph->create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}), "create_execution_plans");
  check(p.graph->check_support(handle), "check_support");
  check(p.graph->build_plans(handle), "build_plans");
  check(p.graph->get_workspace_size(p.workspace), "get_workspace_size");
  return p;
}

}  // namespace

torch::Tensor rmsnorm(torch::Tensor x, torch::Tensor weight) {
  TORCH_CHECK(x.is_cuda() && x.dim() == 2, "x must be a 2-D CUDA tensor");
  TORCH_CHECK(x.scalar_type() == at::kBFloat16 || x.scalar_type() == at::kFloat, "x must be bfloat16 or float32");
  TORCH_CHECK(weight.scalar_type() == x.scalar_type() && weight.numel() == x.size(1), "weight must be [hidden] of x's dtype");
  x = x.contiguous();
  weight = weight.contiguous();
  auto y = torch::empty_like(x);
  const int device = x.get_device();
  cudnnHandle_t handle = handle_for(device);
  TORCH_CHECK(cudnnSetStream(handle, c10::cuda::getCurrentCUDAStream(device)) == CUDNN_STATUS_SUCCESS, "cudnnSetStream failed");

  static std::mutex lock;
  static std::map<std::tuple<int, int64_t, int64_t, bool>, Plan> plans;
  const bool bf16 = x.scalar_type() == at::kBFloat16;
  const auto key = std::make_tuple(device, x.size(0), x.size(1), bf16);
  Plan* plan;
  {
    std::lock_guard<std::mutex> guard(lock);
    auto it = plans.find(key);
    if (it == plans.end())
      it = plans.emplace(key, build(handle, x.size(0), x.size(1), bf16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::FLOAT)).first;
    plan = &it->second;
  }
  float eps = 1e-6f;
  auto workspace = torch::empty({std::max<int64_t>(plan->workspace, 1)}, x.options().dtype(torch::kUInt8));
  std::unordered_map<std::shared_ptr<fe::graph::Tensor_attributes>, void*> pack = {
      {plan->x, x.data_ptr()}, {plan->scale, weight.data_ptr()}, {plan->eps, &eps}, {plan->y, y.data_ptr()}};
  check(plan->graph->execute(handle, pack, workspace.data_ptr()), "execute");
  return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("rmsnorm", &rmsnorm, "RMSNorm (cuDNN graph)"); }
