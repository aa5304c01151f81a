// tg::nn::optim: tinygrad's optimizers (nn/optim.py): SGD (through LARS), Adam and AdamW (through LAMB).
//
//   nn::optim::Adam opt(model.parameters(), 1e-3);
//   tg::TrainingGuard tr;
//   opt.zero_grad(); loss.backward(); opt.step();
//
// The constructor marks parameters whose requires_grad is unset as requiring grad; the ones marked
// requires_grad(false) are kept as buffers (realized with each step but not updated). lr is a
// one-element float32 Tensor so a schedule can change it between steps (`opt.lr.assign(...)`). step()
// assigns every new parameter and optimizer state, then realizes them all in one schedule.
#pragma once
#include <vector>

#include "tg/tensor.h"

namespace tg::nn::optim {

class Optimizer {
 public:
  Optimizer(const std::vector<Tensor>& params, double lr);
  virtual ~Optimizer() = default;
  void zero_grad();
  // Needs Tensor::training (as tinygrad) and a gradient on every parameter.
  void step();
  // The tensors step() realizes: the updated parameters, the optimizer state and the buffers.
  std::vector<Tensor> schedule_step();
  std::vector<Tensor> params, buffers;
  Tensor lr;

 protected:
  virtual std::vector<Tensor> step_() = 0;  // assigns the new parameters; returns the updated state
};

// LARS, and SGD as LARS without the trust ratio (tcoef = 0). `classic` applies lr before momentum.
class LARS : public Optimizer {
 public:
  LARS(const std::vector<Tensor>& params, double lr = 0.001, double momentum = 0.9, double weight_decay = 1e-4,
       bool nesterov = false, bool classic = true, double tcoef = 0.001);
  double momentum, wd;
  bool nesterov, classic;
  double tcoef;
  std::vector<Tensor> b;  // momentum buffers

 protected:
  std::vector<Tensor> step_() override;
};

class SGD : public LARS {
 public:
  SGD(const std::vector<Tensor>& params, double lr = 0.001, double momentum = 0, double weight_decay = 0,
      bool nesterov = false, bool classic = false)
      : LARS(params, lr, momentum, weight_decay, nesterov, classic, 0.0) {}
};

// LAMB, and Adam/AdamW as LAMB without the trust ratio (adam = true). Weight decay is decoupled (AdamW).
class LAMB : public Optimizer {
 public:
  LAMB(const std::vector<Tensor>& params, double lr = 0.001, double b1 = 0.9, double b2 = 0.999, double eps = 1e-6,
       double weight_decay = 0, bool adam = false);
  double b1, b2, eps, wd;
  bool adam;
  Tensor b1_t, b2_t;       // b1^t and b2^t, for the bias corrections
  std::vector<Tensor> m, v;  // first and second moments (float32)

 protected:
  std::vector<Tensor> step_() override;
};

class AdamW : public LAMB {
 public:
  AdamW(const std::vector<Tensor>& params, double lr = 0.001, double b1 = 0.9, double b2 = 0.999, double eps = 1e-8,
        double weight_decay = 0.01)
      : LAMB(params, lr, b1, b2, eps, weight_decay, true) {}
};

class Adam : public LAMB {
 public:
  Adam(const std::vector<Tensor>& params, double lr = 0.001, double b1 = 0.9, double b2 = 0.999, double eps = 1e-8)
      : LAMB(params, lr, b1, b2, eps, 0.0, true) {}
};

}  // namespace tg::nn::optim
