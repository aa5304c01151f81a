#include "viz/recorder.h"

#include <utility>

namespace tg::viz {

KernelRecorder::KernelRecorder(std::string name, const UOpPtr& ast) {
  k_.name = std::move(name);
  k_.ast = intern(ast);
}

int KernelRecorder::intern(const UOpPtr& root) {
  if (auto it = ids_.find(root.get()); it != ids_.end()) return it->second;
  // Iterative post-order (graphs are deep: a 1000-op chain is 1000 levels), stopping at stored nodes,
  // so a pass costs only its new nodes.
  struct Frame { const UOpPtr* u; size_t next; };
  std::vector<Frame> stack{{&root, 0}};
  while (!stack.empty()) {
    Frame& f = stack.back();
    const UOpPtr& u = *f.u;
    if (f.next < u->src.size()) {
      const UOpPtr& s = u->src[f.next++];
      if (!ids_.count(s.get())) stack.push_back({&s, 0});  // invalidates f: not used below
      continue;
    }
    if (!ids_.count(u.get())) {  // reached twice on the stack through two users: stored once
      Node n{op_name(u->op), u->dtype.name(), arg_str(u->arg), {}};
      n.src.reserve(u->src.size());
      for (const UOpPtr& s : u->src) n.src.push_back(ids_.at(s.get()));
      ids_.emplace(u.get(), static_cast<int>(k_.nodes.size()));
      k_.nodes.push_back(std::move(n));
      keep_.push_back(u);
    }
    stack.pop_back();
  }
  return ids_.at(root.get());
}

void KernelRecorder::on_rewrite(const std::string& pass, const UOpPtr& before, const UOpPtr& after,
                                const std::vector<RewriteStep>& steps) {
  Pass p{pass, intern(before), intern(after), {}};
  p.changes.reserve(steps.size());
  for (const RewriteStep& s : steps) p.changes.push_back({intern(s.from), intern(s.to), s.rule});
  k_.passes.push_back(std::move(p));
}

}  // namespace tg::viz
