// Rewrite rules as data: UPat patterns with named captures, and graph_rewrite to apply them to a fixpoint.
//
// A rule pairs a pattern with a function that builds the replacement from the captures (or returns
// nullptr to decline). Rule files are grouped by domain: symbolic (index and constant algebra),
// lowering, and per renderer.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

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
  static UPat cvar(std::string name = "") { return op(Ops::CONST, std::move(name)); }
  static UPat cnst(int64_t v);              // a CONST with this integer value
  UPat& named(std::string n) { name = std::move(n); return *this; }
};

class Bindings {
 public:
  const UOpPtr& operator[](const std::string& name) const;
  bool bind(const std::string& name, const UOpPtr& u);  // false when bound to a different node
  size_t size() const { return b_.size(); }
  void truncate(size_t n) { b_.resize(n); }
 private:
  std::vector<std::pair<std::string, UOpPtr>> b_;
};

struct Rule {
  UPat pat;
  std::function<UOpPtr(const Bindings&)> fn;  // capture "root" is always the matched node
};

class PatternMatcher {
 public:
  explicit PatternMatcher(std::vector<Rule> rules);
  // The first rule that matches `u` and returns a node; nullptr when none does.
  UOpPtr rewrite(const UOpPtr& u) const;
  PatternMatcher operator+(const PatternMatcher& o) const;
 private:
  std::vector<Rule> rules_;
  std::vector<std::vector<size_t>> by_op_;   // rule indices that can match each op
  std::vector<size_t> any_op_;               // rules whose pattern matches any op
};

bool match(const UPat& p, const UOpPtr& u, Bindings& b);

// Rewrites `root` bottom-up until no rule applies anywhere (sources are rewritten before their users,
// replacements are rewritten again). Iterative: deep graphs do not overflow the stack.
UOpPtr graph_rewrite(const UOpPtr& root, const PatternMatcher& pm);

// The symbolic rules: constant folding, identities, and index algebra (div/mod folding by bounds).
const PatternMatcher& symbolic();
inline UOpPtr simplify(const UOpPtr& u) { return graph_rewrite(u, symbolic()); }

}  // namespace tg
