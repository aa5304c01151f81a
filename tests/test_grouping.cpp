// Tests of the fusion decisions as data (engine/grouping.h): which buffers are realized and why, and
// which kernel computes what, before any AST is built.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_set>
#include <variant>
#include <vector>

#include "engine/grouping.h"
#include "engine/schedule.h"
#include "lazy/lazybuffer.h"
#include "tg/tensor.h"

using namespace tg;

// The decisions for a graph: the realized buffers with their reasons, and each kernel's outputs,
// reduces and loop shape.
TEST(Grouping, IsData) {
  Tensor x = Tensor::rand({64, 48}).realize();
  Tensor mean = x.mean({1}, true);
  Tensor y = (x - mean).square().sum({0});
  Grouping g = group({y.lazydata()});
  ASSERT_EQ(g.kernels.size(), 2u);
  LazyBuffer* row_sum = mean.lazydata()->base()->srcs[0]->base();  // mean = sum * (1/48)
  ASSERT_EQ(row_sum->op, Ops::REDUCE_AXIS);
  EXPECT_EQ(g.realizes.at(row_sum), "its reader's kernel reduces other rows");
  EXPECT_EQ(g.realizes.at(y.lazydata()->base()), "an output");
  EXPECT_EQ(g.kernels[0].outputs, std::vector<LazyBuffer*>{row_sum});  // sources first
  EXPECT_EQ(g.kernels[1].outputs, std::vector<LazyBuffer*>{y.lazydata()->base()});
  EXPECT_EQ(g.kernels[1].shape, (Shape{1, 48}));
  // softmax: one kernel of one output that fuses both of its reduces; mean and var together: one
  // kernel of two outputs
  Tensor s = x.softmax(1);
  g = group({s.lazydata()});
  ASSERT_EQ(g.kernels.size(), 1u);
  ASSERT_EQ(g.kernels[0].reduces.size(), 1u);
  std::vector<Ops> reduce_ops;
  for (LazyBuffer* r : g.kernels[0].reduces[0]) reduce_ops.push_back(std::get<ReduceArg>(r->arg).op);
  EXPECT_THAT(reduce_ops, testing::UnorderedElementsAre(Ops::MAX, Ops::ADD));
  g = group({x.mean({1}).lazydata(), x.var({1}).lazydata()});
  ASSERT_EQ(g.kernels.size(), 1u);
  EXPECT_EQ(g.kernels[0].outputs.size(), 2u);
  EXPECT_TRUE(g.buffer_ops.empty());
}

// Kernels over one loop nest join, but not two contractions: the q, k and v projections of one x are
// three matmuls (each fills the registers with its own tile of outputs; joined, they ran 2x slower),
// while a mean and a variance, or the sums of x and x*x, still share one kernel and its loads.
TEST(Grouping, ContractionsDoNotJoin) {
  Tensor x = Tensor::rand({32, 48}).realize();
  std::vector<Tensor> w;
  for (int i = 0; i < 3; i++) w.push_back(Tensor::rand({48, 40}).realize());
  Tensor q = x.matmul(w[0]), k = x.matmul(w[1]), v = x.matmul(w[2]);
  Grouping g = group({q.lazydata(), k.lazydata(), v.lazydata()});
  size_t with_reduces = 0;
  for (const Grouping::Kernel& kern : g.kernels) {
    EXPECT_EQ(kern.outputs.size(), 1u);
    with_reduces += !kern.reduces[0].empty();
  }
  EXPECT_EQ(with_reduces, 3u);
  g = group({x.sum({0}).lazydata(), (x * x).sum({0}).lazydata()});
  ASSERT_EQ(g.kernels.size(), 1u);
  EXPECT_EQ(g.kernels[0].outputs.size(), 2u);
  // two convs of one image, read through its windows (a view of several views), by two weights
  Tensor img = Tensor::rand({2, 3, 12, 12}).realize();
  Tensor c1 = img.conv2d(Tensor::rand({4, 3, 5, 1}).realize()), c2 = img.conv2d(Tensor::rand({4, 3, 5, 1}).realize());
  g = group({c1.lazydata(), c2.lazydata()});
  with_reduces = 0;
  for (const Grouping::Kernel& kern : g.kernels) with_reduces += kern.outputs.size() == 1 && !kern.reduces[0].empty();
  EXPECT_EQ(with_reduces, 2u);
  // and the values, realized together, are the matmuls'
  Tensor::corealize({q, k, v});
  std::vector<float> hx = x.tolist<float>();
  for (int i = 0; i < 3; i++) {
    std::vector<float> hw = w[i].tolist<float>(), got = std::vector<Tensor>{q, k, v}[i].tolist<float>();
    for (int r = 0; r < 32; r += 7)
      for (int c = 0; c < 40; c += 3) {
        double ref = 0;
        for (int j = 0; j < 48; j++) ref += double(hx[r * 48 + j]) * hw[j * 40 + c];
        EXPECT_NEAR(got[r * 40 + c], ref, 1e-4) << i << " " << r << " " << c;
      }
  }
}

// Big kernels over one loop nest join only when they load a buffer in common: 8 pad copies (or 8
// transposes) of 8 different 1M-element buffers stay 8 kernels (as one they ran 1.7-1.9x slower, 16
// streams at once with nothing shared; apart, each reader runs right after its copy, while the copy
// is in the cache), while copies of one buffer share its loads in one kernel, and small copies join.
TEST(Grouping, BigKernelsJoinOnlyOverSharedLoads) {
  auto kernels_of = [](const std::vector<Tensor>& outs) {
    std::vector<LBPtr> lbs;
    for (const Tensor& t : outs) lbs.push_back(t.lazydata());
    return group(lbs).kernels.size();
  };
  auto pads_and_transposes = [&](const Shape& shape, int n) {
    std::vector<Tensor> pads, transposes;
    for (int i = 0; i < n; i++) {
      Tensor x = Tensor::rand(shape).realize();
      pads.push_back(x.pad({{0, 0}, {0, 0}, {4, 4}}).contiguous());
      transposes.push_back(x.permute({0, 2, 1}).contiguous());
    }
    return std::pair{kernels_of(pads), kernels_of(transposes)};
  };
  EXPECT_EQ(pads_and_transposes({512, 32, 100}, 4), std::pair(size_t{4}, size_t{4}));  // 1.6M elements each
  EXPECT_EQ(pads_and_transposes({16, 32, 100}, 4), std::pair(size_t{1}, size_t{1}));
  Tensor x = Tensor::rand({512, 32, 100}).realize();
  EXPECT_EQ(kernels_of({x.permute({0, 2, 1}).contiguous(), (x * 2).permute({0, 2, 1}).contiguous()}), 1u);
}

// Which reduces fuse does not depend on where the graph's buffers happen to be in memory: a graph with
// reduces over crossing rows (some must be realized) schedules the same kernels every time.
TEST(Grouping, FusionDecisionsAreDeterministic) {
  Tensor x = Tensor::rand({8, 4, 6, 6}).realize(), w = Tensor::rand({4, 4, 3, 3}).realize();
  std::vector<std::string> first;
  for (int run = 0; run < 20; run++) {
    Tensor wr = w.detach().requires_grad_(), xr = x.detach().requires_grad_();
    Tensor c = xr.conv2d(wr);
    Tensor n = (c - c.mean({0, 2, 3}, true)) * (c.var({0, 2, 3}, true) + 1e-5).rsqrt();
    Tensor loss = n.relu().max_pool2d().flatten(1).log_softmax(1).mean();
    loss.backward();
    std::vector<std::string> got;
    for (auto& si : create_schedule({loss.lazydata(), wr.grad().lazydata(), xr.grad().lazydata()})) got.push_back(si.fusion);
    if (run == 0) first = got;
    else ASSERT_EQ(got, first) << "run " << run;
  }
}

// A big pool's gradient is g / count shared among each window's maxima: 1 / count is realized once per
// window (in the forward's max kernel), so the kernel that writes the input's gradient divides
// nothing (it divided once per entry, and so did each other kernel that fused the gradient). A
// small pool (below 16384 windows) keeps the division in the reader. The values are brute-force loops',
// with ties (the share is split between them).
TEST(Grouping, MaxPoolGradientSharedOncePerWindow) {
  auto recips = [](const UOpPtr& ast) {
    int n = 0;
    std::vector<const UOp*> todo{ast.get()};
    std::unordered_set<const UOp*> seen;
    while (!todo.empty()) {
      const UOp* u = todo.back();
      todo.pop_back();
      if (!seen.insert(u).second) continue;
      n += u->op == Ops::RECIP;
      for (auto& s : u->src) todo.push_back(s.get());
    }
    return n;
  };
  struct Case { Shape shape; std::vector<int64_t> kernel; bool shared; };
  for (const Case& c : {Case{{2, 8, 64, 64}, {2}, true}, Case{{4, 8, 96, 63}, {3}, true}, Case{{2, 8, 16, 16}, {2}, false}}) {
    int64_t n = prod(c.shape);
    std::vector<float> hx(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; i++) hx[static_cast<size_t>(i)] = static_cast<float>((i * 7919) % 5);  // many ties
    Tensor x = Tensor(hx, c.shape).requires_grad_();
    Tensor y = x.max_pool2d(c.kernel);
    std::vector<float> hg(static_cast<size_t>(prod(y.shape())));
    for (size_t i = 0; i < hg.size(); i++) hg[i] = 0.25f + static_cast<float>(i % 13);
    Tensor g = Tensor(hg, y.shape()).realize();
    (y * g).sum().backward();
    std::ostringstream what_s;
    what_s << "x " << c.shape << ", kernel " << c.kernel[0];
    std::string what = what_s.str();
    int writer_recips = -1;
    LazyBuffer* dx = x.grad().lazydata()->base();
    for (auto& si : create_schedule({x.grad().lazydata()}))
      if (si.is_kernel() && si.outputs[0]->base() == dx) writer_recips = recips(si.ast);
    EXPECT_EQ(writer_recips, c.shared ? 0 : 1) << what;
    std::vector<float> got = x.grad().tolist<float>();
    int64_t k = c.kernel[0], H = c.shape[2], W = c.shape[3], oh = H / k, ow = W / k;
    std::vector<double> want(static_cast<size_t>(n), 0.0);
    for (int64_t p = 0; p < c.shape[0] * c.shape[1]; p++)
      for (int64_t i = 0; i < oh; i++)
        for (int64_t j = 0; j < ow; j++) {
          float m = -1;
          int ties = 0;
          for (int64_t a = 0; a < k; a++)
            for (int64_t b = 0; b < k; b++) m = std::max(m, hx[static_cast<size_t>((p * H + i * k + a) * W + j * k + b)]);
          for (int64_t a = 0; a < k; a++)
            for (int64_t b = 0; b < k; b++) ties += hx[static_cast<size_t>((p * H + i * k + a) * W + j * k + b)] == m;
          for (int64_t a = 0; a < k; a++)
            for (int64_t b = 0; b < k; b++) {
              size_t at = static_cast<size_t>((p * H + i * k + a) * W + j * k + b);
              if (hx[at] == m) want[at] += hg[static_cast<size_t>((p * oh + i) * ow + j)] / ties;
            }
        }
    for (int64_t i = 0; i < n; i++) ASSERT_NEAR(got[static_cast<size_t>(i)], want[static_cast<size_t>(i)], 1e-5) << what << " at " << i;
  }
}

// A stack of a few pieces along a short dim, read expanded by a reduce (the Winograd output transform:
// 8 points' input gradients contracted with a 8x4 matrix), stays in its reader: the reduce loads each
// piece where it was computed, and no kernel copies them into one tensor. The pieces here are the
// gradients of 8 slices of x (matmuls' input gradients), which autograd joins as a stack. A long cat
// read by a matmul is still realized.
TEST(Grouping, StackedSlicesReadWhereTheyLie) {
  constexpr int64_t P = 8, R = 6, K = 12, C = 5, O = 4;
  std::vector<float> hw(static_cast<size_t>(P * K * C)), hm(static_cast<size_t>(P * O));
  for (size_t i = 0; i < hw.size(); i++) hw[i] = static_cast<float>(static_cast<int64_t>(i * 37 % 11) - 5) / 4;
  for (size_t i = 0; i < hm.size(); i++) hm[i] = static_cast<float>(static_cast<int64_t>(i * 13 % 7) - 3);
  Tensor x = Tensor::rand({P, R, K}).requires_grad_();
  Tensor w = Tensor(hw, {P, K, C}).realize(), m = Tensor(hm, {P, O}).realize();
  std::optional<Tensor> loss;
  for (int64_t p = 0; p < P; p++) {
    Tensor t = x.shrink({{p, p + 1}, {0, R}, {0, K}}).reshape({R, K}).matmul(w.shrink({{p, p + 1}, {0, K}, {0, C}}).reshape({K, C})).sum();
    loss = loss ? *loss + t : t;
  }
  loss->backward();
  Tensor z = (x.grad().reshape({P, 1, R * K}) * m.reshape({P, O, 1})).sum({0});
  for (const Grouping::Kernel& k : group({z.lazydata()}).kernels)
    for (LazyBuffer* out : k.outputs) EXPECT_NE(out->shape(), (Shape{P, R, K})) << "the stack of x's gradients was copied";
  std::vector<float> got = z.tolist<float>();
  for (int64_t o = 0; o < O; o++)
    for (int64_t rk = 0; rk < R * K; rk++) {
      double want = 0;  // x's gradient at [p, r, k] is the sum of w[p, k, :]
      for (int64_t p = 0; p < P; p++) {
        double g = 0;
        for (int64_t c = 0; c < C; c++) g += hw[static_cast<size_t>((p * K + rk % K) * C + c)];
        want += hm[static_cast<size_t>(p * O + o)] * g;
      }
      ASSERT_NEAR(got[static_cast<size_t>(o * R * K + rk)], want, 1e-4) << "at " << o << ", " << rk;
    }
  // a cat of two products along a dim of 128, read by a matmul: realized (a kernel per element would
  // choose between the pieces in its inner loop)
  Tensor a = Tensor::rand({16, 8}).realize(), b = Tensor::rand({8, 64}).realize(), e = Tensor::rand({128, 4}).realize();
  Tensor cat = Tensor::cat({a.matmul(b), a.matmul(b) * 2}, 1);
  Grouping g = group({cat.matmul(e).lazydata()});
  EXPECT_TRUE(g.realizes.count(cat.lazydata()->base())) << "a long cat read by a matmul stays realized";
}
