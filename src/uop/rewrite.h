// Rewrite rules as data: UPat patterns with named captures, PatternMatchers that combine, and
// graph_rewrite, the one engine every pass over UOps runs on.
//
// A rule pairs a pattern with a function that builds the result from the captures (or declines). A
// PatternMatcher of UOpPtr rules rewrites graphs; a PatternMatcher of strings renders code (the C
// renderer's rules). Rules remember where they were written (file:line), so VIZ and DEBUG can say
// which rule changed a node. A pass is a graph_rewrite with a name and, where its rules need state, a
// context (tinygrad's ctx): rules reach it as b.ctx<T>().
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tg/error.h"
#include "uop/uop.h"

namespace tg {

struct UPat {
  std::vector<Ops> ops;                     // empty: any op
  std::vector<Scalar> dtypes;               // empty: any dtype
  std::optional<std::vector<UPat>> src;     // nullopt: any sources; commutative ops also match swapped
  std::optional<Arg> arg;                   // nullopt: any arg
  std::string name;                         // capture name ("" for none)

  UPat() = default;
  UPat(Ops op, std::vector<UPat> srcs, std::string name = "") : ops{op}, src(std::move(srcs)), name(std::move(name)) {}
  static UPat any(std::string name = "") { UPat p; p.name = std::move(name); return p; }
  static UPat var(std::string name, std::vector<Scalar> dts = {}) { UPat p = any(std::move(name)); p.dtypes = std::move(dts); return p; }
  static UPat op(Ops o, std::string name = "") { UPat p; p.ops = {o}; p.name = std::move(name); return p; }
  static UPat ops_of(std::vector<Ops> os, std::string name = "") { UPat p; p.ops = std::move(os); p.name = std::move(name); return p; }
  static UPat cvar(std::string name = "") { return op(Ops::CONST, std::move(name)); }
  static UPat cnst(int64_t v);              // a CONST with this integer value
  UPat& named(std::string n) { name = std::move(n); return *this; }
};

// A pass's state. graph_rewrite hands it to every rule of the pass; a rule reads it as b.ctx<T>().
struct RewriteContext {
  virtual ~RewriteContext() = default;
};

// The captures of one match. Names are views of the patterns' own names (and "root"), so a Bindings
// must not outlive the UPat it matched (it never does: a rule reads it while its pattern is alive).
class Bindings {
 public:
  explicit Bindings(RewriteContext* ctx = nullptr) : ctx_(ctx) { b_.reserve(8); }
  const UOpPtr& operator[](std::string_view name) const;
  bool bind(std::string_view name, const UOpPtr& u);  // false when bound to a different node
  size_t size() const { return b_.size(); }
  void truncate(size_t n) { b_.resize(n); }
  template <class T> T& ctx() const {
    T* c = dynamic_cast<T*>(ctx_);
    TG_ASSERT(c != nullptr, "a rule asked for a context its pass does not have");
    return *c;
  }
 private:
  std::vector<std::pair<std::string_view, UOpPtr>> b_;
  RewriteContext* ctx_;
};

bool match(const UPat& p, const UOpPtr& u, Bindings& b);

// `fn` gets the captures ("root" is always the matched node) and returns the result, or declines with
// R{} (nullptr; for a rule of strings, nullopt). A UOpPtr rule that returns the node itself declines.
template <class R> struct RuleOf {
  UPat pat;
  std::function<R(const Bindings&)> fn;
  const char* name = "";                    // optional; VIZ shows file:line when empty
  const char* file = __builtin_FILE();      // where the rule was written
  int line = __builtin_LINE();
  std::string where() const;                // "name" or "file:line"
};
using Rule = RuleOf<UOpPtr>;

template <class R> class PatternMatcherOf {
 public:
  explicit PatternMatcherOf(std::vector<RuleOf<R>> rules);
  // The result of the first rule that matches `u` and does not decline; R{} when none does. `which`,
  // when given, receives that rule.
  R rewrite(const UOpPtr& u, RewriteContext* ctx = nullptr, const RuleOf<R>** which = nullptr) const;
  // pm1 + pm2: pm1's rules first, so a dialect's rules put before the base's override them.
  PatternMatcherOf operator+(const PatternMatcherOf& o) const;
  const std::vector<RuleOf<R>>& rules() const { return rules_; }
 private:
  std::vector<RuleOf<R>> rules_;
  std::vector<std::vector<size_t>> by_op_;   // the rules that can match each op, in order
};
using PatternMatcher = PatternMatcherOf<UOpPtr>;

// The order of a graph_rewrite. Bottom-up (the default): a node's sources are rewritten before the node,
// whose rules then see the rewritten sources. Top-down: a node is rewritten first, to a fixpoint, before
// its sources are visited (a rule sees the original sources and can replace a whole subtree). Either way
// every replacement is rewritten again, until no rule applies anywhere.
struct RewriteOpts {
  const char* name = nullptr;  // a named rewrite is a pass: VIZ records it
  bool top_down = false;
};

// Rewrites `root` until no rule applies anywhere. Iterative (deep graphs do not overflow the stack);
// rules that loop are an InternalError.
UOpPtr graph_rewrite(const UOpPtr& root, const PatternMatcher& pm, RewriteContext* ctx = nullptr, RewriteOpts opts = {});

// `root` with every node that is a key of `map` replaced by its value. A value must not reach a key
// (the replacements are visited like any other node).
UOpPtr substitute(const UOpPtr& root, const std::unordered_map<const UOp*, UOpPtr>& map);

// What VIZ (or a test) sees of every named graph_rewrite on this thread while it is installed: the root
// before and after the pass, and each rule application (the node it matched, what it returned, the rule).
struct RewriteStep {
  UOpPtr from, to;
  std::string rule;  // the rule's name or file:line
};
struct RewriteTracer {
  virtual ~RewriteTracer() = default;
  virtual void on_rewrite(const std::string& pass, const UOpPtr& before, const UOpPtr& after, const std::vector<RewriteStep>& steps) = 0;
};
// Installs `t` on this thread for the scope's lifetime (nullptr: none), restoring the previous one after.
class TracerScope {
 public:
  explicit TracerScope(RewriteTracer* t);
  ~TracerScope();
  TracerScope(const TracerScope&) = delete;
  TracerScope& operator=(const TracerScope&) = delete;
 private:
  RewriteTracer* prev_;
};
RewriteTracer* current_tracer();

// The symbolic rules: constant folding, identities, and index algebra (div/mod folding by bounds).
const PatternMatcher& symbolic();
inline UOpPtr simplify(const UOpPtr& u) { return graph_rewrite(u, symbolic()); }

// ---- template definitions -------------------------------------------------------------------------

template <class R> std::string RuleOf<R>::where() const {
  if (name && *name) return name;
  std::string f = file;
  if (auto slash = f.rfind("src/"); slash != std::string::npos) f = f.substr(slash + 4);
  return f + ":" + std::to_string(line);
}

inline size_t op_count() { return static_cast<size_t>(Ops::MULACC) + 1; }  // the last op of the list
// Every ALU op (is_alu), in table order: for rules over all of them (UPat::ops_of(alu_ops())).
const std::vector<Ops>& alu_ops();

template <class R> PatternMatcherOf<R>::PatternMatcherOf(std::vector<RuleOf<R>> rules) : rules_(std::move(rules)) {
  by_op_.resize(op_count());
  for (size_t i = 0; i < rules_.size(); i++) {
    if (rules_[i].pat.ops.empty()) {
      for (auto& v : by_op_) v.push_back(i);
    } else {
      for (Ops o : rules_[i].pat.ops) by_op_[static_cast<size_t>(o)].push_back(i);
    }
  }
}

template <class R> R PatternMatcherOf<R>::rewrite(const UOpPtr& u, RewriteContext* ctx, const RuleOf<R>** which) const {
  Bindings b(ctx);  // one for all the rules tried: "root" stays, each rule's captures are dropped after it
  b.bind("root", u);
  for (size_t i : by_op_[static_cast<size_t>(u->op)]) {
    b.truncate(1);
    if (!match(rules_[i].pat, u, b)) continue;
    R r = rules_[i].fn(b);
    bool declined;
    if constexpr (std::is_same_v<R, UOpPtr>) declined = !r || r == u;
    else declined = !r;
    if (declined) continue;
    if (which) *which = &rules_[i];
    return r;
  }
  return R{};
}

template <class R> PatternMatcherOf<R> PatternMatcherOf<R>::operator+(const PatternMatcherOf& o) const {
  std::vector<RuleOf<R>> r = rules_;
  r.insert(r.end(), o.rules_.begin(), o.rules_.end());
  return PatternMatcherOf(std::move(r));
}

}  // namespace tg
