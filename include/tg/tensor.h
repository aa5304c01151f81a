// tg::Tensor: a lazy, device-resident n-dimensional array with tinygrad's API.
//
// Operations build a graph; nothing runs until realize(), item() or tolist(). Movement ops (reshape,
// permute, expand, pad, shrink, flip...) are views and cost nothing until a kernel reads them. Data given
// by the user lives first on the host device "EXT" and is copied to the compute device when used.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tg/dtype.h"
#include "tg/error.h"

namespace tg {

class LazyBuffer;
using Shape = std::vector<int64_t>;

class Tensor {
 public:
  // From data. The dtype follows the C++ type (int -> int32, float -> float32, bool -> bool...).
  Tensor(std::initializer_list<float> data, const std::string& device = "");
  Tensor(std::initializer_list<double> data, const std::string& device = "");
  Tensor(std::initializer_list<int> data, const std::string& device = "");
  Tensor(std::initializer_list<bool> data, const std::string& device = "");
  template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
  Tensor(const std::vector<T>& data, const Shape& shape, const std::string& device = "")
      : Tensor(from_vector(data, shape, device)) {}
  // A scalar (shape ()).
  template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
  explicit Tensor(T v, std::optional<DType> dtype = std::nullopt, const std::string& device = "")
      : Tensor(full({}, static_cast<double>(v), dtype.value_or(scalar_dtype<T>()), device)) {}
  explicit Tensor(std::shared_ptr<LazyBuffer> lb);

  // Creation
  static Tensor empty(const Shape& shape, DType dtype = dtypes::default_float, const std::string& device = "");
  static Tensor full(const Shape& shape, double value, DType dtype = dtypes::default_float, const std::string& device = "");
  static Tensor zeros(const Shape& shape, DType dtype = dtypes::default_float, const std::string& device = "");
  static Tensor ones(const Shape& shape, DType dtype = dtypes::default_float, const std::string& device = "");
  static Tensor arange(double start, double stop, double step = 1, std::optional<DType> dtype = std::nullopt, const std::string& device = "");
  static Tensor arange(int64_t stop) { return arange(0, static_cast<double>(stop), 1, dtypes::default_int); }
  static Tensor eye(int64_t n, DType dtype = dtypes::default_float, const std::string& device = "");
  static Tensor rand(const Shape& shape, DType dtype = dtypes::default_float, const std::string& device = "");
  static Tensor randn(const Shape& shape, DType dtype = dtypes::default_float, const std::string& device = "");
  static void manual_seed(uint64_t seed);

  // Elementwise (broadcasting, tinygrad's dtype promotion)
  Tensor add(const Tensor& o) const;
  Tensor sub(const Tensor& o) const;
  Tensor mul(const Tensor& o) const;
  Tensor div(const Tensor& o) const;  // true division: integer inputs give a float result
  Tensor neg() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor exp2() const;
  Tensor log2() const;
  Tensor sqrt() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor reciprocal() const;
  Tensor relu() const;
  Tensor sigmoid() const;
  Tensor tanh() const;
  Tensor square() const { return mul(*this); }
  Tensor maximum(const Tensor& o) const;
  Tensor minimum(const Tensor& o) const;
  Tensor where(const Tensor& x, const Tensor& y) const;  // this is the condition
  Tensor lt(const Tensor& o) const;
  Tensor le(const Tensor& o) const;
  Tensor gt(const Tensor& o) const;
  Tensor ge(const Tensor& o) const;
  Tensor eq(const Tensor& o) const;
  Tensor ne(const Tensor& o) const;
  Tensor logical_not() const;
  Tensor cast(DType dtype) const;
  Tensor bitcast(DType dtype) const;

  // Reductions: all axes when `axes` is empty; negative axes count from the end.
  Tensor sum(const std::vector<int>& axes = {}, bool keepdim = false) const;
  Tensor max(const std::vector<int>& axes = {}, bool keepdim = false) const;
  Tensor min(const std::vector<int>& axes = {}, bool keepdim = false) const;
  Tensor mean(const std::vector<int>& axes = {}, bool keepdim = false) const;
  Tensor var(const std::vector<int>& axes = {}, bool keepdim = false, double correction = 1) const;
  Tensor std(const std::vector<int>& axes = {}, bool keepdim = false, double correction = 1) const;

  // Movement (views)
  Tensor reshape(const Shape& shape) const;  // one dim may be -1
  Tensor permute(const std::vector<int>& order) const;
  Tensor transpose(int dim0 = 1, int dim1 = 0) const;
  Tensor expand(const Shape& shape) const;   // -1 keeps a dim
  Tensor pad(const std::vector<std::pair<int64_t, int64_t>>& padding, double value = 0) const;
  Tensor shrink(const std::vector<std::pair<int64_t, int64_t>>& bounds) const;
  Tensor flip(const std::vector<int>& axes) const;
  Tensor squeeze(std::optional<int> dim = std::nullopt) const;
  Tensor unsqueeze(int dim) const;
  Tensor flatten(int start_dim = 0, int end_dim = -1) const;

  Tensor dot(const Tensor& w) const;
  Tensor matmul(const Tensor& w) const { return dot(w); }

  // Realization and data
  Tensor& realize();
  Tensor contiguous() const;
  Tensor to(const std::string& device) const;
  template <class T> T item() const;
  template <class T> std::vector<T> tolist() const;

  const Shape& shape() const;
  DType dtype() const;
  const std::string& device() const;
  int ndim() const { return static_cast<int>(shape().size()); }
  int64_t numel() const;
  const std::shared_ptr<LazyBuffer>& lazydata() const { return lazydata_; }

 private:
  std::shared_ptr<LazyBuffer> lazydata_;
  static Tensor from_host(const void* data, size_t n, const Shape& shape, DType dtype, const std::string& device);
  template <class T> static Tensor from_vector(const std::vector<T>& data, const Shape& shape, const std::string& device) {
    if constexpr (std::is_same_v<T, bool>) {  // std::vector<bool> is packed: unpack to one byte each
      std::vector<uint8_t> bytes(data.begin(), data.end());
      return from_host(bytes.data(), bytes.size(), shape, dtypes::bool_, device);
    } else {
      return from_host(data.data(), data.size(), shape, dtype_of<T>(), device);
    }
  }
  template <class T> static constexpr DType scalar_dtype() {
    if constexpr (std::is_same_v<T, bool>) return dtypes::bool_;
    else if constexpr (std::is_integral_v<T>) return dtypes::default_int;
    else return dtypes::default_float;
  }
  friend Tensor scalar_like(const Tensor& t, double v, DType pytype);
  void read(void* out, DType as) const;  // realizes, converts every element to `as`
  int norm_axis(int axis, const char* op) const;
};

// A C++ scalar combined with a tensor follows tinygrad: an int keeps an int or float tensor's dtype,
// a float makes an int tensor float.
Tensor scalar_like(const Tensor& t, double v, DType pytype);
template <class T> DType py_dtype() {
  if constexpr (std::is_same_v<T, bool>) return dtypes::bool_;
  else if constexpr (std::is_integral_v<T>) return dtypes::default_int;
  else return dtypes::default_float;
}

#define TG_BINARY_OPERATOR(OP, FN)                                                                         \
  inline Tensor operator OP(const Tensor& a, const Tensor& b) { return a.FN(b); }                          \
  template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>                                   \
  Tensor operator OP(const Tensor& a, T b) { return a.FN(scalar_like(a, static_cast<double>(b), py_dtype<T>())); } \
  template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>                                   \
  Tensor operator OP(T a, const Tensor& b) { return scalar_like(b, static_cast<double>(a), py_dtype<T>()).FN(b); }
TG_BINARY_OPERATOR(+, add)
TG_BINARY_OPERATOR(-, sub)
TG_BINARY_OPERATOR(*, mul)
TG_BINARY_OPERATOR(/, div)
TG_BINARY_OPERATOR(<, lt)
TG_BINARY_OPERATOR(<=, le)
TG_BINARY_OPERATOR(>, gt)
TG_BINARY_OPERATOR(>=, ge)
TG_BINARY_OPERATOR(==, eq)
TG_BINARY_OPERATOR(!=, ne)
#undef TG_BINARY_OPERATOR
inline Tensor operator-(const Tensor& a) { return a.neg(); }

template <class T> T Tensor::item() const {
  TG_CHECK(numel() == 1, "item: tensor of shape ", shape(), " has ", numel(), " elements, expected exactly 1");
  T v;
  read(&v, dtype_of<T>());
  return v;
}
template <class T> std::vector<T> Tensor::tolist() const {
  std::vector<T> v(static_cast<size_t>(numel()));
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> b(v.size());
    read(b.data(), dtypes::bool_);
    for (size_t i = 0; i < b.size(); i++) v[i] = b[i] != 0;
  } else {
    read(v.data(), dtype_of<T>());
  }
  return v;
}

}  // namespace tg
