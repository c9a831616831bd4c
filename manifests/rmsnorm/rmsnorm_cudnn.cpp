// RMSNorm with cuDNN's graph API (the header-only cudnn frontend over libcudnn): an inference-phase
// rmsnorm node, fp32 compute. It defines the launcher of rmsnorm.h, so it shares the torch binding
// rmsnorm_binding.cpp, compiled at the same time: this file never parses torch's headers, and the
// binding never parses the frontend's. A graph is built once per (device, rows, cols, dtype) and kept
// with its workspace; each call binds the pointers and runs on the caller's stream.
#include <cudnn_frontend.h>

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>

#include "rmsnorm.h"

namespace fe = cudnn_frontend;

namespace {

struct Plan {
  std::shared_ptr<fe::graph::Graph> graph;
  std::shared_ptr<fe::graph::Tensor_attributes> x, scale, eps, y;
  void* workspace = nullptr;
};

void check(fe::error_t status, const char* what) {
  if (!status.is_good()) throw std::runtime_error(std::string("cudnn frontend ") + what + ": " + status.get_message());
}

cudnnHandle_t handle_for(int device) {  // callers hold the lock
  static std::map<int, cudnnHandle_t> handles;
  auto it = handles.find(device);
  if (it == handles.end()) {
    cudnnHandle_t h;
    if (cudnnCreate(&h) != CUDNN_STATUS_SUCCESS) throw std::runtime_error("cudnnCreate failed");
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
  p.y = p.graph->rmsnorm(p.x, p.scale, options)[0];
  p.y->set_output(true);
  check(p.graph->validate(), "validate");
  check(p.graph->build_operation_graph(handle), "build_operation_graph");
  check(p.graph->create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}), "create_execution_plans");
  check(p.graph->check_support(handle), "check_support");
  check(p.graph->build_plans(handle), "build_plans");
  int64_t bytes = 0;
  check(p.graph->get_workspace_size(bytes), "get_workspace_size");
  if (bytes > 0 && cudaMalloc(&p.workspace, bytes) != cudaSuccess) throw std::runtime_error("workspace allocation failed");
  return p;
}

}  // namespace

cudaError_t launch_rmsnorm(const void* x, const void* w, void* y, int rows, int cols, bool bf16, cudaStream_t stream) {
  static std::mutex lock;
  static std::map<std::tuple<int, int, int, bool>, Plan> plans;
  int device = 0;
  if (cudaError_t err = cudaGetDevice(&device); err != cudaSuccess) return err;
  std::lock_guard<std::mutex> guard(lock);
  cudnnHandle_t handle = handle_for(device);
  if (cudnnSetStream(handle, stream) != CUDNN_STATUS_SUCCESS) throw std::runtime_error("cudnnSetStream failed");
  const auto key = std::make_tuple(device, rows, cols, bf16);
  auto it = plans.find(key);
  if (it == plans.end())
    it = plans.emplace(key, build(handle, rows, cols, bf16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::FLOAT)).first;
  Plan& plan = it->second;
  float eps = 1e-6f;
  std::unordered_map<std::shared_ptr<fe::graph::Tensor_attributes>, void*> pack = {
      {plan.x, const_cast<void*>(x)}, {plan.scale, const_cast<void*>(w)}, {plan.eps, &eps}, {plan.y, y}};
  check(plan.graph->execute(handle, pack, plan.workspace), "execute");
  return cudaGetLastError();
}
