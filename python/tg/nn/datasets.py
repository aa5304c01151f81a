"""tg.nn.datasets: tinygrad's mnist(), read from local idx files by tinygrad.cpp's C++ reader.

  X_train, Y_train, X_test, Y_test = mnist(fashion=True)

X: uint8 (N, 1, 28, 28); Y: int32 (N,). Fashion-MNIST is read from where Debian's dataset-fashion-mnist
package puts it; there is no download (MNIST digits need `path=`, a directory holding the four files
train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte,
gzip-compressed (.gz) or not).
"""
import os
from typing import Optional, Tuple

from tg import _tg
from tg.tensor import Tensor

FASHION_MNIST_DIR = "/usr/share/datasets/fashion-mnist"


def mnist(device: Optional[str] = None, fashion: bool = False, path=None) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
  """(X_train, Y_train, X_test, Y_test). A missing or malformed file is an OSError / ValueError naming it."""
  if path is None:
    if not fashion:
      raise FileNotFoundError("mnist: the MNIST digits are not installed with tinygrad.cpp (no download); pass path= a directory "
                              "with their four idx files, or use mnist(fashion=True) (Debian's dataset-fashion-mnist)")
    path = FASHION_MNIST_DIR
  return _tg.fashion_mnist(os.fspath(path), device or "")


def load_idx(path, device: Optional[str] = None) -> Tensor:
  """One idx file (gzip-compressed or not) as a uint8 tensor of the shape its header gives."""
  return _tg.load_idx(os.fspath(path), device or "")


__all__ = ["mnist", "load_idx"]
