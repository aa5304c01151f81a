"""Reference weight files for tests/test_state.cpp, written (and read back) by NumPy alone.

  make_safetensors.py write <dir>   writes ref.safetensors and one <dtype>.npy a dtype, plus format variants
  make_safetensors.py check <dir>   reads tg_out.safetensors and tg_<dtype>.npy written by tg; exit 1 on mismatch

safetensors is written by hand (json + struct), as python3-safetensors is not in Debian. The values
are a formula of the flat index that the C++ test recomputes (values_for there).
"""
import json
import struct
import sys

import numpy as np

# name -> (numpy dtype, safetensors dtype)
DTYPES = {"float32": ("<f4", "F32"), "float64": ("<f8", "F64"), "float16": ("<f2", "F16"), "int8": ("|i1", "I8"),
          "uint8": ("|u1", "U8"), "int16": ("<i2", "I16"), "uint16": ("<u2", "U16"), "int32": ("<i4", "I32"),
          "uint32": ("<u4", "U32"), "int64": ("<i8", "I64"), "uint64": ("<u8", "U64"), "bool": ("|b1", "BOOL")}
SHAPE = (2, 3)


def values(name, n):
  i = np.arange(n, dtype=np.int64)
  if name.startswith("float"): return (i - 3) * 0.375
  if name == "bool": return i % 3 == 0
  if name in ("int64",): return (i - 3) * (1 << 33) + 7
  if name == "uint64": return i * (1 << 35) + 1
  if name.startswith("uint"): return i * 13 + 100
  return i * 7 - 20


def array(name, shape=SHAPE):
  n = int(np.prod(shape))
  return values(name, n).astype(DTYPES[name][0]).reshape(shape)


def write_safetensors(path, tensors, metadata=None):
  header, blobs, off = {}, [], 0
  if metadata: header["__metadata__"] = metadata
  for k, a in tensors.items():
    b = np.ascontiguousarray(a).tobytes()
    header[k] = {"dtype": DTYPES[a.dtype.name][1], "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
    blobs.append(b)
    off += len(b)
  h = json.dumps(header).encode()
  with open(path, "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def write(d):
  tensors = {name: array(name) for name in DTYPES}
  tensors["scalar"] = np.array(2.5, dtype=np.float32)
  tensors["empty"] = np.zeros((0, 3), dtype=np.float32)
  tensors["layer.weight"] = array("float32", (4, 2))
  write_safetensors(f"{d}/ref.safetensors", tensors, {"format": "pt", "note": "numpy"})
  for name in DTYPES: np.save(f"{d}/{name}.npy", array(name))
  np.save(f"{d}/scalar.npy", np.array(2.5, dtype=np.float32))
  np.save(f"{d}/empty.npy", np.zeros((0, 3), dtype=np.float32))
  np.save(f"{d}/fortran.npy", np.asfortranarray(array("float32", (3, 4))))
  np.save(f"{d}/bigendian.npy", array("float32").astype(">f4"))
  np.save(f"{d}/structured.npy", np.zeros(3, dtype=[("a", "<f4"), ("b", "<i4")]))
  with open(f"{d}/v2.npy", "wb") as f: np.lib.format.write_array(f, array("float32", (3, 4)), version=(2, 0))
  with open(f"{d}/v3.npy", "wb") as f: np.lib.format.write_array(f, array("int32", (3, 4)), version=(3, 0))


def read_safetensors(path):
  with open(path, "rb") as f: raw = f.read()
  n = struct.unpack("<Q", raw[:8])[0]
  header, data = json.loads(raw[8:8 + n]), raw[8 + n:]
  inv = {v[1]: v[0] for v in DTYPES.values()}
  out = {}
  for k, v in header.items():
    if k == "__metadata__": continue
    b, e = v["data_offsets"]
    out[k] = np.frombuffer(data[b:e], dtype=inv[v["dtype"]]).reshape(v["shape"])
  return out, header.get("__metadata__")


def check(d):
  bad = []
  got, meta = read_safetensors(f"{d}/tg_out.safetensors")
  if meta != {"written_by": "tg"}: bad.append(f"metadata {meta}")
  for name in DTYPES:
    if not np.array_equal(got[name], array(name)): bad.append(f"safetensors {name}: {got[name]}")
    a = np.load(f"{d}/tg_{name}.npy")
    if a.dtype != array(name).dtype or not np.array_equal(a, array(name)): bad.append(f"npy {name}: {a.dtype} {a}")
  s = np.load(f"{d}/tg_scalar.npy")
  if s.shape != () or s != np.float32(2.5): bad.append(f"npy scalar {s!r}")
  if bad:
    print("\n".join(bad))
    sys.exit(1)


if __name__ == "__main__":
  {"write": write, "check": check}[sys.argv[1]](sys.argv[2])
