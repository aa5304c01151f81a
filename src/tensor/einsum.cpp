// einsum: products of tensors summed along the subscripts a formula names (torch.einsum's formulas).
//
// Each operand's subscripts are parsed to ids (A-Z, a-z, then one id per dim the ellipsis covers, right-
// aligned across operands as broadcasting aligns them). A subscript repeated within one operand takes the
// diagonal (a view: flatten the two dims, pad, reshape, keep column 0). Then the operands are contracted
// left to right, two at a time: both are permuted and reshaped to one order of ids -- the ids that are
// still needed (by the output or a later operand) first, then those summed here -- multiplied with
// broadcasting and summed over the trailing ids. For "ij,jk->ik" that is (I,1,J) * (1,K,J) summed over
// the last axis: exactly what matmul builds, so it runs as the same one kernel.
#include <algorithm>

#include "tensor/internal.h"

namespace tg {

namespace {

constexpr int kLetters = 52;  // ids 0..25 are A..Z, 26..51 a..z (ASCII order: torch sorts implicit outputs so)

std::string id_name(int id) {
  if (id < 26) return std::string(1, static_cast<char>('A' + id));
  if (id < kLetters) return std::string(1, static_cast<char>('a' + id - 26));
  return "...";
}

// One side of the formula: its letters' ids in order, and where (if at all) its ellipsis stands.
struct Term {
  std::vector<int> ids;       // letters only
  int ellipsis_at = -1;       // index into ids before which the ellipsis stands; -1: none
};

Term parse_term(const std::string& f, size_t begin, size_t end, const std::string& formula) {
  Term t;
  for (size_t i = begin; i < end; i++) {
    char c = f[i];
    if (c >= 'A' && c <= 'Z') t.ids.push_back(c - 'A');
    else if (c >= 'a' && c <= 'z') t.ids.push_back(26 + c - 'a');
    else if (c == '.') {
      TG_CHECK(i + 2 < end && f[i + 1] == '.' && f[i + 2] == '.', "einsum: '.' at index ", i, " of '", formula,
               "' is not part of an ellipsis '...'");
      TG_CHECK(t.ellipsis_at < 0, "einsum: more than one ellipsis in one term of '", formula, "'");
      t.ellipsis_at = static_cast<int>(t.ids.size());
      i += 2;
    } else {
      TG_ERROR("einsum: invalid subscript '", std::string(1, c), "' at index ", i, " of '", formula, "': subscripts must be in [a-zA-Z]");
    }
  }
  return t;
}

// An operand while it is contracted: the tensor and the id of each of its dims.
struct Operand {
  Tensor t;
  std::vector<int> ids;
};

// t's diagonal over dims j and k (of equal size n), as the last dim; the other dims keep their order.
Tensor diagonal(const Tensor& t, int j, int k) {
  std::vector<int> order;
  for (int d = 0; d < t.ndim(); d++)
    if (d != j && d != k) order.push_back(d);
  order.push_back(j);
  order.push_back(k);
  Tensor x = t.permute(order);
  int64_t n = t.shape()[j];
  Shape lead(x.shape().begin(), x.shape().end() - 2);
  // (.., n*n) padded with n to (.., n, n+1): the diagonal element (i, i) lands in column 0 of row i
  Shape flat = lead, rows = lead;
  flat.push_back(n * n);
  rows.insert(rows.end(), {n, n + 1});
  std::vector<std::pair<int64_t, int64_t>> pad(lead.size() + 1, {0, 0});
  pad.back() = {0, n};
  x = x.reshape(flat).pad(pad).reshape(rows);
  std::vector<std::pair<int64_t, int64_t>> keep;
  for (int64_t s : rows) keep.emplace_back(0, s);
  keep.back() = {0, 1};
  Shape out = lead;
  out.push_back(n);
  return x.shrink(keep).reshape(out);
}

// a's dims laid out in `order` (ids), with a dim of 1 for each id it lacks.
Tensor align(const Operand& a, const std::vector<int>& order) {
  std::vector<int> perm;
  Shape shape;
  for (int id : order) {
    auto it = std::find(a.ids.begin(), a.ids.end(), id);
    if (it == a.ids.end()) {
      shape.push_back(1);
    } else {
      int d = static_cast<int>(it - a.ids.begin());
      perm.push_back(d);
      shape.push_back(a.t.shape()[d]);
    }
  }
  return a.t.permute(perm).reshape(shape);
}

// Sums a's dims whose ids are not in `keep`.
Operand sum_unneeded(Operand a, const std::vector<int>& keep) {
  std::vector<int> axes, ids;
  for (size_t d = 0; d < a.ids.size(); d++) {
    if (std::find(keep.begin(), keep.end(), a.ids[d]) == keep.end()) axes.push_back(static_cast<int>(d));
    else ids.push_back(a.ids[d]);
  }
  if (axes.empty()) return a;
  return {a.t.sum(axes), ids};
}

}  // namespace

Tensor Tensor::einsum(const std::string& formula_in, const std::vector<Tensor>& operands) {
  std::string f;
  for (char c : formula_in)
    if (c != ' ') f += c;
  const std::string& formula = formula_in;
  TG_CHECK(!operands.empty(), "einsum: needs at least one operand (formula '", formula, "')");
  size_t arrow = f.find("->");
  TG_CHECK(arrow == std::string::npos || f.find("->", arrow + 2) == std::string::npos, "einsum: more than one '->' in '", formula, "'");
  size_t lhs_end = arrow == std::string::npos ? f.size() : arrow;
  TG_CHECK(f.find('-') == std::string::npos || f.find('-') == arrow, "einsum: invalid subscript '-' in '", formula, "'");
  TG_CHECK(f.find('>') == std::string::npos || f.find('>') == arrow + 1, "einsum: invalid subscript '>' in '", formula, "'");
  std::vector<Term> terms;
  for (size_t b = 0;;) {
    size_t e = f.find(',', b);
    if (e == std::string::npos || e > lhs_end) e = lhs_end;
    terms.push_back(parse_term(f, b, e, formula));
    if (e == lhs_end) break;
    b = e + 1;
  }
  TG_CHECK(terms.size() == operands.size(), "einsum: the formula '", formula, "' has ", terms.size(), " operand",
           terms.size() == 1 ? "" : "s", ", but ", operands.size(), " tensor", operands.size() == 1 ? " was" : "s were", " given");

  // the ellipsis' dims of each operand; they broadcast against each other, right-aligned
  int ell = 0;
  std::vector<int> ell_dims(terms.size(), 0);
  for (size_t i = 0; i < terms.size(); i++) {
    int letters = static_cast<int>(terms[i].ids.size()), nd = operands[i].ndim();
    if (terms[i].ellipsis_at < 0) {
      TG_CHECK(letters == nd, "einsum: operand ", i, " of shape ", operands[i].shape(), " has ", nd, " dims, but its subscripts in '",
               formula, "' name ", letters, " (and there is no ellipsis)");
    } else {
      TG_CHECK(letters <= nd, "einsum: operand ", i, " of shape ", operands[i].shape(), " has ", nd, " dims, fewer than its ", letters,
               " subscripts in '", formula, "'");
      ell_dims[i] = nd - letters;
      ell = std::max(ell, ell_dims[i]);
    }
  }
  auto ell_ids = [&](int n) {  // the ids of the last n of the ellipsis' dims
    std::vector<int> v;
    for (int j = ell - n; j < ell; j++) v.push_back(kLetters + j);
    return v;
  };

  // every operand's dims as ids, and the size of each id (1 broadcasts, as torch)
  std::vector<Operand> ops;
  std::vector<int64_t> size(static_cast<size_t>(kLetters + ell), -1);
  std::vector<int> count(static_cast<size_t>(kLetters + ell), 0);  // appearances in the inputs
  for (size_t i = 0; i < terms.size(); i++) {
    std::vector<int> ids = terms[i].ids;
    if (terms[i].ellipsis_at >= 0) {
      std::vector<int> e = ell_ids(ell_dims[i]);
      ids.insert(ids.begin() + terms[i].ellipsis_at, e.begin(), e.end());
    }
    Operand op{operands[i], ids};
    for (int id : terms[i].ids) count[static_cast<size_t>(id)]++;
    // a subscript repeated in one operand: its diagonal
    for (size_t j = 0; j < op.ids.size(); j++) {
      for (size_t k = j + 1; k < op.ids.size(); k++) {
        if (op.ids[k] != op.ids[j]) continue;
        int64_t nj = op.t.shape()[j], nk = op.t.shape()[k];
        TG_CHECK(nj == nk, "einsum: subscript ", id_name(op.ids[j]), " is repeated for operand ", i, " of shape ", operands[i].shape(),
                 " but the sizes don't match, ", nj, " != ", nk, " (formula '", formula, "')");
        int id = op.ids[j];
        std::vector<int> rest;
        for (size_t d = 0; d < op.ids.size(); d++)
          if (d != j && d != k) rest.push_back(op.ids[d]);
        rest.push_back(id);
        op = {diagonal(op.t, static_cast<int>(j), static_cast<int>(k)), rest};
        j = static_cast<size_t>(-1);  // the dims moved: look again from the start
        break;
      }
    }
    for (size_t d = 0; d < op.ids.size(); d++) {
      int64_t n = op.t.shape()[d];
      int64_t& s = size[static_cast<size_t>(op.ids[d])];
      TG_CHECK(s == -1 || s == n || s == 1 || n == 1, "einsum: subscript ", id_name(op.ids[d]), " has size ", n, " for operand ", i,
               " of shape ", operands[i].shape(), ", which does not broadcast with the size ", s, " seen before (formula '", formula, "')");
      if (s == -1 || s == 1) s = n;
    }
    ops.push_back(std::move(op));
  }

  // the output's ids: given after "->", or the ellipsis' dims then the letters that appear once, sorted
  std::vector<int> out;
  if (arrow != std::string::npos) {
    Term o = parse_term(f, arrow + 2, f.size(), formula);
    for (size_t j = 0; j < o.ids.size(); j++) {
      int id = o.ids[j];
      TG_CHECK(count[static_cast<size_t>(id)] > 0, "einsum: output subscript ", id_name(id), " does not appear in the inputs of '",
               formula, "'");
      TG_CHECK(std::count(o.ids.begin(), o.ids.end(), id) == 1, "einsum: output subscript ", id_name(id), " appears more than once in '",
               formula, "'");
    }
    out = o.ids;
    if (o.ellipsis_at >= 0) {
      std::vector<int> e = ell_ids(ell);
      out.insert(out.begin() + o.ellipsis_at, e.begin(), e.end());
    }  // else the ellipsis' dims are summed, as torch
  } else {
    out = ell_ids(ell);
    for (int id = 0; id < kLetters; id++)
      if (count[static_cast<size_t>(id)] == 1) out.push_back(id);
  }

  // contract left to right; an id is summed as soon as no later operand and not the output needs it
  auto needed_after = [&](size_t i) {  // the ids the output and operands i.. use
    std::vector<int> keep = out;
    for (size_t j = i; j < ops.size(); j++) keep.insert(keep.end(), ops[j].ids.begin(), ops[j].ids.end());
    return keep;
  };
  Operand cur = sum_unneeded(ops[0], needed_after(1));
  for (size_t i = 1; i < ops.size(); i++) {
    std::vector<int> keep = needed_after(i + 1);
    std::vector<int> others = keep;
    others.insert(others.end(), cur.ids.begin(), cur.ids.end());
    Operand b = sum_unneeded(ops[i], others);  // ids only this operand has
    std::vector<int> order, summed;
    for (const std::vector<int>* ids : {&cur.ids, &b.ids})
      for (int id : *ids) {
        if (std::find(order.begin(), order.end(), id) != order.end() || std::find(summed.begin(), summed.end(), id) != summed.end()) continue;
        (std::find(keep.begin(), keep.end(), id) != keep.end() ? order : summed).push_back(id);
      }
    std::vector<int> all = order;
    all.insert(all.end(), summed.begin(), summed.end());
    Tensor p = align(cur, all) * align(b, all);
    if (!summed.empty()) {
      std::vector<int> axes;
      for (size_t j = 0; j < summed.size(); j++) axes.push_back(-1 - static_cast<int>(j));
      p = p.sum(axes);
    }
    cur = {p, order};
  }
  return align(sum_unneeded(cur, out), out);
}

}  // namespace tg
