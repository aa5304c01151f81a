// The random program generator (tests/diff): its state, and the helpers that its random steps
// (generate.cpp) and its motifs (motifs.cpp: reduce chains, groups of outputs over one loop nest) share.
// Internal to the diff tests: generate(seed) in program.h is the interface.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "program.h"

namespace tgdiff::gen {

// splitmix64: portable and fully specified, so a seed means the same program everywhere.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  int64_t range(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1)); }
  double unif() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  bool chance(double p) { return unif() < p; }
  template <class T> const T& pick(const std::vector<T>& v) { return v[static_cast<size_t>(range(0, static_cast<int64_t>(v.size()) - 1))]; }
  int weighted(const std::vector<double>& w) {
    double total = 0;
    for (double x : w) total += x;
    double u = unif() * total;
    for (size_t i = 0; i < w.size(); i++) {
      if (u < w[i]) return static_cast<int>(i);
      u -= w[i];
    }
    return static_cast<int>(w.size()) - 1;
  }
};

// The broadcast shape of a and b; nullopt when they do not broadcast.
std::optional<Shape> broadcast(const Shape& a, const Shape& b);

inline constexpr int64_t kCap = 64;  // elements per value: keeps kernels and the reference cheap
inline const std::vector<DT> kInputDTs = {DT::F32, DT::F64, DT::F16, DT::I32, DT::I64, DT::I8, DT::U8, DT::Bool};
inline const std::vector<double> kInputDTWeights = {33, 10, 12, 15, 8, 8, 7, 7};

// One program's generation: run() draws inputs, random steps and motifs from the seed.
class Gen {
 public:
  explicit Gen(uint64_t seed) : r_{seed * 0x2545f4914f6cdd1dull + 0x1234567ull} { p_.seed = seed; }
  Program run();

 private:
  Rng r_;
  Program p_;

  bool in_motif_ = false;
  std::vector<bool> from_motif_;  // per node
  int steps_last_ = 0;            // the newest value of the random steps (motifs aside)

  const Node& node(int id) const { return p_.nodes[static_cast<size_t>(id)]; }
  int last() const { return static_cast<int>(p_.nodes.size()) - 1; }
  void output(int id);
  DT random_dtype() { return kInputDTs[static_cast<size_t>(r_.weighted(kInputDTWeights))]; }
  Shape random_shape();
  int push(Node n);
  static Node mk(const std::string& kind, std::vector<int> args, DT dtype, DT cdtype, Shape shape);

  // Input values are exactly representable in their dtype (float16: multiples of 1/1024 in [-2, 2] or of
  // 1/16), so every consumer reads the same numbers; a few tensors get NaN, infinities, huge and
  // subnormal values, and integer tensors their extremes (to exercise wrap-around).
  int add_input(Shape shape, DT d, bool tame = false);

  // Half of the time the random steps' newest value (chains), else any earlier one (shared subgraphs).
  // The steps read a motif's values now and then: mostly they go on as without motifs, whose float
  // values would crowd out the other dtypes' ops.
  int pick() { return r_.chance(0.5) ? steps_last_ : r_.pick(earlier()); }
  std::vector<int> earlier();

  // A shape that broadcasts with `a`: some dims 1, fewer or more leading dims, 0-d.
  Shape variant(const Shape& a);

  // A second operand for `a`: an earlier value that broadcasts with it, or a fresh input.
  int partner(int a);

  double random_value(DT d);
  void step();

  // ---- elementwise ----------------------------------------------------------------------------------
  bool unary(int a);

  // C leaves float -> int conversion undefined for NaN and values out of the target's range, so such a
  // cast is preceded by NaN -> 0 and a clip into the range (in bounds exact in the source dtype).
  bool cast(int a, DT to);

  bool binary(int a);

  // tensor op C++ scalar (tinygrad's rule: an int keeps an int or float tensor's dtype; a float keeps a
  // float tensor's; otherwise the scalar is int32 / float32 and the usual promotion applies).
  bool scalar(int a);

  // ---- reductions -----------------------------------------------------------------------------------
  bool reduce(int a);
  bool arg_or_scan(int a);  // argmax / argmin (int32 indices) or cumsum, over one axis or (arg) all
  bool pool(int a);         // max_pool2d / avg_pool2d: a square window, stride, padding and dilation
  bool normalize(int a);    // the API's own softmax, log_softmax, logsumexp, var, std (fused row kernels)

  // The axes argument that names the axes `red`: some counted from the end, in either order.
  std::vector<int64_t> axes_arg(const std::vector<bool>& red);

  // a.op(ints, keepdim), where `red` marks the axes that ints names, with tinygrad's result dtype.
  int reduce_over(const std::string& op, int a, std::vector<int64_t> ints, const std::vector<bool>& red, bool keepdim);

  // ---- motifs: reduce chains and multi-output groups ------------------------------------------------
  // What the scheduler's reduce-then-broadcast fusion meets: a reduce whose result is broadcast back
  // over its own input, chained, and several outputs over one loop nest.

  // rank 1 to 4, some dims 1, at least one not
  Shape motif_shape();

  // What a motif starts from: mostly a fresh float input without NaN and infinities (so that the motif's
  // values mean something), else an earlier value of a few elements and no zero-size dims (max over one
  // is an error), cast to float32 if it is not float.
  int motif_source();

  // Axes of shape s to reduce: the last, the first, a middle one, several, or all; mostly including a dim
  // > 1, so that broadcasting the result back is a broadcast.
  std::vector<bool> random_mask(const Shape& s);

  // a.op over the axes `red`; all of them are sometimes named by no axes at all
  int reduce_mask(const std::string& op, int a, const std::vector<bool>& red, bool keepdim);

  // r, a reduce over the axes `red` of a value of shape s, made to broadcast against s again: keepdim's
  // 1s as they are, or the reduced shape reshaped / unsqueezed back; then sometimes an explicit expand.
  int back(int r, const std::vector<bool>& red, const Shape& s);

  // Elementwise ops on float values (all a motif computes in): the operands' promoted dtype.
  int ew(const std::string& op, int a, int b);

  int un(const std::string& op, int a) { return push(mk(op, {a}, node(a).dtype, node(a).dtype, node(a).shape)); }
  int sc(const std::string& op, int a, double v);
  int permuted(int a, const std::vector<int64_t>& order, const Shape& s);
  double eps() { return r_.pick(std::vector<double>{1e-5, 1e-3, 0.1}); }

  // A reduce chain the way softmax, log_softmax, logsumexp, var and layernorm are built, its steps drawn
  // at random: r = x.op(axes); y = f(x, r broadcast back); mostly a second reduce of y, over the same axes
  // or others, its result maybe transformed and broadcast back into y or x; sometimes a third reduce.
  // Only values > 0 free of cancellation (`pos`) are divided by, logged or square-rooted, and a reduce of
  // squares after adding an eps: so the chain's values stay finite and well conditioned.
  void reduce_chain();

  // Several outputs over one loop nest (realized together, mostly): reduces of one value over the same
  // axes (mean and variance, sum and max...), or an optimizer's update of several buffers.
  void multi_output();

  // New values of same-shape buffers from one gradient, all outputs: Adam (with L2 or decoupled weight
  // decay) or SGD with momentum (maybe Nesterov's).
  void optimizer_step();

  // ---- movement -------------------------------------------------------------------------------------
  Shape reshape_target(int64_t n);
  bool movement(int a);
  bool cat_stack(int a);

  // ---- matmul ---------------------------------------------------------------------------------------
  bool dot(int a);

  // ---- constants and where --------------------------------------------------------------------------
  bool full_where(int a);
};

}  // namespace tgdiff::gen
