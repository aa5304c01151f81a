# nn.state.torch_load reads the files Debian's python3-torch writes with torch.save, in both formats (the
# zip archive and the legacy stream, _use_new_zipfile_serialization=False), without torch and without
# running the file's pickle: state dicts into tg nn models equal to torch's tensors, every storage dtype,
# strided and shared storages, nested checkpoints; and truncated, corrupt and malicious files are clear
# errors that run nothing.
import io
import os
import pickle
import zipfile

import numpy as np
import pytest
import torch

import tg
from tg import Tensor, nn, dtypes
from tg.nn.state import torch_load, load_state_dict, get_state_dict

FORMATS = {"zip": True, "legacy": False}


def save(obj, path, fmt):
  torch.save(obj, str(path), _use_new_zipfile_serialization=FORMATS[fmt])
  return path


def assert_same(got, want, name=""):
  assert isinstance(got, Tensor), f"{name}: {type(got).__name__}"
  w = want.detach()
  if w.dtype == torch.bfloat16: w = w.float()  # bfloat16 loads as float32
  assert got.shape == tuple(w.shape), f"{name}: {got.shape} != {tuple(w.shape)}"
  assert got.dtype.name == str(w.dtype).replace("torch.", ""), f"{name}: {got.dtype} vs {w.dtype}"
  np.testing.assert_array_equal(got.numpy(), w.numpy(), err_msg=name)


class TorchNet(torch.nn.Module):
  def __init__(self):
    super().__init__()
    self.conv = torch.nn.Conv2d(1, 4, 3)
    self.bn = torch.nn.BatchNorm2d(4)
    self.fc = torch.nn.Linear(4 * 4 * 4, 10)
  def forward(self, x): return self.fc(torch.relu(self.bn(self.conv(x))).flatten(1))


class TgNet:
  def __init__(self): self.conv, self.bn, self.fc = nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.Linear(4 * 4 * 4, 10)
  def __call__(self, x): return self.fc(self.bn(self.conv(x)).relu().flatten(1))


@pytest.mark.parametrize("fmt", FORMATS)
def test_state_dict_into_model(tmp_path, fmt):
  torch.manual_seed(0)
  tm = TorchNet()
  tm.train()
  tm(torch.randn(8, 1, 6, 6))  # running statistics that are not the defaults
  tm.eval()
  path = save(tm.state_dict(), tmp_path / "net.pth", fmt)
  sd = torch_load(path)
  assert list(sd) == list(tm.state_dict())  # the file's order
  for k, v in tm.state_dict().items(): assert_same(sd[k], v, k)
  model = TgNet()
  load_state_dict(model, sd)
  for k, v in get_state_dict(model).items():
    want = tm.state_dict()[k]
    np.testing.assert_array_equal(v.numpy().reshape(want.shape), want.numpy().astype(v.numpy().dtype), err_msg=k)
  x = np.random.RandomState(0).randn(2, 1, 6, 6).astype(np.float32)
  with torch.no_grad(): want = tm(torch.tensor(x)).numpy()
  np.testing.assert_allclose(model(Tensor(x)).numpy(), want, atol=1e-5, rtol=1e-4)


def _many_tensors():
  g = torch.Generator().manual_seed(1)
  base = torch.randn(4, 6, generator=g)
  return {
    "f32": base, "f64": base.double(), "f16": base.half(), "bf16": base.bfloat16(), "i64": torch.arange(-5, 7),
    "i32": torch.arange(6, dtype=torch.int32).reshape(2, 3), "i16": torch.tensor([-3, 300], dtype=torch.int16),
    "i8": torch.tensor([-128, 127], dtype=torch.int8), "u8": torch.tensor([0, 255], dtype=torch.uint8), "bool": base > 0,
    "transposed": base.t(), "sliced": base[1:3, ::2], "row": base[2], "scalar": torch.tensor(3.5), "empty": torch.zeros(0, 3),
    "permuted": torch.randn(2, 3, 4, generator=g).permute(2, 0, 1), "expanded": torch.tensor([1.0, 2.0]).expand(3, 2),
  }


@pytest.mark.parametrize("fmt", FORMATS)
def test_dtypes_and_views(tmp_path, fmt):
  want = _many_tensors()
  got = torch_load(save(want, tmp_path / "t.pt", fmt))
  assert set(got) == set(want)
  for k, v in want.items(): assert_same(got[k], v, k)
  assert got["bf16"].dtype == dtypes.float32


@pytest.mark.parametrize("fmt", FORMATS)
def test_checkpoint_structure(tmp_path, fmt):
  t = torch.arange(6.0).reshape(2, 3)
  ckpt = {"model": {"w": t, "b": t[0]}, "epoch": 7, "lr": 0.125, "betas": (0.9, 0.999), "name": "run-ü", "raw": b"\x00\xffab",
          "big": 2 ** 70, "neg": -(2 ** 40), "none": None, "flag": True, "layers": [t, t * 2], "ids": {3: "three"},
          "param": torch.nn.Parameter(torch.ones(2))}
  got = torch_load(save(ckpt, tmp_path / "ckpt.pth", fmt))
  assert got["epoch"] == 7 and got["lr"] == 0.125 and got["betas"] == (0.9, 0.999) and got["name"] == "run-ü"
  assert got["raw"] == b"\x00\xffab" and got["big"] == 2 ** 70 and got["neg"] == -(2 ** 40) and got["none"] is None
  assert got["flag"] is True and got["ids"] == {3: "three"}
  assert_same(got["model"]["w"], t)
  assert_same(got["model"]["b"], t[0])
  assert_same(got["layers"][1], t * 2)
  assert_same(got["param"], torch.ones(2))


def test_tensors_default_device(tmp_path):
  got = torch_load(save({"a": torch.ones(2)}, tmp_path / "a.pth", "zip"))
  assert got["a"].device == tg.Device.DEFAULT


# ---- bad files: clear errors, nothing run ------------------------------------------------------------------
class Evil:
  def __init__(self, marker): self.marker = marker
  def __reduce__(self): return (os.system, (f"touch {self.marker}",))


class EvalEvil:
  def __reduce__(self): return (eval, ("__import__('os').getcwd()",))


def _zip_with_pickle(path, pkl_bytes, compression=zipfile.ZIP_STORED):
  with zipfile.ZipFile(path, "w", compression=compression) as z:
    z.writestr("archive/data.pkl", pkl_bytes)
    z.writestr("archive/version", "3\n")
  return path


def _legacy_with_pickle(path, obj):
  with open(path, "wb") as f:
    for o in (0x1950a86a20f9469cfc6c, 1001, {"protocol_version": 1001, "little_endian": True}): pickle.dump(o, f, protocol=2)
    pickle.dump(obj, f, protocol=2)
    pickle.dump([], f, protocol=2)
  return path


@pytest.mark.parametrize("container", ["zip", "legacy", "bare"])
@pytest.mark.parametrize("payload", ["system", "eval"])
def test_malicious_pickle_runs_nothing(tmp_path, container, payload):
  marker = tmp_path / "PWNED"
  obj = {"weight": Evil(str(marker)) if payload == "system" else EvalEvil()}
  path = tmp_path / "evil.pth"
  if container == "zip": _zip_with_pickle(path, pickle.dumps(obj, protocol=2))
  elif container == "legacy": _legacy_with_pickle(path, obj)
  else: path.write_bytes(pickle.dumps(obj, protocol=2))
  with pytest.raises(tg.TensorValueError, match="does not allow") as e:
    torch_load(path)
  assert ("system" in str(e.value)) if payload == "system" else ("eval" in str(e.value))
  assert isinstance(e.value, RuntimeError)
  assert not marker.exists()


def test_pickled_module_is_refused(tmp_path):
  path = tmp_path / "module.pth"
  torch.save(torch.nn.Linear(2, 2), str(path))  # the whole module: its class is named in the pickle
  with pytest.raises(ValueError, match="torch.nn.modules.linear.Linear"):
    torch_load(path)


@pytest.mark.parametrize("fmt", FORMATS)
def test_truncated_files(tmp_path, fmt):
  full = save({"a": torch.arange(12.0).reshape(3, 4), "b": torch.ones(5, dtype=torch.int64)}, tmp_path / "full.pth", fmt).read_bytes()
  cuts = sorted(set(list(range(0, len(full), max(1, len(full) // 60))) + [len(full) - 1, len(full) - 8, 1, 2]))
  for n in cuts:
    p = tmp_path / "cut.pth"
    p.write_bytes(full[:n])
    with pytest.raises((ValueError, OSError)) as e:
      torch_load(p)
    assert str(e.value).startswith("torch_load:"), (n, str(e.value))
  assert set(torch_load(tmp_path / "full.pth")) == {"a", "b"}


def test_corrupt_files(tmp_path):
  def expect(data, match):
    p = tmp_path / "bad.pth"
    p.write_bytes(data)
    with pytest.raises(ValueError, match=match):
      torch_load(p)
  expect(b"", "not a file torch.save wrote|truncated")
  expect(os.urandom(0) + b"\x00" * 100, "opcode")
  expect(b"\x80\x02K\x05.", "not a file torch.save wrote")  # a pickle of 5, nothing else
  expect(b"\x80\x02(]q\x00.", "open MARK")
  expect(b"\x80\x02h\x05.", "memo entry 5")
  expect(b"\x80\x06N.", "protocol 6")
  expect(b"\x80\x02ccollections\nOrderedDict\n(K\x01tR.", "OrderedDict")  # called with arguments
  buf = io.BytesIO()
  _zip_with_pickle(buf, pickle.dumps({"a": 1}, protocol=2), compression=zipfile.ZIP_DEFLATED)
  expect(buf.getvalue(), "compressed")
  buf = io.BytesIO()
  with zipfile.ZipFile(buf, "w") as z: z.writestr("archive/other", "x")
  expect(buf.getvalue(), "without data.pkl")
  # a storage the pickle names but the archive lacks
  good = tmp_path / "good.pth"
  torch.save({"a": torch.ones(3)}, str(good))
  with zipfile.ZipFile(good) as z: members = {n: z.read(n) for n in z.namelist()}
  buf = io.BytesIO()
  with zipfile.ZipFile(buf, "w") as z:
    for n, d in members.items():
      if "/data/" not in n: z.writestr(n, d)
  expect(buf.getvalue(), "has no member")


def test_missing_file():
  with pytest.raises(OSError, match="torch_load"):
    torch_load("/nonexistent/model.pth")
