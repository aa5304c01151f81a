// get_parameters / get_state_dict / load_state_dict (tinygrad's nn/state.py).
#include <algorithm>

#include "tg/state.h"

namespace tg::nn::state {

std::vector<Tensor> get_parameters(const Module& m) {
  std::vector<Tensor> out;
  for (const auto& [n, t] : m.named_tensors()) out.push_back(t);
  return out;
}

std::map<std::string, Tensor> get_state_dict(const Module& m) { return m.state_dict(); }

void load_state_dict(Module& m, const std::map<std::string, Tensor>& state, bool strict) {
  const auto& mine = m.named_tensors();
  for (const auto& [name, t] : mine) {
    auto it = state.find(name);
    TG_CHECK(it != state.end() || !strict, "load_state_dict: missing key '", name, "' (shape ", t.shape(),
             ") in the state dict (strict; pass strict=false to load a subset)");
    TG_CHECK(it == state.end() || it->second.shape() == t.shape(), "load_state_dict: shape mismatch for '", name,
             "': the model has ", t.shape(), ", the state dict has ", it->second.shape());
  }
  if (strict)
    for (const auto& entry : state) {  // not a structured binding: clang 14 cannot capture one in a lambda
      bool known = std::any_of(mine.begin(), mine.end(), [&](const auto& p) { return p.first == entry.first; });
      TG_CHECK(known, "load_state_dict: unexpected key '", entry.first, "' (shape ", entry.second.shape(), ") in the state dict (strict)");
    }
  // every check passed: now change the model, all tensors in one schedule
  std::vector<Tensor> loaded;
  for (const auto& [name, t] : mine) {
    auto it = state.find(name);
    if (it == state.end()) continue;
    Tensor handle = t;  // a handle: assigning through it updates the model's tensor
    handle.assign(it->second.detach().to(t.device()).cast(t.dtype()));
    loaded.push_back(handle);
  }
  Tensor::corealize(loaded);
}

}  // namespace tg::nn::state
