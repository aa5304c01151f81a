// Shared by the Tensor op files: broadcasting, dtype helpers and axis handling. Not a public header.
#pragma once
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "tensor/function.h"
#include "tg/tensor.h"

namespace tg::detail {

std::string dev_or_default(const std::string& d);
// The shape numpy's broadcasting rule gives these shapes (dims aligned from the right, 1 stretches),
// or nullopt when they are incompatible.
std::optional<Shape> broadcast_shape(const std::vector<Shape>& shapes);
// Broadcast two tensors to one shape and (when match_dtype) one dtype, as tinygrad's _broadcasted.
std::pair<Tensor, Tensor> broadcasted(const char* op, const Tensor& a, const Tensor& b, bool match_dtype = true);
// The float type of t (ints and bool become default_float).
Tensor to_float(const Tensor& t);
// The dtype a sum accumulates in: float16 -> float32, small ints -> int32/uint32.
DType sum_acc_dtype(DType d);
// The normalized reduce axes (all when `axes` is empty) and the shape the reduce returns.
std::pair<std::vector<int>, Shape> reduce_axes(const Tensor& t, const std::vector<int>& axes, bool keepdim, const char* op);
// A constant of t's dtype and device, broadcast to shape `shape` (or t's shape).
Tensor const_like(const Tensor& t, double v);

}  // namespace tg::detail
