// Kernels of Tensor graphs, run under a list of opts and compared: for the kernel optimizer's tests
// (test_kernel_opts.cpp, test_conv_heuristics.cpp).
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "codegen/kernel.h"
#include "engine/realize.h"
#include "engine/schedule.h"
#include "lazy/lazybuffer.h"
#include "tg/tg.h"

namespace kernel_opts_test {
using namespace tg;

// The kernel that computes `out` from realized inputs (none when no kernel is needed, e.g. a sum
// over a size-1 axis is a reshape).
inline std::optional<ScheduleItem> maybe_kernel_of(const Tensor& out) {
  std::optional<ScheduleItem> k;
  for (auto& si : create_schedule({out.lazydata()})) {
    EXPECT_FALSE(si.is_kernel() && k) << "more than one kernel";
    if (si.is_kernel()) k = si;
  }
  return k;
}
inline ScheduleItem kernel_of(const Tensor& out) {
  auto k = maybe_kernel_of(out);
  if (!k) throw std::runtime_error("no kernel");
  return *k;
}

// a (m, k) @ b (k, n) as one kernel reading b's own rows (what matmul gives when the target's panels
// do not apply: Tensor::matmul copies b into panels for large products)
inline Tensor unpacked_matmul(const Tensor& a, const Tensor& b) {
  int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
  return (a.reshape({m, 1, k}) * b.transpose(0, 1).reshape({1, n, k})).sum({2});
}

// Runs the kernel of `si` with `opts` applied; the output as doubles.
inline std::vector<double> run(const ScheduleItem& si, const std::vector<Opt>& opts) {
  const std::string dev = si.outputs[0]->device;
  Kernel k(si.ast, Device::get(dev).renderer());
  for (const Opt& o : opts) k.apply_opt(o);
  auto runner = compile_kernel(k, dev);
  std::vector<Buffer*> bufs;
  for (auto& b : si.bufs) {
    if (!b->is_allocated()) b->allocate();
    bufs.push_back(b.get());
  }
  std::vector<uint8_t> zero(bufs[0]->nbytes(), 0xAB);  // garbage first: a missed store shows
  bufs[0]->copyin(zero.data());
  runner->exec(bufs, {}, true);
  std::vector<uint8_t> raw(bufs[0]->nbytes());
  bufs[0]->copyout(raw.data());
  std::vector<double> out(bufs[0]->size);
  DType dt = bufs[0]->dtype;
  for (size_t i = 0; i < out.size(); i++) {
    const uint8_t* p = raw.data() + i * dt.itemsize();
    if (dt == dtypes::float32) { float f; std::memcpy(&f, p, 4); out[i] = f; }
    else if (dt == dtypes::float64) std::memcpy(&out[i], p, 8);
    else if (dt == dtypes::int32) { int32_t v; std::memcpy(&v, p, 4); out[i] = v; }
    else if (dt == dtypes::int64) { int64_t v; std::memcpy(&v, p, 8); out[i] = static_cast<double>(v); }
    else if (dt == dtypes::uint8 || dt == dtypes::bool_) out[i] = p[0];
    else if (dt == dtypes::float16) { uint16_t h; std::memcpy(&h, p, 2); out[i] = half_to_float(h); }
    else ADD_FAILURE() << "dtype " << dt.name();
  }
  return out;
}

inline void expect_close(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); i++) {
    bool same = (std::isnan(got[i]) && std::isnan(want[i])) || got[i] == want[i] ||
                std::fabs(got[i] - want[i]) <= 1e-4 + 1e-4 * std::fabs(want[i]);
    ASSERT_TRUE(same) << what << ": element " << i << " is " << got[i] << ", want " << want[i];
  }
}

inline Tensor rand_tensor(std::mt19937& rng, const Shape& shape, DType dt) {
  std::uniform_int_distribution<int> d(-8, 8);
  std::vector<float> v(static_cast<size_t>(prod(shape)));
  for (auto& x : v) x = static_cast<float>(d(rng)) * 0.25f;
  Tensor t = Tensor(v, shape).cast(dt);
  t.realize();
  return t;
}

// a kernel that reduces (a conv's, not the copies it makes)
inline bool reduces(const ScheduleItem& si) {
  if (!si.is_kernel()) return false;
  for (const UOpPtr& u : si.ast->toposort())
    if (u->op == Ops::REDUCE_AXIS) return true;
  return false;
}

// The kernels of `out` that reduce, after running the items before them (the copies a conv makes of its
// padded image and packed weights, which the kernels then read).
inline std::vector<ScheduleItem> reduce_kernels_of(const Tensor& out) {
  std::vector<ScheduleItem> schedule = create_schedule({out.lazydata()}), before, after;
  for (auto& si : schedule) (reduces(si) || !after.empty() ? after : before).push_back(si);
  run_schedule(before);
  return after;
}
// a conv's one kernel, its copies made
inline ScheduleItem conv_kernel_of(const Tensor& out) {
  std::vector<ScheduleItem> k = reduce_kernels_of(out);
  if (k.size() != 1 || !k[0].is_kernel()) throw std::runtime_error("not one reducing kernel");
  return k[0];
}

}  // namespace kernel_opts_test
