# tg.nn layers against torch.nn, get_parameters / get_state_dict on a user's own classes, optimizers
# against torch.optim, safetensors round trips and load_state_dict, and a tiny training run.
import numpy as np
import pytest
import torch

import tg
from tg import Tensor, dtypes, nn
from tg.nn.optim import SGD, Adam, AdamW
from tg.nn.state import get_parameters, get_state_dict, load_state_dict, safe_load, safe_save


def _to_torch(tg_layer, torch_layer, names):
  with torch.no_grad():
    for n in names:
      getattr(torch_layer, n).copy_(torch.from_numpy(getattr(tg_layer, n).numpy()))


def _compare_layer(tg_layer, torch_layer, names, shape, atol=1e-5, grad_atol=1e-4, low=-2, high=2, int_input=None):
  _to_torch(tg_layer, torch_layer, names)
  if int_input is None:
    x = np.random.uniform(low, high, shape).astype(np.float32)
    tx, gx = torch.tensor(x, requires_grad=True), Tensor(x, requires_grad=True)
  else:
    tx, gx = torch.tensor(int_input, dtype=torch.int64), Tensor(int_input.astype(np.int32))
  for n in names: getattr(tg_layer, n).requires_grad = True
  tout, gout = torch_layer(tx), tg_layer(gx)
  np.testing.assert_allclose(gout.numpy(), tout.detach().numpy(), atol=atol, rtol=1e-3)
  tout.sum().backward()
  gout.sum().backward()
  for n in names:
    np.testing.assert_allclose(getattr(tg_layer, n).grad.numpy(), getattr(torch_layer, n).grad.numpy(), atol=grad_atol, rtol=1e-3, err_msg=n)
  if int_input is None:
    np.testing.assert_allclose(gx.grad.numpy(), tx.grad.numpy(), atol=grad_atol, rtol=1e-3, err_msg="input")


def test_linear():
  _compare_layer(nn.Linear(7, 5), torch.nn.Linear(7, 5), ["weight", "bias"], (4, 7))


def test_linear_no_bias():
  layer = nn.Linear(7, 5, bias=False)
  assert layer.bias is None
  _compare_layer(layer, torch.nn.Linear(7, 5, bias=False), ["weight"], (3, 2, 7))


def test_linear_init_range():
  w = nn.Linear(100, 50).weight.numpy()
  assert w.shape == (50, 100)
  bound = 1 / np.sqrt(100)
  assert np.abs(w).max() <= bound + 1e-6 and w.std() > bound / 4


def test_conv2d():
  _compare_layer(nn.Conv2d(3, 4, 3, stride=2, padding=1), torch.nn.Conv2d(3, 4, 3, stride=2, padding=1), ["weight", "bias"], (2, 3, 9, 9), atol=1e-4)


def test_conv2d_groups_dilation():
  _compare_layer(nn.Conv2d(4, 6, (3, 2), dilation=2, groups=2), torch.nn.Conv2d(4, 6, (3, 2), dilation=2, groups=2), ["weight", "bias"], (2, 4, 9, 9), atol=1e-4)


def test_conv1d():
  _compare_layer(nn.Conv1d(3, 5, 4, padding=2), torch.nn.Conv1d(3, 5, 4, padding=2), ["weight", "bias"], (2, 3, 12), atol=1e-4)


def test_conv_transpose2d():
  _compare_layer(nn.ConvTranspose2d(4, 3, 3, stride=2), torch.nn.ConvTranspose2d(4, 3, 3, stride=2), ["weight", "bias"], (2, 4, 5, 5), atol=1e-4)


def test_layernorm():
  layer = nn.LayerNorm(8)
  layer.weight.assign(Tensor(np.random.uniform(0.5, 1.5, 8).astype(np.float32))).realize()
  layer.bias.assign(Tensor(np.random.uniform(-1, 1, 8).astype(np.float32))).realize()
  _compare_layer(layer, torch.nn.LayerNorm(8), ["weight", "bias"], (3, 5, 8))


def test_groupnorm():
  _compare_layer(nn.GroupNorm(2, 6), torch.nn.GroupNorm(2, 6), ["weight", "bias"], (3, 6, 4, 4))


def test_instancenorm():
  _compare_layer(nn.InstanceNorm(3), torch.nn.InstanceNorm2d(3, affine=True), ["weight", "bias"], (2, 3, 5, 5))


def test_rmsnorm():
  layer = nn.RMSNorm(8)
  x = np.random.uniform(-2, 2, (3, 8)).astype(np.float32)
  tx = torch.tensor(x)
  want = tx * torch.rsqrt(tx.pow(2).mean(-1, keepdim=True) + 1e-6)
  np.testing.assert_allclose(layer(Tensor(x)).numpy(), want.numpy(), atol=1e-5, rtol=1e-4)


def test_embedding():
  idx = np.array([[0, 3, 9], [2, 2, 5]])
  _compare_layer(nn.Embedding(10, 4), torch.nn.Embedding(10, 4), ["weight"], None, int_input=idx)


def test_batchnorm_eval():
  layer, tl = nn.BatchNorm2d(3), torch.nn.BatchNorm2d(3).eval()
  rm, rv = np.random.uniform(-1, 1, 3).astype(np.float32), np.random.uniform(0.5, 2, 3).astype(np.float32)
  layer.running_mean.assign(Tensor(rm)).realize()
  layer.running_var.assign(Tensor(rv)).realize()
  _to_torch(layer, tl, ["running_mean", "running_var"])
  _compare_layer(layer, tl, ["weight", "bias"], (4, 3, 5, 5))


def test_batchnorm_training_updates_running_stats(training):
  layer, tl = nn.BatchNorm2d(3), torch.nn.BatchNorm2d(3).train()
  _compare_layer(layer, tl, ["weight", "bias"], (4, 3, 5, 5))
  np.testing.assert_allclose(layer.running_mean.numpy(), tl.running_mean.numpy(), atol=1e-5)
  np.testing.assert_allclose(layer.running_var.numpy(), tl.running_var.numpy(), atol=1e-5)


# ---- get_parameters / get_state_dict on a user's classes -----------------------------------------------

class Block:
  def __init__(self, n):
    self.norm = nn.LayerNorm(n)
    self.fc = nn.Linear(n, n)

  def __call__(self, x):
    return self.fc(self.norm(x)).relu()


class Net:
  def __init__(self):
    self.inp = nn.Linear(4, 8)
    self.blocks = [Block(8), Block(8)]
    self.heads = {"a": nn.Linear(8, 3), "b": nn.Linear(8, 1, bias=False)}
    self.scale = Tensor.ones(3)
    self.name = "not a tensor"
    self.depth = 2

  def __call__(self, x):
    x = self.inp(x).relu()
    for b in self.blocks: x = b(x)
    return self.heads["a"](x) * self.scale + self.heads["b"](x)


NET_KEYS = {"inp.weight", "inp.bias", "scale", "heads.a.weight", "heads.a.bias", "heads.b.weight"} | \
           {f"blocks.{i}.{l}.{p}" for i in range(2) for l in ("norm", "fc") for p in ("weight", "bias")}


def test_get_state_dict_user_class():
  net = Net()
  sd = get_state_dict(net)
  assert set(sd) == NET_KEYS
  assert sd["blocks.1.fc.weight"] is net.blocks[1].fc.weight or sd["blocks.1.fc.weight"].shape == (8, 8)
  assert sd["heads.a.weight"].shape == (3, 8)


def test_get_parameters_user_class():
  net = Net()
  params = get_parameters(net)
  assert len(params) == len(NET_KEYS)
  assert all(isinstance(p, Tensor) for p in params)
  assert sum(p.numel() for p in params) == 4 * 8 + 8 + 3 + 3 * 8 + 3 + 8 + 2 * (8 + 8 + 8 * 8 + 8)


def test_get_state_dict_containers():
  sd = get_state_dict({"x": [Tensor.ones(2), (Tensor.zeros(3),)], "y": nn.Linear(2, 2)})
  assert set(sd) == {"x.0", "x.1.0", "y.weight", "y.bias"}


def test_get_parameters_batchnorm_includes_running_stats():
  sd = get_state_dict(nn.BatchNorm2d(4))
  assert {"weight", "bias", "running_mean", "running_var"} <= set(sd)


def test_load_state_dict():
  a, b = Net(), Net()
  load_state_dict(b, get_state_dict(a))
  x = Tensor(np.random.randn(5, 4).astype(np.float32))
  np.testing.assert_allclose(b(x).numpy(), a(x).numpy(), atol=1e-6)
  for k, v in get_state_dict(b).items():
    np.testing.assert_array_equal(v.numpy(), get_state_dict(a)[k].numpy(), err_msg=k)


def test_load_state_dict_shape_mismatch():
  sd = get_state_dict(nn.Linear(3, 2))
  with pytest.raises(ValueError, match="weight"):
    load_state_dict(nn.Linear(4, 2), sd)


def test_load_state_dict_missing_key_strict():
  sd = get_state_dict(nn.Linear(3, 2))
  del sd["bias"]
  with pytest.raises(KeyError, match="bias"):
    load_state_dict(nn.Linear(3, 2), sd)
  load_state_dict(nn.Linear(3, 2), sd, strict=False)


# ---- safetensors ----------------------------------------------------------------------------------------

def test_safe_save_load_roundtrip(tmp_path):
  tensors = {
    "f32": Tensor(np.random.randn(3, 4).astype(np.float32)), "f16": Tensor(np.random.randn(5).astype(np.float16)),
    "f64": Tensor(np.random.randn(2, 2)), "i32": Tensor(np.arange(6, dtype=np.int32).reshape(2, 3)),
    "i64": Tensor(np.array([-2 ** 40, 7], np.int64)), "u8": Tensor(np.array([0, 255], np.uint8)),
    "bool": Tensor(np.array([True, False, True])), "scalar": Tensor(np.float32(2.5)), "empty": Tensor(np.zeros((0, 3), np.float32)),
  }
  path = str(tmp_path / "t.safetensors")
  safe_save(tensors, path)
  loaded = safe_load(path)
  assert set(loaded) == set(tensors)
  for k, t in tensors.items():
    assert loaded[k].dtype == t.dtype, k
    assert loaded[k].shape == t.shape, k
    np.testing.assert_array_equal(loaded[k].numpy(), t.numpy(), err_msg=k)


def test_safetensors_readable_by_format(tmp_path):
  # the file is real safetensors: 8-byte header length, JSON header, raw little-endian data
  import json, struct
  path = tmp_path / "m.safetensors"
  safe_save({"w": Tensor(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))}, str(path))
  raw = path.read_bytes()
  n = struct.unpack("<Q", raw[:8])[0]
  hdr = json.loads(raw[8:8 + n])
  assert hdr["w"]["dtype"] == "F32" and hdr["w"]["shape"] == [2, 2]
  s, e = hdr["w"]["data_offsets"]
  np.testing.assert_array_equal(np.frombuffer(raw[8 + n + s:8 + n + e], np.float32), [1, 2, 3, 4])


def test_model_save_load(tmp_path):
  a, b = Net(), Net()
  path = str(tmp_path / "net.safetensors")
  safe_save(get_state_dict(a), path)
  load_state_dict(b, safe_load(path))
  x = Tensor(np.random.randn(2, 4).astype(np.float32))
  np.testing.assert_allclose(b(x).numpy(), a(x).numpy(), atol=1e-6)


def test_safe_load_missing_file(tmp_path):
  with pytest.raises(OSError):
    safe_load(str(tmp_path / "nope.safetensors"))


def test_safe_load_garbage_file(tmp_path):
  p = tmp_path / "bad.safetensors"
  p.write_bytes(b"\xff" * 7)
  with pytest.raises(ValueError, match="truncated"):
    safe_load(str(p))


# ---- optimizers against torch.optim ---------------------------------------------------------------------

def _optim_case(tg_opt, torch_opt, steps=3):
  rng = np.random.RandomState(11)
  w0, b0 = rng.randn(4, 5).astype(np.float32), rng.randn(5).astype(np.float32)
  xs = [rng.randn(3, 4).astype(np.float32) for _ in range(steps)]
  tw, tb = torch.tensor(w0, requires_grad=True), torch.tensor(b0, requires_grad=True)
  gw, gb = Tensor(w0, requires_grad=True), Tensor(b0, requires_grad=True)
  topt, gopt = torch_opt([tw, tb]), tg_opt([gw, gb])
  prev = Tensor.training
  Tensor.training = True
  try:
    for x in xs:
      topt.zero_grad()
      ((torch.tensor(x) @ tw + tb).tanh() ** 2).sum().backward()
      topt.step()
      gopt.zero_grad()
      ((Tensor(x) @ gw + gb).tanh() ** 2).sum().backward()
      gopt.step()
  finally:
    Tensor.training = prev
  np.testing.assert_allclose(gw.numpy(), tw.detach().numpy(), atol=1e-5, rtol=1e-4)
  np.testing.assert_allclose(gb.numpy(), tb.detach().numpy(), atol=1e-5, rtol=1e-4)
  assert not np.allclose(gw.numpy(), w0)  # the step did something


OPTIMS = {
  "sgd":          (lambda p: SGD(p, lr=0.1), lambda p: torch.optim.SGD(p, lr=0.1)),
  "sgd_momentum": (lambda p: SGD(p, lr=0.1, momentum=0.9), lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9)),
  "sgd_nesterov_wd": (lambda p: SGD(p, lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.01),
                      lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.01)),
  "adam":         (lambda p: Adam(p, lr=0.01), lambda p: torch.optim.Adam(p, lr=0.01)),
  "adam_betas":   (lambda p: Adam(p, lr=0.02, b1=0.8, b2=0.99, eps=1e-6), lambda p: torch.optim.Adam(p, lr=0.02, betas=(0.8, 0.99), eps=1e-6)),
  "adamw":        (lambda p: AdamW(p, lr=0.01, weight_decay=0.1), lambda p: torch.optim.AdamW(p, lr=0.01, weight_decay=0.1)),
}


@pytest.mark.parametrize("name", list(OPTIMS))
def test_optimizer_matches_torch(name):
  _optim_case(*OPTIMS[name])


def test_optimizer_lr_is_tensor():
  w = Tensor.ones(3, requires_grad=True)
  opt = SGD([w], lr=0.5)
  assert isinstance(opt.lr, Tensor)
  np.testing.assert_allclose(opt.lr.numpy(), 0.5)


def test_optimizer_zero_grad():
  w = Tensor.ones(3, requires_grad=True)
  opt = SGD([w], lr=0.5)
  (w * 2).sum().backward()
  assert w.grad is not None
  opt.zero_grad()
  assert w.grad is None


def test_training_smoke(training):
  # a small MLP learns a fixed random linear labeling of 2-d points: the loss must fall
  rng = np.random.RandomState(5)
  X = rng.randn(128, 2).astype(np.float32)
  Y = (X @ np.array([1.5, -2.0]) > 0).astype(np.int32)

  class MLP:
    def __init__(self):
      self.l1, self.l2 = nn.Linear(2, 16), nn.Linear(16, 2)

    def __call__(self, x):
      return self.l2(self.l1(x).relu())

  model = MLP()
  opt = Adam(get_parameters(model), lr=0.05)
  x, y = Tensor(X), Tensor(Y)
  losses = []
  for _ in range(25):
    opt.zero_grad()
    loss = model(x).sparse_categorical_crossentropy(y)
    loss.backward()
    opt.step()
    losses.append(loss.item())
  assert losses[-1] < 0.5 * losses[0], losses
  acc = (model(x).argmax(axis=1) == y).mean().item()
  assert acc > 0.9, acc


def test_batchnorm_three_training_steps(training):
  # running statistics follow torch's over several batches (momentum 0.1, unbiased running variance)
  layer, tl = nn.BatchNorm2d(3), torch.nn.BatchNorm2d(3).train()
  for i in range(3):
    x = np.random.RandomState(i).uniform(-2, 3, (4, 3, 2, 2)).astype(np.float32)
    np.testing.assert_allclose(layer(Tensor(x)).numpy(), tl(torch.tensor(x)).detach().numpy(), atol=1e-5, rtol=1e-4)
  np.testing.assert_allclose(layer.running_mean.numpy(), tl.running_mean.numpy(), atol=1e-5)
  np.testing.assert_allclose(layer.running_var.numpy(), tl.running_var.numpy(), atol=1e-5)


def test_safetensors_metadata(tmp_path):
  from tg.nn.state import safe_load_metadata
  p = str(tmp_path / "m.safetensors")
  safe_save({"a": Tensor([1.0])}, p, metadata={"format": "pt", "note": "hello"})
  assert safe_load_metadata(p) == {"format": "pt", "note": "hello"}


def test_load_state_dict_casts_dtype():
  layer = nn.Linear(3, 2)
  sd = {k: Tensor(v.numpy().astype(np.float64)) for k, v in get_state_dict(nn.Linear(3, 2)).items()}
  load_state_dict(layer, sd)
  assert layer.weight.dtype == dtypes.float32
  np.testing.assert_allclose(layer.weight.numpy(), sd["weight"].numpy().astype(np.float32))


def test_load_state_dict_is_in_place():
  # a reference taken before loading (as an optimizer holds) sees the loaded values
  layer = nn.Linear(3, 2)
  w = layer.weight
  new = get_state_dict(nn.Linear(3, 2))
  load_state_dict(layer, new)
  np.testing.assert_array_equal(w.numpy(), new["weight"].numpy())


def test_fashion_mnist():
  import os
  from tg.nn.datasets import mnist
  if not os.path.isdir("/usr/share/datasets/fashion-mnist"): pytest.skip("Debian's dataset-fashion-mnist is not installed")
  X_train, Y_train, X_test, Y_test = mnist(fashion=True)
  assert X_train.shape == (60000, 1, 28, 28) and X_train.dtype == dtypes.uint8
  assert Y_train.shape == (60000,) and X_test.shape == (10000, 1, 28, 28) and Y_test.shape == (10000,)
  y = Y_test.numpy()
  assert y.min() == 0 and y.max() == 9 and np.bincount(y).tolist() == [1000] * 10  # the test set is balanced


def test_sgd_requires_training():
  # as tinygrad: an optimizer step outside Tensor.training is an error (and changes nothing)
  w = Tensor([1.0, 2.0], requires_grad=True)
  opt = SGD([w], lr=0.1)
  (w * w).sum().backward()
  prev = Tensor.training
  Tensor.training = False
  try:
    with pytest.raises(RuntimeError):
      opt.step()
  finally:
    Tensor.training = prev
  np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])


def test_train_context_manager():
  assert Tensor.training is False
  with Tensor.train():
    assert Tensor.training is True
  assert Tensor.training is False
