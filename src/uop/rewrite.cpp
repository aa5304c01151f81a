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

const UOpPtr& Bindings::operator[](const std::string& name) const {
  for (auto& [k, v] : b_)
    if (k == name) return v;
  TG_ASSERT(false, "pattern has no capture named ", name);
}

bool Bindings::bind(const std::string& name, const UOpPtr& u) {
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

PatternMatcher::PatternMatcher(std::vector<Rule> rules) : rules_(std::move(rules)) {
  constexpr size_t nops = static_cast<size_t>(Ops::MULACC) + 1;  // the last op of the list
  by_op_.resize(nops);
  for (size_t i = 0; i < rules_.size(); i++) {
    if (rules_[i].pat.ops.empty()) {
      any_op_.push_back(i);
      for (auto& v : by_op_) v.push_back(i);
    } else {
      for (Ops o : rules_[i].pat.ops) by_op_[static_cast<size_t>(o)].push_back(i);
    }
  }
}

UOpPtr PatternMatcher::rewrite(const UOpPtr& u) const {
  for (size_t i : by_op_[static_cast<size_t>(u->op)]) {
    Bindings b;
    b.bind("root", u);
    if (!match(rules_[i].pat, u, b)) continue;
    if (UOpPtr r = rules_[i].fn(b); r && r != u) return r;
  }
  return nullptr;
}

PatternMatcher PatternMatcher::operator+(const PatternMatcher& o) const {
  std::vector<Rule> r = rules_;
  r.insert(r.end(), o.rules_.begin(), o.rules_.end());
  return PatternMatcher(std::move(r));
}

UOpPtr graph_rewrite(const UOpPtr& root, const PatternMatcher& pm) {
  std::unordered_map<const UOp*, UOpPtr> memo;
  std::unordered_set<const UOp*> in_progress;  // nodes whose replacement is being rewritten: a loop guard
  std::vector<UOpPtr> keep;  // keeps every memo key alive, so no address is reused while memo holds it
  size_t rewrites = 0;
  struct Frame { UOpPtr n; int stage; UOpPtr pending; };
  std::vector<Frame> stack{{root, 0, nullptr}};
  while (!stack.empty()) {
    size_t top = stack.size() - 1;
    const UOpPtr n = stack[top].n;
    if (stack[top].stage == 0) {
      if (memo.count(n.get())) { stack.pop_back(); continue; }
      stack[top].stage = 1;
      for (auto it = n->src.rbegin(); it != n->src.rend(); ++it)
        if (!memo.count(it->get())) stack.push_back({*it, 0, nullptr});
    } else if (stack[top].stage == 1) {
      std::vector<UOpPtr> srcs;
      srcs.reserve(n->src.size());
      bool changed = false;
      for (auto& s : n->src) {
        srcs.push_back(memo.at(s.get()));
        changed |= srcs.back() != s;
      }
      UOpPtr nn = changed ? UOp::make(n->op, n->dtype, std::move(srcs), n->arg) : n;
      UOpPtr r = pm.rewrite(nn);
      if (!r) {
        memo[n.get()] = nn;
        memo.emplace(nn.get(), nn);
        keep.push_back(n);
        stack.pop_back();
        continue;
      }
      TG_ASSERT(in_progress.insert(n.get()).second && ++rewrites < 10000000, "rewrite rules loop on ", n->str());
      stack[top].stage = 2;
      stack[top].pending = r;
      if (!memo.count(r.get())) {
        TG_ASSERT(!in_progress.count(r.get()), "rewrite rules loop on ", r->str());
        stack.push_back({r, 0, nullptr});
      }
    } else {
      memo[n.get()] = memo.at(stack[top].pending.get());
      keep.push_back(n);
      keep.push_back(stack[top].pending);
      in_progress.erase(n.get());
      stack.pop_back();
    }
  }
  return memo.at(root.get());
}

}  // namespace tg
