// Data types and tinygrad's promotion rules.
//
// A DType is a small value: a scalar kind, a vector width (`count`, >1 only inside kernels) and a pointer
// flag (for kernel buffer arguments). Users meet only the scalars in `tg::dtypes`.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tg {

enum class Scalar : uint8_t { Void, Bool, Int8, UInt8, Int16, UInt16, Int32, UInt32, Int64, UInt64, Float16, Float32, Float64 };

struct DType {
  Scalar scalar = Scalar::Void;
  uint8_t count = 1;  // vector width
  bool ptr = false;   // pointer to `scalar` (kernel buffer arguments)

  constexpr bool operator==(const DType&) const = default;
  int itemsize() const;                    // bytes of one scalar element
  std::string name() const;                // "float32", "float32x4", "float32*"
  std::string c_name() const;              // "float", "int", "unsigned char", "_Float16"...
  bool is_float() const { return scalar == Scalar::Float16 || scalar == Scalar::Float32 || scalar == Scalar::Float64; }
  bool is_int() const { return scalar >= Scalar::Int8 && scalar <= Scalar::UInt64; }
  bool is_unsigned() const { return scalar == Scalar::UInt8 || scalar == Scalar::UInt16 || scalar == Scalar::UInt32 || scalar == Scalar::UInt64; }
  bool is_bool() const { return scalar == Scalar::Bool; }
  DType base() const { return DType{scalar, 1, false}; }   // the scalar element type
  DType vec(int n) const { return DType{scalar, static_cast<uint8_t>(n), false}; }
  DType pointer() const { return DType{scalar, 1, true}; }
  double min() const;  // smallest value (as a double, for reduce identities)
  double max() const;  // largest value
};

namespace dtypes {
inline constexpr DType void_{Scalar::Void}, bool_{Scalar::Bool}, int8{Scalar::Int8}, uint8{Scalar::UInt8},
    int16{Scalar::Int16}, uint16{Scalar::UInt16}, int32{Scalar::Int32}, uint32{Scalar::UInt32}, int64{Scalar::Int64},
    uint64{Scalar::UInt64}, float16{Scalar::Float16}, float32{Scalar::Float32}, float64{Scalar::Float64};
inline constexpr DType half = float16, float_ = float32, double_ = float64, int_ = int32, long_ = int64, uchar = uint8;
inline constexpr DType default_float = float32, default_int = int32;
std::vector<DType> all();  // every user-facing scalar dtype
DType from_name(const std::string& name);  // "float32" -> float32; throws tg::Error for unknown names
}  // namespace dtypes

// tinygrad's least_upper_dtype over its promotion lattice (bool < int8 < int16 ..., uint8 < int16 ...,
// ints < float16 < float32 < float64).
DType least_upper_dtype(const std::vector<DType>& ds);
// The float type an op like exp() or division produces: ints and bool go to default_float.
DType least_upper_float(DType d);

// C++ type -> DType, for Tensor constructors and item<T>().
template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<bool>() { return dtypes::bool_; }
template <> constexpr DType dtype_of<int8_t>() { return dtypes::int8; }
template <> constexpr DType dtype_of<uint8_t>() { return dtypes::uint8; }
template <> constexpr DType dtype_of<int16_t>() { return dtypes::int16; }
template <> constexpr DType dtype_of<uint16_t>() { return dtypes::uint16; }
template <> constexpr DType dtype_of<int32_t>() { return dtypes::int32; }
template <> constexpr DType dtype_of<uint32_t>() { return dtypes::uint32; }
template <> constexpr DType dtype_of<int64_t>() { return dtypes::int64; }
template <> constexpr DType dtype_of<uint64_t>() { return dtypes::uint64; }
template <> constexpr DType dtype_of<float>() { return dtypes::float32; }
template <> constexpr DType dtype_of<double>() { return dtypes::float64; }

// IEEE half <-> float on the host (round to nearest even).
uint16_t float_to_half(float f);
float half_to_float(uint16_t h);

}  // namespace tg
