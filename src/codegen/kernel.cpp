#include "codegen/kernel.h"
#include "codegen/passes.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <set>

#include "tg/error.h"
#include "uop/rewrite.h"

namespace tg {

const char* optops_name(OptOps op) {
  switch (op) {
    case OptOps::UPCAST: return "UPCAST";
    case OptOps::UNROLL: return "UNROLL";
    case OptOps::LOCAL: return "LOCAL";
    case OptOps::GROUP: return "GROUP";
    case OptOps::GROUPTOP: return "GROUPTOP";
    case OptOps::PADTO: return "PADTO";
    case OptOps::NOLOCALS: return "NOLOCALS";
    case OptOps::SWAP: return "SWAP";
    case OptOps::BLOCK: return "BLOCK";
  }
  return "?";
}

std::string Opt::str() const { return std::string(optops_name(op)) + "(" + std::to_string(axis) + ", " + std::to_string(amount) + ")"; }


Kernel::Kernel(UOpPtr ast, const Renderer& ren) : ast_(std::move(ast)), ren_(&ren) {
  // several STOREs (a multi-output kernel) store over the same loop nest: the first one's view is views_[0]
  TG_ASSERT(ast_->op == Ops::SINK && !ast_->src.empty());
  for (auto& st : ast_->src) {
    TG_ASSERT(st->op == Ops::STORE && ShapeTracker::of(*st->src[1]).shape() == ShapeTracker::of(*ast_->src[0]->src[1]).shape(), "a kernel's STOREs store over different shapes");
    if (std::find(views_.begin(), views_.end(), st->src[1]) == views_.end()) views_.push_back(st->src[1]);
  }
  std::vector<ReduceArg> reduces;
  for (auto& u : ast_->toposort()) {
    if (u->op == Ops::VIEW && std::find(views_.begin(), views_.end(), u) == views_.end()) views_.push_back(u);
    if (u->op == Ops::REDUCE_AXIS) reduces.push_back(std::get<ReduceArg>(u->arg));
  }
  view_dtypes_.assign(views_.size(), dtypes::void_);
  loaded_.assign(views_.size(), false);
  for (auto& u : ast_->toposort())
    if (u->op == Ops::LOAD || u->op == Ops::STORE)
      for (size_t i = 0; i < views_.size(); i++)
        if (u->src[1] == views_[i]) {
          if (view_dtypes_[i] == dtypes::void_) view_dtypes_[i] = u->src[0]->dtype.base();
          if (u->op == Ops::LOAD) loaded_[i] = true;
        }
  Shape out = ShapeTracker::of(*views_[0]).shape();
  // the loop sizes: the largest view's, except that a dim some view has as 0 is empty (a reduce over
  // a zero-length axis runs no iterations and leaves its identity)
  Shape full = out;
  for (auto& v : views_) {
    const Shape& s = ShapeTracker::of(*v).shape();
    TG_ASSERT(s.size() == full.size(), "kernel views of different ranks");
    for (size_t i = 0; i < s.size(); i++) full[i] = (full[i] == 0 || s[i] == 0) ? 0 : std::max(full[i], s[i]);
  }
  // reduce dims last. A dim is a reduce dim when some reduce reduces it, also when the output has it
  // whole: a reduce whose result is read back over the rows it reduced (softmax) runs its loops over the
  // row, and the STORE its own loop over the same dim, after them.
  auto reduced = [&](int i) {
    if (out[i] != full[i]) return true;
    return full[i] > 1 && std::any_of(reduces.begin(), reduces.end(), [&](const ReduceArg& r) { return std::count(r.axes.begin(), r.axes.end(), i) > 0; });
  };
  std::vector<int> keep, red, perm;
  for (int i = 0; i < static_cast<int>(full.size()); i++) (reduced(i) ? red : keep).push_back(i);
  perm = keep;
  perm.insert(perm.end(), red.begin(), red.end());
  // merge neighbouring dims of the same kind when every view walks them as one (and every reduce
  // reduces both or neither)
  std::vector<ShapeTracker> sts;
  for (auto& v : views_) sts.push_back(ShapeTracker::of(*v).permute(perm));
  std::vector<std::vector<std::optional<int64_t>>> strides;
  for (auto& st : sts) strides.push_back(st.real_strides());
  auto same_reduces = [&](int a, int b) {
    for (auto& r : reduces) {
      bool ia = std::count(r.axes.begin(), r.axes.end(), a) > 0, ib = std::count(r.axes.begin(), r.axes.end(), b) > 0;
      if (ia != ib) return false;
    }
    return true;
  };
  std::vector<std::vector<int>> merged;  // kernel dims as groups of permuted dims
  int n = static_cast<int>(perm.size()), nkeep = static_cast<int>(keep.size());
  int last_real = -1;  // the last dim of size > 1 in the current group
  for (int i = 0; i < n; i++) {
    int64_t size = full[perm[i]];
    bool same_kind = !merged.empty() && (merged.back().back() >= nkeep) == (i >= nkeep) && same_reduces(perm[merged.back().back()], perm[i]);
    bool mergeable = same_kind && (size == 1 || last_real < 0);
    if (same_kind && !mergeable) {
      mergeable = true;
      for (size_t k = 0; k < sts.size() && mergeable; k++) {
        auto sp = strides[k][last_real], si = strides[k][i];
        const View& v = sts[k].views.back();
        auto full_dim = [&](int d) { return !v.mask || (*v.mask)[d] == std::pair<int64_t, int64_t>{0, v.shape[d]}; };
        mergeable = sts[k].views.size() == 1 && full_dim(last_real) && full_dim(i) && sp && si && *sp == *si * sts[k].shape()[i];
      }
    }
    if (mergeable) merged.back().push_back(i);
    else { merged.push_back({i}); last_real = -1; }
    if (size > 1) last_real = i;
  }
  Shape kshape;
  for (auto& g : merged) {
    std::vector<int> axes;
    for (int i : g) axes.push_back(perm[i]);
    types_.push_back(g.front() < nkeep ? AxisType::GLOBAL : AxisType::REDUCE);
    origin_.push_back(axes);
  }
  for (auto& st : sts) {
    Shape s;
    for (auto& g : merged) {
      int64_t m = 1;
      for (int i : g) m *= st.shape()[i];
      s.push_back(m);
    }
    sts_.push_back(st.reshape(s));
  }
  base_shape_ = full_shape();
}

Shape Kernel::full_shape() const {
  Shape full = sts_[0].shape();
  for (auto& st : sts_)
    for (size_t i = 0; i < full.size(); i++) full[i] = (full[i] == 0 || st.shape()[i] == 0) ? 0 : std::max(full[i], st.shape()[i]);
  return full;
}

Shape Kernel::output_shape() const { return sts_[0].shape(); }

std::vector<int> Kernel::dims_of(AxisType t) const {
  std::vector<int> r;
  for (int i = 0; i < shape_len(); i++)
    if (types_[i] == t) r.push_back(i);
  return r;
}

int Kernel::axis_in(AxisType t, int d) const {
  std::vector<int> ds = dims_of(t);
  return static_cast<int>(std::find(ds.begin(), ds.end(), d) - ds.begin());
}

std::optional<int64_t> Kernel::stride(size_t i, int d) const { return sts_[i].real_strides()[d]; }

DType Kernel::view_dtype(size_t i) const { return view_dtypes_.at(i); }

// The UPCAST/UNROLL dim that the renderer turns into vector lanes: a power of two of at most 64 bytes,
// contiguous in the output (an UPCAST) or in some load, padded or not.
int Kernel::vector_dim() const {
  if (ren_->max_vector_bytes() == 0) return -1;
  Shape full = full_shape();
  // the first dim of `type` that is contiguous in the output (pass 0) or in a load (pass 1)
  auto first = [&](AxisType type, int pass) {
    for (int d = 0; d < shape_len(); d++) {
      if (types_[d] != type) continue;
      int64_t w = full[d];
      if (w < 2 || (w & (w - 1)) != 0) continue;
      for (size_t i = 0; i < sts_.size(); i++) {
        if (pass == 0 ? i != output_view() : !is_load_view(i)) continue;
        DType dt = view_dtype(i);
        if (dt == dtypes::void_ || dt.is_bool()) continue;
        // a mask (padding) does not matter here: masked lanes are read under a lane mask or stored one by one
        if (w * dt.itemsize() <= ren_->max_vector_bytes() && sts_[i].real_strides(true)[d] == std::optional<int64_t>{1}) return d;
      }
    }
    return -1;
  };
  // an UPCAST contiguous in the output (whole vector stores), unless one contiguous in a load is wider
  // (a conv's channel tile: 16 channels of packed weights as lanes, its 8 image columns as rows; the
  // columns as lanes would make twice the accumulators, more than the registers hold); then an UNROLL
  // contiguous in a load (vector partial sums)
  int out = first(AxisType::UPCAST, 0), load = first(AxisType::UPCAST, 1);
  if (out >= 0 && (load < 0 || full[out] >= full[load])) return out;
  if (load >= 0) return load;
  return first(AxisType::UNROLL, 1);
}

int Kernel::insert_point(AxisType t) const {
  int i = 0;
  while (i < shape_len() && (t == AxisType::UPCAST || t == AxisType::UNROLL || types_[i] <= t)) i++;
  return i;
}

std::vector<ShapeTracker*> Kernel::trackers() {
  std::vector<ShapeTracker*> r;
  for (auto& st : sts_) r.push_back(&st);
  if (reduce_guard_) r.push_back(&*reduce_guard_);
  return r;
}

void Kernel::shift_to(int dim, int64_t amount, AxisType type, bool top, int insert_before) {
  // split dim into (rest, amount) (or (amount, rest) when top), then move the amount part in front of
  // the dim that was insert_before (the end when it is shape_len())
  int n = shape_len(), moved = top ? dim : dim + 1;
  int dest = insert_before == n ? n + 1 : insert_before <= dim ? insert_before : insert_before + 1;
  if (dest == moved) dest = moved + 1;  // the top part stays where the dim was: in front of the rest
  std::vector<int> order;
  for (int i = 0; i <= n; i++)
    if (i != moved) order.push_back(i);
  auto at = dest == n + 1 ? order.end() : std::find(order.begin(), order.end(), dest);
  order.insert(at, moved);
  for (ShapeTracker* t : trackers()) {
    ShapeTracker& st = *t;
    Shape ns;
    for (int i = 0; i < n; i++) {
      int64_t s = st.shape()[i];
      if (i != dim) { ns.push_back(s); continue; }
      int64_t a = s == 1 ? 1 : amount, rest = s == 1 ? 1 : s / amount;
      ns.push_back(top ? a : rest);
      ns.push_back(top ? rest : a);
    }
    st = st.reshape(ns).permute(order);
  }
  std::vector<AxisType> types = types_;
  std::vector<std::vector<int>> origin = origin_;
  types.insert(types.begin() + dim + 1, types_[dim]);
  origin.insert(origin.begin() + dim + 1, origin_[dim]);
  types[moved] = type;
  types_.clear();
  origin_.clear();
  for (int i : order) { types_.push_back(types[i]); origin_.push_back(origin[i]); }
}

void Kernel::swap_dims(int a, int b) {
  std::vector<int> order(shape_len());
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[a], order[b]);
  for (ShapeTracker* st : trackers()) *st = st->permute(order);
  std::swap(types_[a], types_[b]);
  std::swap(origin_[a], origin_[b]);
}

// Padding an output dim masks the STORE, so what the padding computes is never kept: a load that does
// not vary along the dim (a conv's weights along the image row) reads its value there too, unmasked.
// A load that varies reads 0 in the padding (it has no elements there), as every load along a padded
// reduce dim must (the padding adds nothing to a sum, or the reduce guard keeps it out of the sum).
void Kernel::pad_to(int dim, int64_t amount, bool guard) {
  int64_t size = full_shape()[dim], padded = (size + amount - 1) / amount * amount;
  bool output_dim = types_[dim] == AxisType::GLOBAL || types_[dim] == AxisType::LOCAL;
  // the guard: one broadcast element, real wherever no guarded reduce dim is in its padding
  if (guard && !reduce_guard_) reduce_guard_ = ShapeTracker::from_shape(Shape(full_shape().size(), 1)).expand(full_shape());
  if (reduce_guard_ && !output_dim) {
    std::vector<std::pair<int64_t, int64_t>> arg(shape_len(), {0, 0});
    arg[dim] = {0, padded - size};
    reduce_guard_ = reduce_guard_->pad(arg);
  } else if (reduce_guard_) {  // (it does not vary along an output dim)
    std::vector<std::pair<int64_t, int64_t>> arg;
    for (int64_t n : reduce_guard_->shape()) arg.push_back({0, n});
    arg[dim] = {0, 1};
    Shape wide = reduce_guard_->shape();
    wide[dim] = padded;
    reduce_guard_ = reduce_guard_->shrink(arg).expand(wide);
  }
  for (size_t i = 0; i < sts_.size(); i++) {
    ShapeTracker& st = sts_[i];
    if (st.shape()[dim] == 1 && size != 1) continue;  // broadcast along dim: nothing to pad
    std::vector<std::pair<int64_t, int64_t>> arg(shape_len(), {0, 0});
    if (output_dim && i != output_view() && st.real_strides()[dim] == std::optional<int64_t>{0}) {
      for (int d = 0; d < shape_len(); d++) arg[d] = {0, st.shape()[d]};
      arg[dim] = {0, 1};
      Shape wide = st.shape();
      wide[dim] = padded;
      st = st.shrink(arg).expand(wide);
      continue;
    }
    arg[dim] = {0, padded - size};
    st = st.pad(arg);
  }
}

void Kernel::apply_opt(const Opt& opt) {
  const char* opname = optops_name(opt.op);
  Shape full = full_shape();
  auto fail = [&](const std::string& why) { TG_ERROR_AS(KernelOptError, "apply_opt ", opt.str(), " on kernel ", name(), " of shape ", shape_str(full), " (", ren_->device(), "): ", why); };
  for (int64_t d : full)
    if (d == 0) fail("the kernel has an empty dim");
  if (opt.op == OptOps::NOLOCALS) {
    if (!dims_of(AxisType::LOCAL).empty()) fail("locals are already in use");
    dont_use_locals_ = true;
    applied_.push_back(opt);
    return;
  }
  // the dim the opt acts on
  std::vector<int> cls;
  for (int i = 0; i < shape_len(); i++) {
    bool out = types_[i] == AxisType::GLOBAL || types_[i] == AxisType::LOCAL;
    bool red = types_[i] == AxisType::REDUCE;
    if (((opt.op == OptOps::UPCAST || opt.op == OptOps::LOCAL || opt.op == OptOps::PADTO) && out) ||
        (opt.op == OptOps::SWAP && types_[i] == AxisType::GLOBAL) ||
        ((opt.op == OptOps::UNROLL || opt.op == OptOps::GROUP || opt.op == OptOps::GROUPTOP || opt.op == OptOps::BLOCK) && red) ||
        (opt.op == OptOps::PADTO && red))
      cls.push_back(i);
  }
  if (opt.axis < 0 || opt.axis >= static_cast<int>(cls.size()))
    fail("axis " + std::to_string(opt.axis) + " is out of range (the kernel has " + std::to_string(cls.size()) + " such dims)");
  int dim = cls[opt.axis];
  if (opt.op == OptOps::SWAP) {
    if (opt.amount <= opt.axis || opt.amount >= static_cast<int64_t>(cls.size()))
      fail("the other axis must come after axis " + std::to_string(opt.axis) + " among the " + std::to_string(cls.size()) + " global dims");
    swap_dims(dim, cls[opt.amount]);
    applied_.push_back(opt);
    return;
  }
  int64_t amt = opt.amount == 0 ? full[dim] : opt.amount;
  if (amt < 1) fail("the amount must be positive");

  if (opt.op == OptOps::PADTO) {
    if (amt < 2) fail("padding to a multiple of 1 does nothing");
    // a dim of size 1 is also every view's broadcast dim: padding it would pad the output along a reduce
    if (full[dim] == 1) fail("a dim of size 1 has nothing to pad");
    if ((full[dim] + amt - 1) / amt * amt > 4 * full[dim]) fail("padding would more than quadruple the dim's work");
    // padded elements read 0 from every buffer: a sum whose source maps zeros to zero is unchanged, any
    // other sum adds only where the reduce guard holds. A sum that reads another reduce's result (x -
    // mean(x)) reads it, not 0, in the padding.
    bool guard = false;
    if (types_[dim] == AxisType::REDUCE) {
      static const std::set<Ops> zero_safe = {Ops::ADD, Ops::MUL, Ops::NEG, Ops::CAST, Ops::SQRT, Ops::SIN, Ops::TAN, Ops::MAX, Ops::AND,
                                              Ops::OR, Ops::XOR, Ops::CMPNE, Ops::CMPLT, Ops::LOAD, Ops::CONST, Ops::VIEW,
                                              Ops::DEFINE_GLOBAL, Ops::REDUCE_AXIS, Ops::STORE, Ops::SINK};
      for (auto& u : ast_->toposort()) {
        if (u->op != Ops::REDUCE_AXIS) {
          guard |= !zero_safe.count(u->op);
          continue;
        }
        if (std::get<ReduceArg>(u->arg).op != Ops::ADD) fail("only a sum can be padded along its reduce dim");
        for (auto& v : u->src[0]->toposort()) guard |= v->op == Ops::REDUCE_AXIS;
      }
    }
    if (full[dim] % amt == 0) fail("dim " + std::to_string(dim) + " of size " + std::to_string(full[dim]) + " is already a multiple of " + std::to_string(amt));
    if (full[dim] > INT32_MAX) fail("the dim is too large to pad");
    pad_to(dim, amt, guard);
    applied_.push_back(opt);
    return;
  }
  if ((opt.op == OptOps::UPCAST || opt.op == OptOps::UNROLL) && amt > 32) fail("at most 32 values along one upcast dim");
  if (full[dim] % amt != 0)
    fail("dim " + std::to_string(dim) + " of size " + std::to_string(full[dim]) + " is not divisible by " + std::to_string(amt));
  switch (opt.op) {
    case OptOps::UPCAST: case OptOps::UNROLL: {
      int64_t values = amt;
      for (int i = 0; i < shape_len(); i++)
        if (types_[i] == AxisType::UPCAST || types_[i] == AxisType::UNROLL) values *= full[i];
      if (values > 1024) fail("the upcast and unrolled dims would expand to " + std::to_string(values) + " values (at most 1024)");
      // every value repeats the kernel's code: keep the expanded kernel to a size a compiler takes quickly
      int64_t ops = static_cast<int64_t>(ast_->toposort().size());
      if (ops * values > 65536) fail("the expanded kernel would have about " + std::to_string(ops * values) + " ops (at most 65536)");
      AxisType t = opt.op == OptOps::UPCAST ? AxisType::UPCAST : AxisType::UNROLL;
      shift_to(dim, amt, t, false, shape_len());
      break;
    }
    case OptOps::LOCAL:
      if (!ren_->has_local()) fail(std::string(opname) + " needs local dims, which the " + ren_->device() + " renderer does not have");
      if (dont_use_locals_) fail("NOLOCALS was applied");
      shift_to(dim, amt, AxisType::LOCAL, false, insert_point(AxisType::LOCAL));
      break;
    case OptOps::BLOCK: {
      if (amt == full[dim]) fail("a block of the whole dim leaves nothing to block");
      if (!dims_of(AxisType::BLOCK).empty()) fail("the kernel's reduce is already blocked");
      // the partial sums go through the output: its stored value must be the sum itself, and no load
      // may read the output buffer
      const UOpPtr& store = ast_->src[0];
      if (ast_->src.size() > 1) fail("a kernel with several outputs cannot keep partial sums in its output");
      int nreduce = 0;
      for (auto& u : ast_->toposort()) {
        nreduce += u->op == Ops::REDUCE_AXIS;
        if (u->op == Ops::LOAD && u->src[0] == store->src[0]) fail("the kernel reads its output buffer");
      }
      const UOpPtr& value = store->src[2];
      if (nreduce != 1 || value->op != Ops::REDUCE_AXIS || std::get<ReduceArg>(value->arg).op != Ops::ADD)
        fail("only a kernel that stores one sum directly can keep partial sums in its output");
      shift_to(dim, full[dim] / amt, AxisType::BLOCK, true, insert_point(AxisType::BLOCK));
      break;
    }
    case OptOps::GROUP: case OptOps::GROUPTOP:
      if (!ren_->has_shared()) fail(std::string(opname) + " needs shared memory, which the " + ren_->device() + " renderer does not have");
      fail(std::string(opname) + " is not supported by this code generator yet");
      break;
    default: fail("unknown opt");
  }
  // a split that leaves a dim of size 1 keeps it: it lowers to the index 0
  applied_.push_back(opt);
}

std::string Kernel::name() const {
  bool reduce = false;
  for (AxisType t : types_) reduce |= t == AxisType::REDUCE || t == AxisType::UNROLL || t == AxisType::GROUP_REDUCE || t == AxisType::BLOCK;
  for (const Opt& o : applied_) reduce |= o.op == OptOps::UNROLL;
  std::string n = reduce ? "r" : "E";
  for (int64_t d : base_shape_) n += "_" + std::to_string(d);
  if (base_shape_.empty()) n += "_1";
  return n;
}

std::string Kernel::colored_shape() const {
  // tinygrad's colours: global blue, local cyan, group green, reduce red, unroll magenta, upcast yellow;
  // and ours: a reduce's cache block white
  static const char* colour[] = {"34", "36", "37", "32", "31", "35", "33"};
  Shape full = full_shape();
  std::string s;
  for (int i = 0; i < shape_len(); i++)
    s += std::string(i ? " " : "") + "\033[" + colour[static_cast<int>(types_[i])] + "m" + std::to_string(full[i]) + "\033[0m";
  return s.empty() ? "()" : s;
}

DType Kernel::index_dtype() const {
  if (ren_->index_dtype() == dtypes::int64) return dtypes::int64;
  for (auto& st : sts_)
    if (st.index_bound() > INT32_MAX) return dtypes::int64;
  for (auto& u : ast_->toposort()) {
    if (u->op == Ops::VIEW && ShapeTracker::of(*u).index_bound() > INT32_MAX) return dtypes::int64;
    // a gather's loaded offset is int64 when its data has 2^31 elements or more
    if (u->op == Ops::LOAD && u->src.size() == 4 && u->src[2]->dtype == dtypes::int64) return dtypes::int64;
  }
  return dtypes::int32;
}

std::vector<UOpPtr> Kernel::linearize() const {
  return run_passes(*this, codegen_passes());
}

int64_t Kernel::estimate_ops() const {
  int64_t total = 1;
  for (int64_t d : base_shape_) total *= d;
  int64_t alu = 0;
  for (auto& u : ast_->toposort())
    if (is_alu(u->op) || u->op == Ops::REDUCE_AXIS) alu++;
  return total * std::max<int64_t>(alu, 1);
}

int64_t Kernel::estimate_mem() const {
  int64_t bytes = 0;
  for (auto& u : ast_->toposort())
    if (u->op == Ops::LOAD || u->op == Ops::STORE)
      bytes += ShapeTracker::of(*u->src[1]).footprint() * u->src[0]->dtype.itemsize();
  return bytes;
}

}  // namespace tg
