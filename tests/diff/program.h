// A random lazy-graph program for the differential test against NumPy.
//
// A Program is a list of nodes: inputs (shape, dtype, values) and ops on earlier nodes, written with the
// public Tensor API's names. generate(seed) makes one deterministically from a seed (its own portable
// generator, no <random> distributions). Every node carries the shape and dtype the generator expects,
// computed here from tinygrad's rules (its promotion lattice, sum's accumulator, to_float...), never by
// asking the implementation; the NumPy side evaluates in those dtypes and the comparison checks that
// tg's result has them.
//
// The same description travels as JSON to the NumPy evaluator (tests/diff/numpy_ref.py), to the sandboxed
// child that runs it on tg (run_tg.h), and is printed as a standalone C++ repro (to_cpp).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tgdiff {

// The scalar dtypes a program can meet (int16 and uint32 only as results: int8+uint8, sum of uint8).
enum class DT : uint8_t { Bool, I8, U8, I16, U16, I32, U32, I64, U64, F16, F32, F64 };
const char* name(DT d);
DT dt_from_name(const std::string& n);
bool is_float(DT d);
bool is_int(DT d);  // integers, not bool
bool is_unsigned(DT d);
// tinygrad's least_upper_dtype: the smallest common ancestor in its promotion lattice.
DT lub(DT a, DT b);
DT lub_float(DT d);  // what exp/log/div compute in: floats stay, ints and bool go to float32
DT sum_acc(DT d);    // sum's accumulator: float16 -> float32, uints -> >= uint32, ints/bool -> >= int32

using Shape = std::vector<int64_t>;
int64_t numel(const Shape& s);

// One entry of Tensor::index: an integer or Slice(start, stop, step).
struct SliceArg {
  bool is_int = false;
  int64_t idx = 0;
  std::optional<int64_t> start, stop, step;
};

struct Node {
  std::string kind;  // "input", or the API op: "add", "sum", "pad", "cat", "scalar" (tensor op C++ scalar)...
  std::vector<int> args;  // earlier node ids
  DT dtype = DT::F32;     // expected result dtype
  DT cdtype = DT::F32;    // dtype the op computes in (operands' promoted dtype, sum's accumulator)
  Shape shape;            // expected result shape
  std::vector<double> fdata;   // input values (float dtypes): exactly representable in `dtype`
  std::vector<int64_t> idata;  // input values (ints, bool)
  std::vector<int64_t> ints;   // axes / shape / order / dim, by kind
  std::vector<std::pair<int64_t, int64_t>> pairs;  // pad (before, after) / shrink (begin, end)
  std::vector<SliceArg> slices;                    // index
  double value = 0, value2 = 0;  // pad / full value, clip bounds, scalar operand
  std::string sub;               // "scalar": the binary op
  bool scalar_int = false;       // "scalar": value is a C++ int (else a double)
  bool reverse = false;          // "scalar": scalar op tensor
  bool keepdim = false;
  int sched = 0;  // 0 lazy, 1 `.contiguous()`, 2 `.realize()` right after creation
};

struct Program {
  uint64_t seed = 0;
  std::vector<Node> nodes;
  std::vector<int> outputs;  // node ids compared with NumPy
  bool corealize = false;    // outputs realized together (else one by one)
};

Program generate(uint64_t seed);

nlohmann::json to_json(const Program& p);
Program from_json(const nlohmann::json& j);

// A human-readable listing (one line a node: id, op, args, shape, dtype) for failure messages.
std::string describe(const Program& p);
// A standalone C++ program that builds the same graph and prints the outputs.
std::string to_cpp(const Program& p);
std::string shape_str(const Shape& s);

// float16 bits of a double that is exactly representable in float16 (inputs are made so), and back.
uint16_t half_bits(double x);
double half_value(uint16_t h);

// Removes nodes no output depends on and renumbers the rest.
Program prune(const Program& p);

}  // namespace tgdiff
