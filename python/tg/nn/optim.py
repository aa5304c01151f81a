"""tg.nn.optim: tinygrad's optimizers, run in C++ (SGD and LARS, Adam, AdamW and LAMB).

  opt = nn.optim.Adam(nn.state.get_parameters(model), lr=1e-3)
  with Tensor.train():
    opt.zero_grad(); loss.backward(); opt.step()

They take a list of Tensors. Tensors whose requires_grad is None become trainable; those with
requires_grad=False (BatchNorm's running statistics) are buffers, realized with each step(). `lr` is a
one-element Tensor (`opt.lr.assign(Tensor([new_lr]))` for a schedule). step() needs Tensor.training, a
gradient on every parameter, and realizes the new parameters and optimizer state in one schedule.
"""
from tg._tg import LAMB, LARS, SGD, Adam, AdamW, Optimizer  # noqa: F401

__all__ = ["Optimizer", "SGD", "LARS", "Adam", "AdamW", "LAMB"]
