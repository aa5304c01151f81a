// The C-style renderer: one line per UOp, in the linearizer's order, each made by a rule over UOps
// (rendering is a rewrite too: UOp -> text). A dialect's rules come first and override the base's
// (pm1 + pm2), and the dialect says how each op's text is used (line_kind) and what surrounds the body.
//
// The base rules (cstyle.cpp) render scalar C: literals, ALU expressions with the README's integer
// semantics (division, modulo and shifts never trap), float16 as floats rounded to half after every op,
// loops, gated loads and stores, accumulators. A dialect adds launch indices, buffer arguments, vectors.
#pragma once
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "renderer/renderer.h"
#include "uop/rewrite.h"

namespace tg {

// What the rules of a render see: each rendered UOp's C name (or literal), and what the kernel needs.
struct RenderCtx : RewriteContext {
  std::unordered_map<const UOp*, std::string> names;
  std::unordered_set<const UOp*> stored;  // buffers the kernel writes (the others are const)
  std::vector<int64_t> global_size{1}, local_size;
  bool streamed = false;                  // a store went around the caches: fence before returning
  int open_specials = 0;
  const std::string& at(const UOpPtr& u);  // the name or literal of an earlier UOp's value
 private:
  std::unordered_map<const UOp*, std::string> literals_;
};

using RenderRule = RuleOf<std::optional<std::string>>;
using RenderRules = PatternMatcherOf<std::optional<std::string>>;

// How the render loop uses a rule's text.
enum class LineKind : uint8_t {
  Inline,     // not a line: the text is the value's expression wherever it is used (INDEX)
  Value,      // "<type> <fresh name> = <text>;"
  Statement,  // "<text>;"-style line as given (STORE, ASSIGN, a buffer argument)
  Open,       // "<text> {" and one level deeper (RANGE, IF)
  Close,      // "}" one level up (ENDRANGE, ENDIF)
  Skip,       // nothing (CONST: a literal where it is used)
};

class CStyleRenderer : public Renderer {
 public:
  RenderedKernel render(const std::string& name, const std::vector<UOpPtr>& uops) const override;

 protected:
  virtual const RenderRules& rules() const = 0;  // the dialect's rules + cstyle_rules()
  virtual LineKind line_kind(const UOp& u) const;
  virtual std::string signature(const std::string& name) const = 0;
  virtual std::string prelude(const std::vector<UOpPtr>& uops) const = 0;  // helpers, typedefs
  virtual std::string body_prefix() const { return ""; }
  virtual std::string body_suffix(const RenderCtx& c) const { (void)c; return ""; }
};

const RenderRules& cstyle_rules();

// Shared with dialects.
std::string ctype(DType d);                  // a value's C type: float16 values are floats; vectors their typedef
std::string float_literal(double v, DType dt);
std::string zero_literal(DType d);           // 0 of d (a vector literal for vectors)
bool is_half(DType d);
bool is_float_to_int(const UOp& u);
const char* c_float_to_int();                // tg_f2i / tg_f2u, which float->int CASTs call

}  // namespace tg
