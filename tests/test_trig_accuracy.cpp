// sin, cos and tan of large arguments: rotary position embeddings take them of position x frequency up to
// the context length, so the argument reduction must stay exact far from 0. Each is within 2 ulp of the
// correctly rounded result for |x| up to 1e6, over 10^6 random float32 inputs a decade, on the scalar path
// (NOOPT) and on the upcast path the heuristics take (test.sh runs this file again for a baseline x86-64
// CPU). cos is not sin(pi/2 - x): that subtraction rounds away ulp(x)/2 of the argument (3e-4 at 3000).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "tg/helpers.h"
#include "tg/tensor.h"

using namespace tg;

namespace {

// |got - ref| in units of the last place of the float32 nearest to ref (ref from float64 libm, which is
// within an ulp of double: far below float32's).
double ulp_error_f32(float got, double ref) {
  if (std::isnan(ref) || std::isnan(got)) return std::isnan(ref) == std::isnan(got) ? 0 : INFINITY;
  float r = static_cast<float>(ref);
  int e = 0;
  std::frexp(r, &e);
  double ulp = std::ldexp(1.0, std::max(e, -125) - 24);
  return std::fabs(static_cast<double>(got) - ref) / ulp;
}

double ulp_error_f64(double got, long double ref) {
  int e = 0;
  std::frexp(static_cast<double>(ref), &e);
  long double ulp = std::ldexp(1.0L, std::max(e, -1021) - 53);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - ref) / ulp);
}

struct Fn {
  const char* name;
  Tensor (*op)(const Tensor&);
  double (*ref)(double);
  long double (*ref_long)(long double);
};
const Fn kFns[] = {
    {"sin", [](const Tensor& x) { return x.sin(); }, [](double x) { return std::sin(x); }, [](long double x) { return std::sin(x); }},
    {"cos", [](const Tensor& x) { return x.cos(); }, [](double x) { return std::cos(x); }, [](long double x) { return std::cos(x); }},
    {"tan", [](const Tensor& x) { return x.tan(); }, [](double x) { return std::tan(x); }, [](long double x) { return std::tan(x); }},
};

// 10^6 float32 values with magnitudes uniform in [10^d, 10^(d+1)), either sign.
std::vector<float> decade(int d, std::mt19937& rng, int count = 1000000) {
  std::uniform_real_distribution<double> mag(std::pow(10.0, d), std::pow(10.0, d + 1));
  std::vector<float> xs(static_cast<size_t>(count));
  for (float& x : xs) x = static_cast<float>(rng() & 1 ? mag(rng) : -mag(rng));
  return xs;
}

}  // namespace

TEST(TrigAccuracy, Float32WithinTwoUlpUpTo1e6) {
  std::mt19937 rng(2026);
  for (int noopt : {1, 0}) {
    Context ctx{{"NOOPT", noopt}};
    for (int d = -3; d < 6; d++) {
      std::vector<float> xs = decade(d, rng);
      Tensor x(xs, {static_cast<int64_t>(xs.size())});
      for (const Fn& f : kFns) {
        std::vector<float> got = f.op(x).tolist<float>();
        double worst = 0;
        float worst_x = 0;
        for (size_t i = 0; i < xs.size(); i++)
          if (double e = ulp_error_f32(got[i], f.ref(xs[i])); e > worst) { worst = e; worst_x = xs[i]; }
        std::printf("%s %s [1e%d, 1e%d): max %.3f ulp (x = %.9g)\n", noopt ? "scalar" : "upcast", f.name, d, d + 1, worst, worst_x);
        EXPECT_LE(worst, 2.0) << f.name << " at x = " << worst_x << (noopt ? " (NOOPT)" : " (upcast)");
      }
    }
  }
}

TEST(TrigAccuracy, Float64AndFloat16) {
  std::mt19937 rng(7);
  for (int d = -2; d < 6; d++) {
    std::vector<float> xs32 = decade(d, rng, 20000);
    std::vector<double> xs(xs32.begin(), xs32.end());
    for (double& x : xs) x *= 1 + 1e-9;  // more bits than a float has
    Tensor x(xs, {static_cast<int64_t>(xs.size())});
    for (const Fn& f : kFns) {
      std::vector<double> got = f.op(x).tolist<double>();
      double worst = 0;
      for (size_t i = 0; i < xs.size(); i++) worst = std::max(worst, ulp_error_f64(got[i], f.ref_long(xs[i])));
      EXPECT_LE(worst, 2.0) << f.name << " float64 [1e" << d << ", 1e" << d + 1 << ")";
      // float16 computes in float32 and rounds to half: within a half ulp of the correctly rounded half
      Tensor h = Tensor(xs32, {static_cast<int64_t>(xs32.size())}).cast(dtypes::float16);
      std::vector<float> hx = h.cast(dtypes::float32).tolist<float>(), hy = f.op(h).cast(dtypes::float32).tolist<float>();
      int off = 0;
      for (size_t i = 0; i < hx.size(); i++) {
        float want = half_to_float(float_to_half(static_cast<float>(f.ref(hx[i]))));
        off += std::fabs(hy[i] - want) > std::fabs(want) * 0x1p-10f + 0x1p-24f;
      }
      EXPECT_EQ(off, 0) << f.name << " float16 [1e" << d << ", 1e" << d + 1 << ")";
    }
  }
}

// Gradients: sin' = cos, cos' = -sin, tan' = 1 + tan^2, accurate at large arguments too.
TEST(TrigAccuracy, GradientsAtLargeArguments) {
  std::vector<float> xs = {3000.5f, -12345.25f, 999999.f, 0.5f};
  for (const Fn& f : kFns) {
    Tensor x = Tensor(xs, {4}).requires_grad_();
    f.op(x).sum().backward();
    std::vector<float> g = x.grad().tolist<float>();
    for (size_t i = 0; i < xs.size(); i++) {
      double a = xs[i];
      double want = f.name[0] == 's' ? std::cos(a) : f.name[0] == 'c' ? -std::sin(a) : 1 + std::tan(a) * std::tan(a);
      EXPECT_NEAR(g[i], want, 4e-7 * std::max(1.0, std::fabs(want))) << f.name << "'(" << a << ")";
    }
  }
}
