// Iterative teardown of deep shared_ptr graphs (UOps, LazyBuffers, autograd tensors).
//
// Destroying the last reference to a graph node destroys its sources, and theirs, recursively: a chain of
// 100,000 lazy adds overflows the stack when it is dropped. Node destructors therefore hand their
// children to defer_release() instead of letting them go: when a teardown is already running on this
// thread the child is queued, and only the outermost call drains the queue, one node at a time. The
// stack depth of any teardown is then two destructor frames, whatever the graph's depth.
#pragma once
#include <memory>

namespace tg {

void defer_release(std::shared_ptr<const void> p);

}  // namespace tg
