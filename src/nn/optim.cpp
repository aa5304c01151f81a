// Optimizers (tinygrad's nn/optim.py): every update is built lazily with assign(), then the new
// parameters and state are realized together in one schedule.
#include "tg/optim.h"

#include <algorithm>

namespace tg::nn::optim {

namespace {

void push_unique(std::vector<Tensor>& v, const Tensor& t) {
  if (std::none_of(v.begin(), v.end(), [&](const Tensor& o) { return o.is_same(t); })) v.push_back(t);
}

// Unset requires_grad means "a parameter" once it is given to an optimizer (tinygrad).
std::vector<Tensor> trainable(const std::vector<Tensor>& ps) {
  std::vector<Tensor> out;
  for (Tensor t : ps) {
    if (!t.requires_grad()) t.requires_grad_(true);
    if (*t.requires_grad()) push_unique(out, t);
  }
  TG_CHECK(!out.empty(), "Optimizer: none of the ", ps.size(), " tensors given requires grad; an optimizer needs at least one parameter");
  return out;
}

std::vector<Tensor> frozen(const std::vector<Tensor>& ps) {
  std::vector<Tensor> out;
  for (const Tensor& t : ps)
    if (!t.requires_grad().value_or(true)) push_unique(out, t);
  return out;
}

// A realized float32 scalar: a buffer, so changing its value never recompiles a kernel.
Tensor scalar_buffer(double v, const std::string& device) {
  return Tensor(std::vector<float>{static_cast<float>(v)}, {}, device).realize();
}

Tensor checked_grad(const Tensor& t, size_t i) {
  TG_CHECK_AS(RuntimeError, t.has_grad(), "Optimizer.step: parameter ", i, " (shape ", t.shape(), ", ", t.dtype().name(),
           ") has no gradient; call backward() on a loss that depends on it before step()");
  return t.grad();
}

// The dtype optimizer state is kept in: float32, or the parameter's dtype when it is wider.
DType state_dtype(const Tensor& t) { return least_upper_dtype({dtypes::float32, t.dtype()}); }

}  // namespace

Optimizer::Optimizer(const std::vector<Tensor>& ps, double lr_value)
    : params(trainable(ps)), buffers(frozen(ps)), lr(scalar_buffer(lr_value, params[0].device())) {}

void Optimizer::zero_grad() {
  for (Tensor& p : params) p.set_grad(std::nullopt);
}

std::vector<Tensor> Optimizer::schedule_step() {
  TG_CHECK_AS(RuntimeError, Tensor::training, "Optimizer.step: Tensor::training is false; enable it (tg::TrainingGuard) to train");
  NoGradGuard ng;  // the update itself is never differentiated
  std::vector<Tensor> out = step_();
  out.insert(out.end(), params.begin(), params.end());
  out.insert(out.end(), buffers.begin(), buffers.end());
  return out;
}

void Optimizer::step() { Tensor::corealize(schedule_step()); }

LARS::LARS(const std::vector<Tensor>& ps, double lr, double momentum, double weight_decay, bool nesterov, bool classic, double tcoef)
    : Optimizer(ps, lr), momentum(momentum), wd(weight_decay), nesterov(nesterov), classic(classic), tcoef(tcoef) {
  if (momentum != 0)
    for (const Tensor& t : params) b.push_back(Tensor::zeros(t.shape(), t.dtype(), t.device()).contiguous());
}

std::vector<Tensor> LARS::step_() {
  for (size_t i = 0; i < params.size(); i++) {
    Tensor& t = params[i];
    Tensor g = checked_grad(t, i).contiguous(), w = t.detach();
    // the trust ratio: ||w|| / ||g + wd w||, 1 when either norm is 0
    Tensor r = Tensor::ones({}, g.dtype(), g.device());
    if (tcoef != 0) {
      Tensor r1 = w.square().sum().sqrt(), r2 = g.square().sum().sqrt();
      Tensor ratio = tcoef * r1 / (r2 + wd * r1);
      r = (r1 > 0).where((r2 > 0).where(ratio, r), r);
    }
    if (wd != 0) g = g + wd * w;
    if (classic) g = g * r * lr;
    if (momentum != 0) {
      b[i].assign((momentum * b[i] + g).cast(b[i].dtype()));
      g = nesterov ? g + momentum * b[i] : b[i];
    }
    if (!classic) g = g * r * lr;
    t.assign((w - g).cast(t.dtype()));
  }
  return b;
}

LAMB::LAMB(const std::vector<Tensor>& ps, double lr, double b1, double b2, double eps, double weight_decay, bool adam)
    : Optimizer(ps, lr), b1(b1), b2(b2), eps(eps), wd(weight_decay), adam(adam),
      b1_t(scalar_buffer(1, params[0].device())), b2_t(scalar_buffer(1, params[0].device())) {
  for (const Tensor& t : params) {
    m.push_back(Tensor::zeros(t.shape(), state_dtype(t), t.device()).contiguous());
    v.push_back(Tensor::zeros(t.shape(), state_dtype(t), t.device()).contiguous());
  }
}

std::vector<Tensor> LAMB::step_() {
  b1_t.assign(b1_t * b1);
  b2_t.assign(b2_t * b2);
  for (size_t i = 0; i < params.size(); i++) {
    Tensor& t = params[i];
    Tensor g = checked_grad(t, i).cast(m[i].dtype()), w = t.detach();
    m[i].assign(b1 * m[i] + (1.0 - b1) * g);
    v[i].assign(b2 * v[i] + (1.0 - b2) * (g * g));
    Tensor m_hat = m[i] / (1.0 - b1_t), v_hat = v[i] / (1.0 - b2_t);
    Tensor up = m_hat / (v_hat.sqrt() + eps);
    if (wd != 0) up = up + wd * w.cast(up.dtype());
    Tensor r = Tensor::ones({}, up.dtype(), up.device());
    if (!adam) {  // the trust ratio ||w|| / ||update||, 1 when either norm is 0
      Tensor r1 = w.cast(up.dtype()).square().sum().sqrt(), r2 = up.square().sum().sqrt();
      r = (r1 > 0).where((r2 > 0).where(r1 / r2, r), r);
    }
    t.assign((w - lr * r * up).cast(t.dtype()));
  }
  std::vector<Tensor> state{b1_t, b2_t};
  state.insert(state.end(), m.begin(), m.end());
  state.insert(state.end(), v.begin(), v.end());
  return state;
}

}  // namespace tg::nn::optim
