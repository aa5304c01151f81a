#!/usr/bin/env python3
# The main job in Python, written as a tinygrad user writes it: an MLP on Fashion-MNIST with the model and
# hyperparameters of examples/fashion_mnist.cpp. Usage (from the repository, after building build/):
#   PYTHONPATH=build/python python3 examples/fashion_mnist.py [steps=600] [batch=128]
import sys, time
from tg import Tensor, nn
from tg.nn.datasets import mnist

class MLP:
  def __init__(self): self.l1, self.l2 = nn.Linear(784, 256), nn.Linear(256, 10)
  def __call__(self, x: Tensor) -> Tensor: return self.l2(self.l1(x.flatten(1)).relu())

if __name__ == "__main__":
  steps, batch = int(sys.argv[1]) if len(sys.argv) > 1 else 600, int(sys.argv[2]) if len(sys.argv) > 2 else 128
  Tensor.manual_seed(1337)
  X_train, Y_train, X_test, Y_test = mnist(fashion=True)
  X_train, X_test = (X_train.float() / 255.0).realize(), (X_test.float() / 255.0).realize()  # in [0, 1], made once
  model = MLP()
  opt = nn.optim.Adam(nn.state.get_parameters(model), lr=1e-3)
  t0 = time.perf_counter()
  for step in range(1, steps + 1):
    with Tensor.train():
      samples = Tensor.randint(batch, high=X_train.shape[0])  # a random batch: a data-dependent load of `batch` rows
      loss = model(X_train[samples]).sparse_categorical_crossentropy(Y_train[samples])
      opt.zero_grad()
      loss.backward()
      opt.step()
    if step % 100 == 0 or step == steps:
      print(f"step {step:4d}  loss {loss.item():.4f}  {(time.perf_counter() - t0) * 1e3 / step:.1f} ms/step")
  with Tensor.test():
    acc = (model(X_test).argmax(axis=1) == Y_test).float().mean().item()
  print(f"test accuracy {acc * 100:.2f}%  ({steps} steps of {batch} in {time.perf_counter() - t0:.1f} s)")
  sys.exit(0 if acc > 0.80 else 1)
