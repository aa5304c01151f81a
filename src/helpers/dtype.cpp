#include "tg/dtype.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "tg/error.h"

namespace tg {

namespace {
struct Info { const char* name; const char* c_name; int itemsize; double lo, hi; };
const Info& info(Scalar s) {
  static const Info table[] = {
      {"void", "void", 0, 0, 0},
      {"bool", "_Bool", 1, 0, 1},
      {"int8", "signed char", 1, -128, 127},
      {"uint8", "unsigned char", 1, 0, 255},
      {"int16", "short", 2, -32768, 32767},
      {"uint16", "unsigned short", 2, 0, 65535},
      {"int32", "int", 4, -2147483648.0, 2147483647.0},
      {"uint32", "unsigned int", 4, 0, 4294967295.0},
      {"int64", "long long", 8, -9223372036854775808.0, 9223372036854775807.0},
      {"uint64", "unsigned long long", 8, 0, 18446744073709551615.0},
      {"float16", "_Float16", 2, -65504.0, 65504.0},
      {"float32", "float", 4, -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()},
      {"float64", "double", 8, -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()},
  };
  return table[static_cast<int>(s)];
}
}  // namespace

int DType::itemsize() const { return info(scalar).itemsize; }
double DType::min() const { return scalar == Scalar::Float16 ? -std::numeric_limits<double>::infinity() : info(scalar).lo; }
double DType::max() const { return scalar == Scalar::Float16 ? std::numeric_limits<double>::infinity() : info(scalar).hi; }

std::string DType::name() const {
  std::string n = info(scalar).name;
  if (count > 1) n += "x" + std::to_string(count);
  return ptr ? n + "*" : n;
}

std::string DType::c_name() const {
  std::string n = info(scalar).c_name;
  if (count > 1) {  // vector types are named by the renderer's typedefs: float4, int8...
    std::string b = n;
    std::replace(b.begin(), b.end(), ' ', '_');
    n = b + std::to_string(count);
  }
  return ptr ? n + "*" : n;
}

namespace dtypes {
std::vector<DType> all() {
  return {bool_, int8, uint8, int16, uint16, int32, uint32, int64, uint64, float16, float32, float64};
}
DType from_name(const std::string& name) {
  for (DType d : all())
    if (d.name() == name) return d;
  TG_ERROR_AS(TypeError, "dtypes: unknown dtype '", name, "'");
}
}  // namespace dtypes

// The promotion lattice: each dtype's direct parents. least_upper_dtype is the smallest common ancestor.
// Each dtype's ancestors (itself included) are a bit set over the Scalar enum, computed once at first
// use (thread-safe: graphs are built from several threads).
static uint32_t ancestors(Scalar s) {
  constexpr int n = static_cast<int>(Scalar::Float64) + 1;
  static const std::array<uint32_t, n> table = [] {
    const std::map<Scalar, std::vector<Scalar>> parents = {
        {Scalar::Bool, {Scalar::Int8, Scalar::UInt8}},       {Scalar::Int8, {Scalar::Int16}},
        {Scalar::Int16, {Scalar::Int32}},                    {Scalar::Int32, {Scalar::Int64}},
        {Scalar::Int64, {Scalar::Float16}},                  {Scalar::UInt8, {Scalar::Int16, Scalar::UInt16}},
        {Scalar::UInt16, {Scalar::Int32, Scalar::UInt32}},   {Scalar::UInt32, {Scalar::Int64, Scalar::UInt64}},
        {Scalar::UInt64, {Scalar::Float16}},                 {Scalar::Float16, {Scalar::Float32}},
        {Scalar::Float32, {Scalar::Float64}},                {Scalar::Float64, {}},
        {Scalar::Void, {}},
    };
    std::array<uint32_t, n> t{};
    // parents come later in the enum, so walking it backwards finds every parent's set complete
    for (int i = n - 1; i >= 0; i--) {
      t[static_cast<size_t>(i)] = 1u << i;
      for (Scalar p : parents.at(static_cast<Scalar>(i))) t[static_cast<size_t>(i)] |= t[static_cast<size_t>(p)];
    }
    return t;
  }();
  return table.at(static_cast<size_t>(s));
}

DType least_upper_dtype(const std::vector<DType>& ds) {
  TG_ASSERT(!ds.empty());
  uint32_t common = ~0u;
  for (const DType& d : ds) common &= ancestors(d.scalar);
  TG_CHECK(common != 0, "least_upper_dtype: no common dtype");
  return DType{static_cast<Scalar>(std::countr_zero(common))};  // enum order is the lattice's priority order
}

DType least_upper_float(DType d) { return d.is_float() ? d.base() : dtypes::default_float; }

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u, mant = x & 0x7fffffu;
  int exp = static_cast<int>((x >> 23) & 0xff);
  // NaN stays NaN: quieted, the payload's top bits kept (as F16C, libgcc and the kernels do)
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u | (mant >> 13) : 0u));
  int e = exp - 127 + 15;
  if (e >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);                        // overflow -> inf
  if (e <= 0) {                                                                        // subnormal or zero
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    int shift = 14 - e;
    uint32_t half = mant >> shift, rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) half++;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) half++;  // may carry into the exponent: correct
  return static_cast<uint16_t>(half);
}

float half_to_float(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ffu, x;
  if (exp == 0x1f) x = sign | 0x7f800000u | (mant ? 0x400000u | (mant << 13) : 0u);  // NaN quieted
  else if (exp == 0) {
    if (mant == 0) x = sign;
    else {  // subnormal: normalize
      int e = -1;
      do { e++; mant <<= 1; } while (!(mant & 0x400u));
      x = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

}  // namespace tg
