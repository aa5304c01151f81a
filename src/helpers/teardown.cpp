#include "helpers/teardown.h"

#include <vector>

namespace tg {

namespace {
// The queue is kept between teardowns (each thread's own), so that dropping a small graph, as every
// eager op does, allocates nothing. A graph dropped after this thread's queue is gone (a static's
// destructor at exit) is released recursively, as shared_ptr would.
thread_local bool queue_gone = false;  // trivially destructible: readable to the thread's very end
struct Queue {
  std::vector<std::shared_ptr<const void>> nodes;
  bool draining = false;
  ~Queue() { queue_gone = true; }
};
}  // namespace

void defer_release(std::shared_ptr<const void> p) {
  // Not the last reference: letting it go destroys nothing (and needs no queue). Another thread may
  // drop its reference meanwhile; then this one is the last after all, and the node is destroyed here
  // recursively, as it would have been in that thread.
  if (!p || p.use_count() > 1 || queue_gone) return;
  thread_local Queue q;
  q.nodes.push_back(std::move(p));
  if (q.draining) return;  // inside a teardown: the outermost call below releases it
  q.draining = true;
  while (!q.nodes.empty()) {
    std::shared_ptr<const void> next = std::move(q.nodes.back());
    q.nodes.pop_back();
    next.reset();  // may queue this node's children
  }
  q.draining = false;
}

}  // namespace tg
