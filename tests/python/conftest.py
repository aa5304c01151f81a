# Shared fixtures for the tg (tinygrad.cpp Python bindings) suite.
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))  # `import helpers` from every test module


@pytest.fixture(autouse=True, scope="module")
def seed_everything():
  """Seed NumPy, PyTorch and tg once per module, so a module's random inputs are the same on every run."""
  import torch
  import tg
  np.random.seed(0)
  torch.manual_seed(0)
  tg.Tensor.manual_seed(0)
  yield


@pytest.fixture()
def training():
  """Tensor.training on for one test (dropout and BatchNorm's batch statistics, optimizer steps)."""
  import tg
  prev = tg.Tensor.training
  tg.Tensor.training = True
  yield
  tg.Tensor.training = prev
