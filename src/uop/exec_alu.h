// Evaluates one ALU op on constant operands with the exact semantics of the generated C code
// (integer wrap-around at the dtype's width, division/modulo/shifts as the README's "Semantics"
// section defines them, IEEE floats). Used by constant folding and by the INTERP backend, so that both
// agree with compiled kernels.
#pragma once
#include <vector>

#include "uop/uop.h"

namespace tg {

// A value of any scalar dtype: ints and bools in i (bit pattern of the dtype), floats in f.
struct Value {
  int64_t i = 0;
  double f = 0;
};

Value exec_alu(Ops op, DType dtype, const std::vector<Value>& srcs, DType src_dtype);
Value cast_value(Value v, DType from, DType to);
Value const_to_value(const UOp& c);
UOpPtr value_to_const(DType dt, Value v);
// The reduce `op` (ADD, MAX or MUL) of n >= 0 copies of v in dtype dt, without n steps: integers as
// the kernel's wrapping arithmetic gives them, a float sum as the correctly rounded n*v, a float product
// as pow(v, n) (within an ulp), MAX as v. n == 0 gives the op's identity.
Value reduce_repeated(Ops op, DType dt, Value v, int64_t n);

}  // namespace tg
