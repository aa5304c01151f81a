// While a TinyJit captures a function (tg/jit.h), the tensor layer behaves differently in two ways: a host
// read of data (item, tolist, bytes) is refused, since its value would be baked into every replay; and a
// host value that changes from call to call (the random generator's counter) registers how to refresh it
// before each replay. Not a public header.
#pragma once
#include <functional>

namespace tg::detail {

// A JitError naming `op` when a TinyJit capture is in progress on this thread.
void refuse_host_read_in_capture(const char* op);
// Runs `refresh` before every replay of the capture in progress on this thread (outside one: nothing).
void on_replay(std::function<void()> refresh);

}  // namespace tg::detail
