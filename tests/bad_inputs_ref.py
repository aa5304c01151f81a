#!/usr/bin/python3
"""Expected values of the bad-input catalogue (tests/test_bad_inputs_*.cpp).

Computed with PyTorch 1.13 and NumPy from Debian's python3, independently of tinygrad.cpp. Where
tinygrad.cpp documents a behaviour PyTorch does not have (an out-of-range index reads 0 by default,
integer division by zero is 0), the value is computed from that documented rule in plain NumPy/Python.

    /usr/bin/python3 tests/bad_inputs_ref.py > tests/bad_inputs_ref.h
"""
import math

import numpy as np
import torch
import torch.nn.functional as F

nan, inf = float("nan"), float("inf")
T = torch.tensor
CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


s = T(3.0)  # the 0-d tensor of the 0-d cases

# ---- 0-d tensors: dims 0 and -1 act on one element -----------------------------------------------
@case
def zero_dim_sum_neg1(): return s.sum(-1)
@case
def zero_dim_sum_0(): return s.sum(0)
@case
def zero_dim_sum_keepdim(): return s.sum(-1, keepdim=True)
@case
def zero_dim_mean(): return s.mean(-1)
@case
def zero_dim_max(): return s.amax(0)
@case
def zero_dim_min(): return s.amin(-1)
@case
def zero_dim_prod(): return s.prod(-1)
@case
def zero_dim_any(): return s.any(-1)
@case
def zero_dim_all(): return s.all(0)
@case
def zero_dim_var(): return s.var(-1)
@case
def zero_dim_var_biased(): return s.var(-1, unbiased=False)
@case
def zero_dim_std(): return s.std(0)
@case
def zero_dim_logsumexp(): return s.logsumexp(-1)
@case
def zero_dim_softmax(): return s.softmax(-1)
@case
def zero_dim_softmax_0(): return s.softmax(0)
@case
def zero_dim_log_softmax(): return s.log_softmax(-1)
@case
def zero_dim_cumsum(): return s.cumsum(0)
@case
def zero_dim_cumsum_neg1(): return s.cumsum(-1)
@case
def zero_dim_cummax(): return s.cummax(0).values
@case
def zero_dim_argmax(): return s.argmax(0)
@case
def zero_dim_argmax_keepdim(): return s.argmax(-1, keepdim=True)
@case
def zero_dim_argmin(): return s.argmin(0)
@case
def zero_dim_topk_values(): return s.topk(1).values
@case
def zero_dim_topk_indices(): return s.topk(1).indices
@case
def zero_dim_flip(): return s.flip(0)
@case
def zero_dim_flip_neg1(): return s.flip(-1)
@case
def zero_dim_transpose(): return s.transpose(0, -1)
@case
def zero_dim_squeeze(): return s.squeeze(0)
@case
def zero_dim_squeeze_neg1(): return s.squeeze(-1)
@case
def zero_dim_unsqueeze_neg1(): return s.unsqueeze(-1)
@case
def zero_dim_unsqueeze_0(): return s.unsqueeze(0)
@case
def zero_dim_flatten(): return s.flatten()
@case
def zero_dim_flatten_0_neg1(): return s.flatten(0, -1)
@case
def zero_dim_gather(): return s.gather(0, T(0))
@case
def zero_dim_gather_neg1(): return s.gather(-1, T(0))
@case
def zero_dim_scatter_value(): return s.scatter(0, T(0), 5.0)
@case
def zero_dim_scatter_src(): return s.scatter(-1, T(0), T(7.0))
@case
def zero_dim_stack_neg1(): return torch.stack([s, s], -1)
@case
def zero_dim_roll(): return s.roll(1)
@case
def zero_dim_expand(): return s.expand(2, 3)
@case
def zero_dim_repeat(): return s.repeat(2)
@case
def zero_dim_one_hot(): return F.one_hot(T(2), 4)
@case
def zero_dim_masked_fill(): return s.masked_fill(T(True), 1.0)
@case
def zero_dim_reshape(): return s.reshape(1, 1)

# ---- NaN and infinities, as PyTorch --------------------------------------------------------------
@case
def nan_logsumexp_inf(): return T([inf, 1.0]).logsumexp(0)
@case
def nan_logsumexp_neg_inf(): return T([-inf, -inf]).logsumexp(0)
@case
def nan_logsumexp_inf_neg_inf(): return T([inf, -inf]).logsumexp(0)
@case
def nan_logsumexp_inf_inf(): return T([inf, inf]).logsumexp(0)
@case
def nan_logsumexp_nan(): return T([nan, 1.0]).logsumexp(0)
@case
def nan_logsumexp_rows(): return T([[inf, 1.0], [1.0, 2.0], [-inf, -inf]]).logsumexp(1)
@case
def nan_logsumexp_keepdim(): return T([[-inf, 0.0], [-inf, -inf]]).logsumexp(1, keepdim=True)
@case
def nan_maximum(): return torch.maximum(T([1.0, nan]), T([nan, 2.0]))
@case
def nan_minimum(): return torch.minimum(T([1.0, nan]), T([nan, 2.0]))
@case
def nan_maximum_second(): return torch.maximum(T([1.0, -inf]), T([nan, nan]))
@case
def nan_minimum_second(): return torch.minimum(T([1.0, inf]), T([nan, nan]))
@case
def nan_maximum_inf(): return torch.maximum(T([-inf, 1.0, inf]), T([0.0]))
# a rounded 0 keeps the sign of its input (the reciprocal makes the sign visible: -inf vs inf)
@case
def nan_trunc_signed_zero(): return torch.reciprocal(torch.trunc(T([-0.5, 0.5, -0.0, 0.0, -2.5])))
@case
def nan_ceil_signed_zero(): return torch.reciprocal(torch.ceil(T([-0.5, 0.5, -0.0, -1.5])))
@case
def nan_floor_signed_zero(): return torch.reciprocal(torch.floor(T([-0.0, 0.5, -0.5, 1.5])))
@case
def nan_round_signed_zero(): return torch.reciprocal(torch.round(T([-0.4, 0.4, -0.5, 0.5, -1.5])))
@case
def nan_maximum_tie_grad():
    x = T([1.0, 2.0, 3.0], requires_grad=True)
    torch.maximum(x, T([1.0, 3.0, 2.0])).sum().backward()
    return x.grad
@case
def nan_minimum_tie_grad():
    x = T([1.0, 2.0, 3.0], requires_grad=True)
    torch.minimum(x, T([1.0, 3.0, 2.0])).sum().backward()
    return x.grad
@case
def nan_topk_values(): return T([1.0, nan, 2.0]).topk(2).values
@case
def nan_topk_indices(): return T([1.0, nan, 2.0]).topk(2).indices
@case
def nan_topk_smallest_values(): return T([1.0, nan, 2.0]).topk(2, largest=False).values
@case
def nan_topk_smallest_indices(): return T([1.0, nan, 2.0]).topk(2, largest=False).indices
@case
def nan_topk_smallest_all_values(): return T([1.0, nan, 2.0, -inf]).topk(4, largest=False).values
@case
def nan_topk_smallest_all_indices(): return T([1.0, nan, 2.0, -inf]).topk(4, largest=False).indices
@case
def nan_topk_inf_values(): return T([-inf, inf, nan, 0.0]).topk(4).values
@case
def nan_topk_inf_indices(): return T([-inf, inf, nan, 0.0]).topk(4).indices
def long_with_nan():  # 2000 entries 0..1999 with a NaN at 777
    x = torch.arange(2000, dtype=torch.float32)
    x[777] = nan
    return x
@case
def nan_topk_long_values(): return long_with_nan().topk(3).values
@case
def nan_topk_long_indices(): return long_with_nan().topk(3).indices
@case
def nan_topk_long_smallest_values():  # 1030 entries, NaN but for the first three
    x = torch.full((1030,), nan)
    x[:3] = T([5.0, 6.0, 7.0])
    return x.topk(5, largest=False).values
@case
def nan_argmax(): return T([1.0, nan, 3.0, nan]).argmax()
@case
def nan_argmin(): return T([1.0, nan, -3.0]).argmin()
@case
def nan_argmax_inf(): return T([1.0, inf, inf]).argmax()
@case
def nan_argmin_neg_inf(): return T([1.0, -inf, -inf]).argmin()
@case
def nan_argmax_rows(): return T([[1.0, 5.0, nan], [2.0, 1.0, 0.0]]).argmax(1)
@case
def nan_max(): return T([1.0, nan, 3.0]).max()
@case
def nan_max_rows(): return T([[1.0, nan], [3.0, 4.0]]).amax(1)
@case
def nan_min(): return T([1.0, nan, -3.0]).min()
@case
def nan_relu(): return T([nan, -1.0, inf]).relu()
@case
def nan_cummax(): return T([1.0, nan, 3.0, 0.0]).cummax(0).values
@case
def nan_cummax_long():  # 300 entries: the blocked scan, NaN at 10 carried into later blocks
    x = torch.arange(300, dtype=torch.float32)
    x[10] = nan
    return x.cummax(0).values
@case
def nan_cummax_inf(): return T([-inf, 1.0, inf, 0.0]).cummax(0).values
@case
def nan_cumsum_inf(): return T([inf, -inf, 1.0]).cumsum(0)
@case
def nan_clip(): return T([nan, -5.0, 5.0]).clip(-1, 1)
@case
def nan_clip_inf(): return T([inf, -inf]).clip(-1, 1)
@case
def nan_clip_nan_min(): return T([1.0, -5.0, 5.0]).clip(nan, 1)
@case
def nan_clip_nan_max(): return T([1.0, -5.0, 5.0]).clip(-1, nan)
@case
def nan_clip_int_float_bounds(): return T([3, 1], dtype=torch.int32).clip(1.5, 2.5)
@case
def nan_softmax_neg_inf(): return T([-inf, 1.0]).softmax(0)
@case
def nan_softmax_inf(): return T([inf, 1.0]).softmax(0)
@case
def nan_log_softmax_neg_inf(): return T([-inf, 1.0]).log_softmax(0)
@case
def nan_sigmoid(): return T([inf, -inf, nan]).sigmoid()
@case
def nan_tanh(): return T([inf, -inf]).tanh()
@case
def nan_exp(): return T([inf, -inf, nan]).exp()
@case
def nan_log(): return T([0.0, -1.0, inf]).log()
@case
def nan_div_zero(): return T([1.0, -1.0, 0.0]) / 0.0
@case
def nan_mean_inf(): return T([inf, -inf]).mean()
@case
def nan_max_pool(): return F.max_pool2d(T([[[[1.0, nan], [3.0, 4.0]]]]), 2)

# ---- invalid input that PyTorch accepts (the rest raise in both) ----------------------------------
@case
def invalid_max_pool_pad_half(): return F.max_pool2d(torch.arange(16.0).reshape(1, 1, 4, 4), 2, padding=1)
@case
def invalid_avg_pool_pad_half(): return F.avg_pool2d(torch.arange(16.0).reshape(1, 1, 4, 4), 3, padding=1)
@case
def invalid_full_int_min(): return torch.full((2,), -2.0**31, dtype=torch.int32)
@case
def invalid_full_uint8_neg(): return torch.full((2,), -1, dtype=torch.uint8)
@case
def invalid_full_half_inf(): return torch.full((2,), inf, dtype=torch.float16)
@case
def invalid_full_float_nan(): return torch.full((2,), nan, dtype=torch.float32)
@case
def invalid_full_bool_nan(): return torch.full((2,), nan, dtype=torch.bool)
@case
def invalid_full_int_truncates(): return torch.full((2,), 1.5, dtype=torch.int32)
@case
def invalid_scalar_add_wraps(): return T([1], dtype=torch.int32) + 3000000000
@case
def invalid_scalar_add_uint8_wraps(): return T([1], dtype=torch.uint8) + 300
@case
def invalid_arange_step_inf(): return torch.arange(0, 5, inf)
@case
def invalid_arange_empty(): return torch.arange(5, 5, 1)
@case
def invalid_arange_down(): return torch.arange(5, 0, -2)

# ---- labels and indices out of range: the documented default, and checked mode's valid cases ----
@case
def labels_one_hot_default():  # an entry outside [0, 3) gives a zero row
    y = np.array([0, 3, -1, 2])
    return (y[:, None] == np.arange(3)[None, :]).astype(np.int32)
@case
def labels_index_default():  # x[i]: negative counts from the end, still out of range reads 0
    x, i = np.array([10.0, 20.0, 30.0]), np.array([3, -1, -4, 1])
    return np.where((i >= -3) & (i < 3), x[np.clip(np.where(i < 0, i + 3, i), 0, 2)], 0.0)
@case
def labels_gather_default():
    x, i = np.array([10.0, 20.0, 30.0]), np.array([3, -1, 0])
    return np.where((i >= -3) & (i < 3), x[np.clip(np.where(i < 0, i + 3, i), 0, 2)], 0.0)
@case
def labels_scatter_default():  # zeros(3) scattered with 1 at [5, -1]: 5 writes nothing, -1 the last
    x = np.zeros(3)
    for i in [5, -1]:
        if -3 <= i < 3:
            x[i] = 1.0
    return x
@case
def labels_embedding_default():  # weight rows [0,1], [2,3], [4,5]; ids 3 and -4 give zero rows
    w, i = np.arange(6.0).reshape(3, 2), np.array([1, 3, -1, -4])
    ok = (i >= -3) & (i < 3)
    return np.where(ok[:, None], w[np.clip(np.where(i < 0, i + 3, i), 0, 2)], 0.0)
def ce_terms(logits, y):  # -log_softmax picked; 0 for a label outside [0, C)
    ls = torch.log_softmax(logits, 1).numpy()
    return np.array([-ls[r, c] if 0 <= c < ls.shape[1] else 0.0 for r, c in enumerate(y)])
LOGITS = T([[1.0, 2.0, 3.0], [1.0, 0.0, -1.0]])
@case
def labels_sparse_ce_default(): return ce_terms(LOGITS, [2, 3]).sum() / 2
@case
def labels_cross_entropy_default(): return ce_terms(LOGITS, [2, 5]).mean()
@case
def labels_nll_default():
    x = LOGITS.numpy()
    return np.mean([-x[0, 1], 0.0])  # label 1, then label 3 (out of range: term 0, still counted)
@case
def labels_checked_index_neg(): return T([10.0, 20.0, 30.0])[T([-1, 0])]
@case
def labels_checked_one_hot_ok(): return F.one_hot(T([0, 2]), 3)
@case
def labels_checked_embedding_ok():
    w = torch.arange(6.0).reshape(3, 2)
    return F.embedding(T([2, 0]), w)
@case
def labels_checked_sparse_ce_ignore():
    return F.cross_entropy(LOGITS, T([2, -1]), ignore_index=-1)
@case
def labels_checked_nll_ignore():
    return F.nll_loss(LOGITS, T([1, -1]), ignore_index=-1)
@case
def labels_checked_gather_ok(): return T([10.0, 20.0, 30.0]).gather(0, T([2, 0]))

# ---- zero-size reductions and products -----------------------------------------------------------
@case
def zero_size_sum(): return torch.ones(2, 0).sum(1)
@case
def zero_size_sum_int(): return torch.ones(2, 0, dtype=torch.int32).sum(1)
@case
def zero_size_sum_axis0(): return torch.ones(0, 3).sum(0)
@case
def zero_size_matmul(): return torch.ones(2, 0) @ torch.ones(0, 4)
@case
def zero_size_dot_vectors(): return torch.ones(0) @ torch.ones(0)
@case
def zero_size_prod(): return torch.ones(2, 0).prod(1)
@case
def zero_size_mean(): return torch.ones(2, 0).mean(1)
@case
def zero_size_var(): return torch.ones(2, 0).var(1)
@case
def zero_size_any(): return torch.ones(2, 0).any(1)
@case
def zero_size_all(): return torch.ones(2, 0).all(1)
@case
def zero_size_logsumexp(): return torch.ones(2, 0).logsumexp(1)
@case
def zero_size_softmax(): return torch.ones(2, 0).softmax(1)
@case
def zero_size_cumsum(): return torch.ones(2, 0).cumsum(1)
@case
def zero_size_shrink_of_pad(): return F.pad(T([1.0, 2.0]), (1, 1))[1:1]
@case
def zero_size_sum_of_padded_shrink(): return F.pad(T([1.0, 2.0]), (1, 1))[1:1].sum()
@case
def zero_size_pad_of_empty_shrink(): return F.pad(F.pad(T([1.0, 2.0]), (1, 1))[1:1], (1, 1))
@case
def zero_size_empty_shrink_2d(): return F.pad(torch.ones(2, 3).exp(), (1, 1, 1, 1))[1:1, :].sum(0)

# ---- pad pushed through ops where f(0) != 0 -------------------------------------------------------
X, Y = T([0.0, 1.0]), T([0.5, 2.5])
@case
def pad_cat_exp(): return torch.cat([X.exp(), Y])
@case
def pad_cat_log(): return torch.cat([Y, (X + 1).log()])
@case
def pad_cat_reciprocal(): return torch.cat([(X + 1).reciprocal(), Y])
@case
def pad_cat_sigmoid(): return torch.cat([Y, X.sigmoid()])
@case
def pad_cat_div(): return torch.cat([Y / (X + 1), Y])
@case
def pad_cat_cos(): return torch.cat([X.cos(), Y])
@case
def pad_cat_plus_const(): return torch.cat([X + 1.5, Y])
@case
def pad_stack_exp(): return torch.stack([X.exp(), Y])
@case
def pad_strided_slice_cat_exp(): return torch.cat([X.exp(), Y])[::2]
@case
def pad_strided_slice_exp(): return (T([0.0, 1.0, 2.0, 3.0, 4.0]).exp())[1::3]
@case
def pad_pad_exp(): return F.pad(X.exp(), (1, 1))
@case
def pad_pad_sigmoid(): return F.pad(X.sigmoid(), (2, 0))
@case
def pad_exp_of_pad(): return F.pad(X, (1, 0)).exp()
@case
def pad_roll_exp(): return X.exp().roll(1, 0)
@case
def pad_pad2d_log(): return F.pad((X + 1).log().reshape(1, 2), (1, 1, 1, 0))

# ---- weight and dataset files: the values a valid file holds ------------------------------------
@case
def files_npy_valid(): return np.frombuffer(np.array([1.5, -2.0], dtype="<f4").tobytes(), dtype="<f4")
@case
def files_idx_valid(): return np.frombuffer(bytes([1, 2, 3, 255]), dtype=np.uint8).reshape(2, 2)

# ---- integer division: truncation, x / 0 == 0, INT_MIN / -1 == INT_MIN (wraps) --------------------
def c_div(a, b, dtype):  # C's truncating division in Python ints, then wrapped to the dtype's width
    q = [0 if y == 0 else (abs(x) // abs(y)) * (1 if (x < 0) == (y < 0) else -1) for x, y in zip(a, b)]
    info = np.iinfo(dtype)
    span = info.max - info.min + 1
    return np.array([(v - info.min) % span + info.min for v in q], dtype=dtype)
@case
def int_div_by_zero(): return c_div([7, -7, 0], [0, 0, 0], np.int32)
@case
def int_div_by_zero_folded(): return c_div([7, 7], [0, 0], np.int32)
@case
def int_div_min_by_neg1(): return c_div([-2**31, 5], [-1, -1], np.int32)
@case
def int_div_min_by_neg1_folded(): return c_div([-2**31], [-1], np.int32)
@case
def int_div_int64_min(): return c_div([-2**63], [-1], np.int64)
@case
def int_div_int8_min(): return c_div([-128, 100], [-1, 0], np.int8)
@case
def int_div_truncates(): return c_div([-7, 7, -7, 7], [2, -2, -2, 2], np.int32)
@case
def int_div_uint8_by_zero(): return c_div([200, 3], [0, 2], np.uint8)
@case
def int_div_scalar_zero(): return c_div([9, -9], [0, 0], np.int32)
@case
def int_div_mixed_folded(): return c_div([7, 8], [0, 0], np.int32)


def literal(v):
    v = float(v)
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "INFINITY" if v > 0 else "-INFINITY"
    return repr(v)


def main():
    print("// Generated by tests/bad_inputs_ref.py with PyTorch %s and NumPy %s: do not edit." % (torch.__version__, np.__version__))
    print("// Expected values of the bad-input catalogue (tests/test_bad_inputs_*.cpp).")
    print("#pragma once")
    print("#include <cmath>")
    print("#include <cstdint>")
    print("#include <vector>\n")
    print("namespace bad_inputs {\n")
    print("struct Ref {\n  std::vector<int64_t> shape;\n  std::vector<double> values;\n};\n")
    for name, fn in CASES.items():
        v = fn()
        a = v.detach().numpy() if isinstance(v, torch.Tensor) else np.asarray(v)
        shape = ", ".join(str(d) for d in a.shape)
        vals = ", ".join(literal(x) for x in a.astype(np.float64).reshape(-1))
        print("inline const Ref %s{{%s}, {%s}};" % (name, shape, vals))
    print("\n}  // namespace bad_inputs")


if __name__ == "__main__":
    main()
