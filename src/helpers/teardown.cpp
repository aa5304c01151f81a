#include "helpers/teardown.h"

#include <vector>

namespace tg {

void defer_release(std::shared_ptr<const void> p) {
  thread_local std::vector<std::shared_ptr<const void>>* pending = nullptr;
  // Not the last reference: letting it go destroys nothing (and needs no queue). Another thread may
  // drop its reference meanwhile; then this one is the last after all, and the node is destroyed here
  // recursively, as it would have been in that thread.
  if (!p || p.use_count() > 1) return;
  if (pending) {  // inside a teardown: the outermost call below releases it
    pending->push_back(std::move(p));
    return;
  }
  std::vector<std::shared_ptr<const void>> queue;
  queue.push_back(std::move(p));
  pending = &queue;
  while (!queue.empty()) {
    std::shared_ptr<const void> next = std::move(queue.back());
    queue.pop_back();
    next.reset();  // may queue this node's children
  }
  pending = nullptr;
}

}  // namespace tg
