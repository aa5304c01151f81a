// Property test for movement ops: random chains of reshape / permute / expand / shrink / pad / flip over
// random small shapes and several dtypes, realized through tolist(), compared element by element with a
// reference that applies the same ops to a plain vector with explicit index bookkeeping: every element
// must read exactly its source index (or be padding). A pure movement chain over a realized buffer must
// cost at most one kernel (the contiguous copy), and none when the result is the whole buffer in its own
// order; both expectations come from the reference, not from the implementation's view algebra.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tg/helpers.h"
#include "tg/tensor.h"

using namespace tg;

namespace {

// The reference: a row-major array of source indices (-1 = padding) with its shape. Values are derived
// from the source index at the end, so one reference serves every dtype.
struct Ref {
  Shape shape;
  std::vector<int64_t> idx;
};

int64_t numel_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Builds an array of shape `out` where each element is `src(multi-index)` (a source index or -1).
Ref build(const Shape& out, const std::function<int64_t(const std::vector<int64_t>&)>& src) {
  Ref r{out, {}};
  int64_t n = numel_of(out);
  r.idx.reserve(static_cast<size_t>(n));
  std::vector<int64_t> i(out.size(), 0);
  for (int64_t k = 0; k < n; k++) {
    r.idx.push_back(src(i));
    for (int d = static_cast<int>(out.size()) - 1; d >= 0; d--) {  // odometer: last dim fastest
      if (++i[d] < out[d]) break;
      i[d] = 0;
    }
  }
  return r;
}

int64_t flat(const Shape& s, const std::vector<int64_t>& i) {
  int64_t f = 0;
  for (size_t d = 0; d < s.size(); d++) f = f * s[d] + i[d];
  return f;
}

Ref ref_reshape(const Ref& a, const Shape& s) { return Ref{s, a.idx}; }

Ref ref_permute(const Ref& a, const std::vector<int>& order) {
  Shape out;
  for (int o : order) out.push_back(a.shape[o]);
  return build(out, [&](const std::vector<int64_t>& i) {
    std::vector<int64_t> j(a.shape.size());
    for (size_t d = 0; d < order.size(); d++) j[order[d]] = i[d];
    return a.idx[flat(a.shape, j)];
  });
}

Ref ref_expand(const Ref& a, const Shape& out) {
  return build(out, [&](const std::vector<int64_t>& i) {
    std::vector<int64_t> j(i);
    for (size_t d = 0; d < j.size(); d++) if (a.shape[d] == 1) j[d] = 0;
    return a.idx[flat(a.shape, j)];
  });
}

Ref ref_shrink(const Ref& a, const std::vector<std::pair<int64_t, int64_t>>& b) {
  Shape out;
  for (auto [s, e] : b) out.push_back(e - s);
  return build(out, [&](const std::vector<int64_t>& i) {
    std::vector<int64_t> j(i);
    for (size_t d = 0; d < j.size(); d++) j[d] += b[d].first;
    return a.idx[flat(a.shape, j)];
  });
}

Ref ref_pad(const Ref& a, const std::vector<std::pair<int64_t, int64_t>>& p) {
  Shape out;
  for (size_t d = 0; d < p.size(); d++) out.push_back(a.shape[d] + p[d].first + p[d].second);
  return build(out, [&](const std::vector<int64_t>& i) -> int64_t {
    std::vector<int64_t> j(i);
    for (size_t d = 0; d < j.size(); d++) {
      j[d] -= p[d].first;
      if (j[d] < 0 || j[d] >= a.shape[d]) return -1;
    }
    return a.idx[flat(a.shape, j)];
  });
}

Ref ref_flip(const Ref& a, const std::vector<int>& axes) {
  return build(a.shape, [&](const std::vector<int64_t>& i) {
    std::vector<int64_t> j(i);
    for (int ax : axes) j[ax] = a.shape[ax] - 1 - j[ax];
    return a.idx[flat(a.shape, j)];
  });
}

std::string str(const Shape& s) {
  std::ostringstream o;
  o << "(";
  for (size_t i = 0; i < s.size(); i++) o << (i ? "," : "") << s[i];
  o << ")";
  return o.str();
}
template <class T> std::string strv(const std::vector<T>& v) {
  std::ostringstream o;
  o << "[";
  for (size_t i = 0; i < v.size(); i++) o << (i ? "," : "") << v[i];
  o << "]";
  return o.str();
}
std::string strp(const std::vector<std::pair<int64_t, int64_t>>& v) {
  std::ostringstream o;
  o << "[";
  for (size_t i = 0; i < v.size(); i++) o << (i ? "," : "") << "(" << v[i].first << "," << v[i].second << ")";
  o << "]";
  return o.str();
}

constexpr int64_t kMaxNumel = 1500;  // keeps every case small (expand and pad grow the tensor)

// A random chain applied to both the tensor and the reference. `desc` receives a readable op list.
struct Chain {
  std::mt19937& rng;
  std::string desc;

  int rnd(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

  // A random shape of rank 1..4 with the given number of elements (prime factors dealt out, 1s inserted).
  Shape random_factorization(int64_t n) {
    std::vector<int64_t> primes;
    for (int64_t p = 2; n > 1; p++)
      while (n % p == 0) { primes.push_back(p); n /= p; }
    int rank = rnd(1, 4);
    Shape s(rank, 1);
    for (int64_t p : primes) s[rnd(0, rank - 1)] *= p;
    return s;
  }

  // One random op, applied to every tensor in ts (the same chain over several sources) and to r.
  void step(std::vector<Tensor>& ts, Ref& r) {
    auto apply = [&](const std::function<Tensor(const Tensor&)>& f) { for (Tensor& t : ts) t = f(t); };
    std::ostringstream o;
    int rank = static_cast<int>(r.shape.size());
    switch (rnd(0, 5)) {
      case 0: {  // reshape, sometimes with -1
        Shape s = random_factorization(numel_of(r.shape));
        Shape arg = s;
        if (rnd(0, 2) == 0) arg[rnd(0, static_cast<int>(arg.size()) - 1)] = -1;
        apply([&](const Tensor& t) { return t.reshape(arg); });
        r = ref_reshape(r, s);
        o << "reshape" << str(arg);
        break;
      }
      case 1: {  // permute
        std::vector<int> order(rank);
        for (int i = 0; i < rank; i++) order[i] = i;
        std::shuffle(order.begin(), order.end(), rng);
        apply([&](const Tensor& t) { return t.permute(order); });
        r = ref_permute(r, order);
        o << "permute" << strv(order);
        break;
      }
      case 2: {  // expand the size-1 dims (falls back to adding a size-1 dim via reshape first)
        bool has1 = std::count(r.shape.begin(), r.shape.end(), 1) > 0;
        if (!has1 && rank < 4) {
          Shape s = r.shape;
          s.insert(s.begin() + rnd(0, rank), 1);
          apply([&](const Tensor& t) { return t.reshape(s); });
          r = ref_reshape(r, s);
          o << "reshape" << str(s) << " ";
          rank++;
        }
        Shape out = r.shape, arg = r.shape;
        int64_t n = numel_of(r.shape);
        for (int d = 0; d < rank; d++) {
          if (r.shape[d] == 1) {
            int64_t e = rnd(1, 4);
            if (n * e > kMaxNumel) e = 1;
            n *= e;
            out[d] = arg[d] = e;
          } else if (rnd(0, 1)) {
            arg[d] = -1;
          }
        }
        apply([&](const Tensor& t) { return t.expand(arg); });
        r = ref_expand(r, out);
        o << "expand" << str(arg);
        break;
      }
      case 3: {  // shrink (never to an empty dim)
        std::vector<std::pair<int64_t, int64_t>> b;
        for (int d = 0; d < rank; d++) {
          int64_t s = rnd(0, static_cast<int>(r.shape[d]) - 1);
          int64_t e = rnd(static_cast<int>(s) + 1, static_cast<int>(r.shape[d]));
          b.emplace_back(s, e);
        }
        apply([&](const Tensor& t) { return t.shrink(b); });
        r = ref_shrink(r, b);
        o << "shrink" << strp(b);
        break;
      }
      case 4: {  // pad with zeros
        std::vector<std::pair<int64_t, int64_t>> p;
        int64_t n = 1;
        for (int d = 0; d < rank; d++) {
          int64_t b = rnd(0, 2), e = rnd(0, 2);
          n *= r.shape[d] + b + e;
          p.emplace_back(b, e);
        }
        if (n > kMaxNumel) for (auto& x : p) x = {0, 1};
        if (numel_of(r.shape) * 2 > kMaxNumel) for (auto& x : p) x = {0, 0};
        apply([&](const Tensor& t) { return t.pad(p); });
        r = ref_pad(r, p);
        o << "pad" << strp(p);
        break;
      }
      default: {  // flip a non-empty subset of axes
        std::vector<int> axes;
        for (int d = 0; d < rank; d++) if (rnd(0, 1)) axes.push_back(d);
        if (axes.empty()) axes.push_back(rnd(0, rank - 1));
        apply([&](const Tensor& t) { return t.flip(axes); });
        r = ref_flip(r, axes);
        o << "flip" << strv(axes);
        break;
      }
    }
    desc += (desc.empty() ? "" : " ") + o.str();
  }
};

// The source data, as planes: each plane holds one "digit" of every source index, shifted so that no
// real element is 0, the padding value. A narrow dtype needs several planes to name each index exactly
// (int8 values would repeat every 256 elements, bools every 2), so a wrong index cannot land on an
// equal value unseen. Wide dtypes hold index + 1 in one plane.
template <class T> struct Planes {
  static constexpr int kBits = std::is_same_v<T, bool> ? 1 : sizeof(T) == 1 ? 6 : 40;
  static int count(int64_t n) {
    int bits = 1;
    while ((int64_t{1} << bits) < n) bits++;
    int digits = (bits + kBits - 1) / kBits;
    return std::is_same_v<T, bool> ? 2 * digits : digits;  // bools: each bit and its complement
  }
  static T value(int plane, int64_t i) {
    if constexpr (std::is_same_v<T, bool>) {
      bool bit = (i >> (plane / 2)) & 1;
      return plane % 2 ? !bit : bit;
    } else {
      return static_cast<T>(((i >> (kBits * plane)) & ((int64_t{1} << kBits) - 1)) + 1);
    }
  }
  // The source index at one element from its value in every plane; -1 for padding (0 everywhere).
  static int64_t decode(const std::vector<std::vector<T>>& got, size_t e) {
    int64_t i = 0;
    bool any = false;
    for (size_t p = 0; p < got.size(); p++) {
      if constexpr (std::is_same_v<T, bool>) {
        any |= got[p][e];
        if (p % 2 == 0 && got[p][e]) i |= int64_t{1} << (p / 2);
      } else {
        int64_t v = static_cast<int64_t>(got[p][e]);
        any |= v != 0;
        i |= (v - 1) << (kBits * p);
      }
    }
    if constexpr (std::is_same_v<T, bool>)  // a real element has exactly one of each bit pair set
      for (size_t p = 0; p < got.size(); p += 2)
        if (any && got[p][e] == got[p + 1][e]) return -2;
    return any ? i : -1;
  }
};

// One case: returns "" on success, else a description of the first problem.
template <class T> std::string run_case(std::mt19937& rng, const char* dtname) {
  Chain ch{rng, {}};
  int rank = ch.rnd(1, 4);
  Shape shape(rank);
  for (auto& d : shape) d = ch.rnd(1, 5);
  int64_t n = numel_of(shape);
  Ref ref{shape, {}};
  for (int64_t i = 0; i < n; i++) ref.idx.push_back(i);

  std::string where = std::string(dtname) + " " + str(shape) + ": ";
  try {
    std::vector<Tensor> ts;
    for (int p = 0; p < Planes<T>::count(n); p++) {
      std::vector<T> data;
      for (int64_t i = 0; i < n; i++) data.push_back(Planes<T>::value(p, i));
      // std::vector<bool> has no data(): bool sources are built as uint8 and cast (a kernel, run here).
      Tensor src = [&] {
        if constexpr (std::is_same_v<T, bool>) {
          std::vector<uint8_t> b(data.begin(), data.end());
          return Tensor(b, shape).cast(dtypes::bool_);
        } else {
          return Tensor(data, shape);
        }
      }();
      src.realize();
      ts.push_back(src);
    }
    int nops = ch.rnd(1, 6);
    for (int k = 0; k < nops; k++) ch.step(ts, ref);
    where += ch.desc;

    if (ts[0].shape() != ref.shape) return where + " -> shape " + str(ts[0].shape()) + ", expected " + str(ref.shape);
    // The cost, from the reference alone: the source itself in its own order needs no kernel, anything
    // else one (the copy into a contiguous buffer).
    bool identity = static_cast<int64_t>(ref.idx.size()) == n;
    for (int64_t i = 0; identity && i < n; i++) identity = ref.idx[static_cast<size_t>(i)] == i;
    std::vector<std::vector<T>> got;
    for (size_t p = 0; p < ts.size(); p++) {
      GlobalCounters::reset();
      got.push_back(ts[p].template tolist<T>());
      int64_t kernels = GlobalCounters::kernel_count;
      if (kernels != (identity ? 0 : 1))
        return where + " -> " + std::to_string(kernels) + " kernels, expected " + (identity ? "0" : "1");
      if (got.back().size() != ref.idx.size())
        return where + " -> " + std::to_string(got.back().size()) + " elements, expected " + std::to_string(ref.idx.size());
    }
    for (size_t e = 0; e < ref.idx.size(); e++) {
      int64_t src = Planes<T>::decode(got, e);
      if (src != ref.idx[e])
        return where + " -> element " + std::to_string(e) + " reads source index " + std::to_string(src) +
               ", expected " + std::to_string(ref.idx[e]) + " (-1: padding)";
    }
  } catch (const std::exception& e) {
    return where + " -> threw: " + e.what();
  }
  return "";
}

}  // namespace

TEST(MovementProperty, RandomChainsMatchReference) {
  std::mt19937 rng(20240611u);
  constexpr int kCases = 220;
  int failures = 0;
  for (int c = 0; c < kCases; c++) {
    std::string err;
    switch (c % 7) {
      case 0: err = run_case<int32_t>(rng, "int32"); break;
      case 1: err = run_case<float>(rng, "float32"); break;
      case 2: err = run_case<int8_t>(rng, "int8"); break;
      case 3: err = run_case<double>(rng, "float64"); break;
      case 4: err = run_case<uint8_t>(rng, "uint8"); break;
      case 5: err = run_case<int64_t>(rng, "int64"); break;
      default: err = run_case<bool>(rng, "bool"); break;
    }
    if (!err.empty()) {
      if (++failures <= 10) ADD_FAILURE() << "case " << c << ": " << err;
    }
  }
  EXPECT_EQ(failures, 0) << failures << " of " << kCases << " cases failed (first 10 shown)";
}
