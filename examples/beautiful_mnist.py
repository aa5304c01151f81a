#!/usr/bin/env python3
# tinygrad's examples/beautiful_mnist.py with its imports changed: a CNN on Fashion-MNIST (MNIST_DIR= any
# directory of MNIST-format idx files), the train step and the test evaluation under TinyJit.
#   PYTHONPATH=build/python python3 examples/beautiful_mnist.py      (STEPS=, BS=, LR=, EVAL= as the C++ one)
# As the C++ one, the learning rate decays from LR to LR/10 on a cosine over the run.
import math
import sys
from typing import Callable, List
from tg import Tensor, TinyJit, nn, GlobalCounters
from tg.helpers import getenv, trange
from tg.nn.datasets import mnist

class Model:
  def __init__(self):
    self.layers: List[Callable[[Tensor], Tensor]] = [
      nn.Conv2d(1, 32, 5), Tensor.relu,
      nn.Conv2d(32, 32, 5), Tensor.relu,
      nn.BatchNorm(32), Tensor.max_pool2d,
      nn.Conv2d(32, 64, 3), Tensor.relu,
      nn.Conv2d(64, 64, 3), Tensor.relu,
      nn.BatchNorm(64), Tensor.max_pool2d,
      lambda x: x.flatten(1), nn.Linear(576, 10)]

  def __call__(self, x: Tensor) -> Tensor: return x.sequential(self.layers)

if __name__ == "__main__":
  Tensor.manual_seed(getenv("SEED", 1337))
  X_train, Y_train, X_test, Y_test = mnist(fashion=True, path=getenv("MNIST_DIR", "") or None)
  model = Model()
  lr = float(getenv("LR", "0.001"))
  opt = nn.optim.Adam(nn.state.get_parameters(model), lr=lr)

  @TinyJit
  @Tensor.train()
  def train_step() -> Tensor:
    opt.zero_grad()
    samples = Tensor.randint(getenv("BS", 512), high=X_train.shape[0])
    loss = model(X_train[samples]).sparse_categorical_crossentropy(Y_train[samples]).backward()
    return loss.realize(*opt.schedule_step())

  @TinyJit
  @Tensor.test()
  def get_test_acc() -> Tensor: return (model(X_test).argmax(axis=1) == Y_test).mean() * 100

  test_acc, eval_every, steps = float("nan"), getenv("EVAL", 50), getenv("STEPS", 400)
  for i in (t := trange(steps)):
    GlobalCounters.reset()  # NOTE: this makes it nice for DEBUG=2 timing
    opt.lr.assign(Tensor(lr * (0.1 + 0.45 * (1 + math.cos(math.pi * i / steps))))).realize()
    loss = train_step()
    if i % eval_every == eval_every - 1 or i == steps - 1: test_acc = get_test_acc().item()
    t.set_description(f"loss: {loss.item():6.2f} test_accuracy: {test_acc:5.2f}%")
  print(f"test accuracy {test_acc:.2f}%")
  sys.exit(0 if test_acc >= getenv("MIN_ACC", 0) else 1)  # (MIN_ACC: what the test of this example asks)
