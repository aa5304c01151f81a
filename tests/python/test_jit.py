"""TinyJit from Python, tinygrad's usage: @TinyJit def step(...): ...; step(x).numpy(). Replays do no engine
work; tinygrad's footguns (test/unit/test_jit_footguns.py) either work here or raise JitError."""
import numpy as np
import pytest

from tg import Context, GlobalCounters, JitError, Tensor, TinyJit, nn


def test_replay_schedules_lowers_and_compiles_nothing():
  @TinyJit
  def step(x, w): return (x @ w).relu().sum(axis=1)

  w = Tensor(np.arange(12, dtype=np.float32).reshape(4, 3))
  xs = [Tensor(np.full((2, 4), i, dtype=np.float32)).realize() for i in range(23)]
  for x in xs[:3]: step(x, w)
  assert step.cnt == 3 and step.captured_kernels >= 1
  GlobalCounters.reset()
  outs = [step(x, w) for x in xs[3:]]
  assert (GlobalCounters.schedules, GlobalCounters.lowered, GlobalCounters.compiles) == (0, 0, 0)
  for i, o in zip(range(3, 23), outs):
    np.testing.assert_allclose(o.numpy(), np.full(2, i * 66.0, dtype=np.float32))


def test_training_matches_jit_off():
  def train(jit):
    with Context(JIT=int(jit)):
      Tensor.manual_seed(3)
      l1, bn, l2 = nn.Linear(6, 12), nn.BatchNorm(12), nn.Linear(12, 3)
      params = nn.state.get_parameters([l1, bn, l2])
      opt = nn.optim.Adam(params, lr=1e-2)
      X, Y = Tensor.randn(32, 6).realize(), Tensor.randint(32, high=3).realize()

      @TinyJit
      @Tensor.train()
      def step():
        opt.zero_grad()
        idx = Tensor.randint(8, high=32)
        loss = l2(bn(l1(X[idx])).relu().dropout(0.2)).sparse_categorical_crossentropy(Y[idx]).backward()
        return loss.realize(*opt.schedule_step())
      losses = [step().item() for _ in range(6)]
      return losses, [p.numpy().copy() for p in params]
  (a, pa), (b, pb) = train(True), train(False)
  assert a == b
  for x, y in zip(pa, pb): np.testing.assert_array_equal(x, y)


# ---- tinygrad's footguns, working ---------------------------------------------------------------------

def test_outputs_never_alias():
  @TinyJit
  def f(x): return x.sum().realize()
  r = [f(Tensor([i, i])) for i in (1, 2, 3, 4)]
  assert [t.item() for t in r] == [2, 4, 6, 8]  # tinygrad: [2, 8, 6, 8]


def test_random_advances():
  @TinyJit
  def f(x): return (x + Tensor.rand(3)).realize()
  assert len({tuple(f(Tensor([0, 0, 0])).numpy().tolist()) for _ in range(6)}) == 6


def test_input_mutation():
  @TinyJit
  def f(x):
    x += 1
    x.realize()
    return x
  a = Tensor([0]).contiguous().realize()
  for _ in range(5): f(a)
  assert a.item() == 5


def test_implicit_inputs_are_read_each_call():
  x = Tensor([0]).contiguous().realize()

  @TinyJit
  def f(): return (x * 2).realize()
  for i in range(5):
    x.assign(Tensor([i])).realize()
    assert f().item() == i * 2


def test_method_jit_is_per_instance():  # tinygrad shares one capture per class
  class Model:
    def __init__(self, scale): self.scale = Tensor([scale])
    @TinyJit
    def forward(self, x): return (x * self.scale).realize()
  m1, m2 = Model(2), Model(3)
  for _ in range(3): assert m1.forward(Tensor([5])).item() == 10
  for _ in range(3): assert m2.forward(Tensor([5])).item() == 15


def test_kwargs_containers_and_structures():
  @TinyJit
  def f(first, second, arr, scale=1): return {"q": (first / second).realize(), "both": [first + arr[0], None]}
  for i in range(4):
    a, b, c = Tensor.randn(5).realize(), Tensor.randn(5).realize() + 3, Tensor.full((5,), float(i)).contiguous().realize()
    out = f(second=b, first=a, arr=[c]) if i % 2 else f(a, b, [c])
    np.testing.assert_allclose(out["q"].numpy(), a.numpy() / b.numpy(), rtol=1e-5)
    np.testing.assert_allclose(out["both"][0].numpy(), a.numpy() + i)
    assert out["both"][1] is None


# ---- JitError, naming the function and the argument ----------------------------------------------------

def test_shape_and_view_changes_raise():
  @TinyJit
  def add(a, b): return (a + b).realize()
  add(Tensor.randn(10, 10), Tensor.randn(10, 10))
  add(Tensor.randn(10, 10), Tensor.randn(10, 10))
  with pytest.raises(JitError, match="add: argument 0 is shape \\(20, ?20,?\\)"):
    add(Tensor.randn(20, 20), Tensor.randn(20, 20))
  base = Tensor.randn(10, 10).realize()

  @TinyJit
  def g(a): return (a + 1).realize()
  with pytest.raises(JitError, match="g: argument 0"):
    for i in range(1, 5): g(base[:, i:i + 2])


def test_nothing_realized_nested_and_reads_raise():
  @TinyJit
  def nothing(a, b): return None
  with pytest.raises(JitError, match="realized nothing"):
    for _ in range(3): nothing(Tensor([1]), Tensor([2]))

  @TinyJit
  def inner(t): return t + 1

  @TinyJit
  def outer(t): return inner(t) * 3
  assert outer(Tensor([1])).item() == 6
  with pytest.raises(JitError, match="inner: called during the capture of outer"):
    outer(Tensor([2]))

  for read in (lambda x: Tensor.zeros(int(x.sum().item())), lambda x: Tensor(x.tolist()), lambda x: Tensor(x.numpy())):
    f = TinyJit(read, name="reads")
    f(Tensor([1, 1, 1]))
    with pytest.raises(JitError, match="reads: item\\(\\)/tolist\\(\\)/numpy\\(\\)/bytes\\(\\) during the TinyJit capture"):
      f(Tensor([1, 1, 1]))


def test_duplicate_const_and_non_tensor_outputs_raise():
  @TinyJit
  def f(a, b): return (a + b).realize()
  x = Tensor([1, 2, 3])
  with pytest.raises(JitError, match="f: arguments 0 and 1 are the same buffer"):
    f(x, x)
  with pytest.raises(JitError, match="f: argument 1 .*constant"):
    f(Tensor([1, 2, 3]).realize(), Tensor(2))

  @TinyJit
  def g(x, mult): return (x * 2).realize(), mult * 10
  with pytest.raises(JitError, match="g: returned a int"):
    for i in range(3): g(Tensor([i]), i)


def test_jit_error_is_a_runtime_error():
  assert issubclass(JitError, RuntimeError)


def test_jit_zero_runs_the_function_each_call():
  calls = []
  with Context(JIT=0):
    @TinyJit
    def f(x):
      calls.append(1)
      return x * 2
    for i in range(4): assert f(Tensor([i])).item() == 2 * i
  assert len(calls) == 4
