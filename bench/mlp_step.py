# The Fashion-MNIST MLP training step (784-256-10, ReLU, Adam 1e-3, batch 128 picked by a random index)
# in PyTorch, 2 threads: the reference for examples/fashion_mnist.cpp. Run by scripts/bench_mlp.sh under
# Debian's /usr/bin/python3. Prints the mean step time of steps 101..600.
import glob, gzip, time

import numpy as np
import torch

torch.set_num_threads(2)
torch.manual_seed(0)
def load(p, off): return np.frombuffer(gzip.open(p).read(), np.uint8, offset=off)
d = [p for p in glob.glob('/usr/share/**/train-images-idx3-ubyte.gz', recursive=True) if 'fashion' in p.lower()][0].rsplit('/',1)[0]
X = torch.tensor(load(d+'/train-images-idx3-ubyte.gz', 16).reshape(-1, 784).astype(np.float32) / 255.0)
Y = torch.tensor(load(d+'/train-labels-idx1-ubyte.gz', 8).astype(np.int64))
model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
opt = torch.optim.Adam(model.parameters(), 1e-3)
def step():
  s = torch.randint(0, X.shape[0], (128,))
  loss = torch.nn.functional.cross_entropy(model(X[s]), Y[s])
  opt.zero_grad(); loss.backward(); opt.step()
  return loss
for _ in range(100): step()  # warm-up, as tg's first 100 steps include compiling
t = time.perf_counter()
for _ in range(500): l = step()
l.item()
print(f"torch MLP step: {(time.perf_counter()-t)*1e3/500:.2f} ms")
