#include "uop/rewrite.h"

#include <unordered_map>
#include <unordered_set>

#include "tg/error.h"

namespace tg {

UPat UPat::cnst(int64_t v) {
  UPat p = op(Ops::CONST);
  p.arg = Arg{v};
  return p;
}

const std::vector<Ops>& alu_ops() {
  static const std::vector<Ops> ops = [] {
    std::vector<Ops> v;
    for (size_t i = 0; i < op_count(); i++)
      if (is_alu(static_cast<Ops>(i))) v.push_back(static_cast<Ops>(i));
    return v;
  }();
  return ops;
}

const UOpPtr& Bindings::operator[](std::string_view name) const {
  for (auto& [k, v] : b_)
    if (k == name) return v;
  TG_ASSERT(false, "pattern has no capture named ", name);
}

bool Bindings::bind(std::string_view name, const UOpPtr& u) {
  for (auto& [k, v] : b_)
    if (k == name) return v == u;
  b_.emplace_back(name, u);
  return true;
}

static bool match_srcs(const std::vector<UPat>& ps, const std::vector<UOpPtr>& us, Bindings& b, bool swapped) {
  size_t n = ps.size();
  for (size_t i = 0; i < n; i++)
    if (!match(ps[swapped ? n - 1 - i : i], us[i], b)) return false;
  return true;
}

bool match(const UPat& p, const UOpPtr& u, Bindings& b) {
  if (!p.ops.empty() && std::find(p.ops.begin(), p.ops.end(), u->op) == p.ops.end()) return false;
  if (!p.dtypes.empty() && std::find(p.dtypes.begin(), p.dtypes.end(), u->dtype.scalar) == p.dtypes.end()) return false;
  if (p.arg && !arg_equal(*p.arg, u->arg)) return false;
  size_t mark = b.size();
  if (!p.name.empty() && !b.bind(p.name, u)) return false;
  if (!p.src) return true;
  if (p.src->size() != u->src.size()) { b.truncate(mark); return false; }
  size_t mark2 = b.size();
  if (match_srcs(*p.src, u->src, b, false)) return true;
  b.truncate(mark2);
  if (p.src->size() == 2 && is_commutative(u->op) && match_srcs(*p.src, u->src, b, true)) return true;
  b.truncate(mark);
  return false;
}

namespace {
thread_local RewriteTracer* tracer = nullptr;
}  // namespace

TracerScope::TracerScope(RewriteTracer* t) : prev_(tracer) { tracer = t; }
TracerScope::~TracerScope() { tracer = prev_; }
RewriteTracer* current_tracer() { return tracer; }

UOpPtr graph_rewrite(const UOpPtr& root, const PatternMatcher& pm, RewriteContext* ctx, RewriteOpts opts) {
  std::unordered_map<const UOp*, UOpPtr> memo;
  std::unordered_set<const UOp*> in_progress;  // nodes whose replacement is being rewritten: a loop guard
  std::vector<UOpPtr> keep;  // keeps every memo key alive, so no address is reused while memo holds it
  RewriteTracer* tr = opts.name ? tracer : nullptr;
  std::vector<RewriteStep> steps;
  size_t rewrites = 0;
  // one rule application (traced when a tracer listens)
  auto apply = [&](const UOpPtr& x) -> UOpPtr {
    const Rule* rule = nullptr;
    UOpPtr r = pm.rewrite(x, ctx, tr ? &rule : nullptr);
    if (r && tr) steps.push_back({x, r, rule->where()});
    TG_ASSERT(++rewrites < 10000000, "rewrite rules loop on ", x->str());
    return r;
  };
  // stage: 0 entered, 1 sources pushed, 2 waiting for `pending` (the node's replacement)
  struct Frame { UOpPtr n; int stage; UOpPtr pending; };
  std::vector<Frame> stack{{root, 0, nullptr}};
  auto replace_by = [&](size_t top, UOpPtr r) {
    const UOp* n = stack[top].n.get();
    TG_ASSERT(in_progress.insert(n).second && !in_progress.count(r.get()), "rewrite rules loop on ", stack[top].n->str());
    stack[top].stage = 2;
    stack[top].pending = r;
    if (!memo.count(r.get())) stack.push_back({std::move(r), 0, nullptr});
  };
  while (!stack.empty()) {
    size_t top = stack.size() - 1;
    const UOpPtr n = stack[top].n;
    if (stack[top].stage == 0) {
      if (memo.count(n.get())) { stack.pop_back(); continue; }
      if (opts.top_down) {  // the node first, to a fixpoint
        UOpPtr x = n;
        for (UOpPtr r; (r = apply(x));) x = r;
        if (x != n) { replace_by(top, x); continue; }
      }
      stack[top].stage = 1;
      for (auto it = n->src.rbegin(); it != n->src.rend(); ++it)
        if (!memo.count(it->get())) stack.push_back({*it, 0, nullptr});
    } else if (stack[top].stage == 1) {
      std::vector<UOpPtr> srcs;
      srcs.reserve(n->src.size());
      for (auto& s : n->src) srcs.push_back(memo.at(s.get()));
      UOpPtr nn = n->replace(std::move(srcs));
      UOpPtr r = opts.top_down ? (nn != n ? nn : nullptr) : apply(nn);
      if (!r) {
        memo[n.get()] = nn;
        memo.emplace(nn.get(), nn);
        keep.push_back(n);
        keep.push_back(nn);
        stack.pop_back();
        continue;
      }
      replace_by(top, r);
    } else {
      memo[n.get()] = memo.at(stack[top].pending.get());
      keep.push_back(n);
      keep.push_back(stack[top].pending);
      in_progress.erase(n.get());
      stack.pop_back();
    }
  }
  UOpPtr out = memo.at(root.get());
  if (tr) tr->on_rewrite(opts.name, root, out, steps);
  return out;
}

namespace {
struct SubstituteCtx : RewriteContext {
  const std::unordered_map<const UOp*, UOpPtr>& map;
  explicit SubstituteCtx(const std::unordered_map<const UOp*, UOpPtr>& m) : map(m) {}
};
}  // namespace

UOpPtr substitute(const UOpPtr& root, const std::unordered_map<const UOp*, UOpPtr>& map) {
  if (map.empty()) return root;
  static const PatternMatcher pm({{UPat::any(), [](const Bindings& b) -> UOpPtr {
    auto& m = b.ctx<SubstituteCtx>().map;
    auto it = m.find(b["root"].get());
    return it == m.end() ? nullptr : it->second;
  }}});
  SubstituteCtx ctx(map);
  // top-down, so a replaced node's sources are not visited; a replacement is not rewritten again
  // because no key is reachable from it (the callers substitute leaves by values without them)
  return graph_rewrite(root, pm, &ctx, {.top_down = true});
}

}  // namespace tg
