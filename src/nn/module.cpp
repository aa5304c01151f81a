// nn::Module: the ordered registry of a model's named tensors.
#include <algorithm>

#include "tg/nn.h"

namespace tg::nn {

Tensor& Module::register_tensor(const std::string& name, Tensor t) {
  TG_CHECK(!name.empty(), "register_tensor: empty name for a tensor of shape ", t.shape());
  bool dup = std::any_of(tensors_.begin(), tensors_.end(), [&](const auto& p) { return p.first == name; });
  TG_CHECK(!dup, "register_tensor: name '", name, "' is already registered");
  tensors_.emplace_back(name, std::move(t));
  return tensors_.back().second;
}

void Module::register_module(const std::string& name, const Module& child) {
  TG_CHECK(!name.empty(), "register_module: empty name");
  TG_CHECK(&child != this, "register_module: a module cannot contain itself ('", name, "')");
  for (const auto& [n, t] : child.named_tensors()) register_tensor(name + "." + n, t);
}

std::map<std::string, Tensor> Module::state_dict() const {
  std::map<std::string, Tensor> out;
  for (const auto& [n, t] : tensors_) out.emplace(n, t);
  return out;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (const auto& [n, t] : tensors_)
    if (t.requires_grad().value_or(true)) out.push_back(t);
  return out;
}

}  // namespace tg::nn
