// tg::Error and the checks that throw it.
//
// User mistakes (bad shapes, unknown devices, a failing compiler) throw tg::Error with a message that
// names the op, the shapes and the dtypes involved. Our own bugs throw tg::InternalError. Neither ever
// aborts. The message is built only when the check fails, so checks are free on the hot path.
#pragma once
#include <charconv>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace tg {

struct Error : std::runtime_error { using std::runtime_error::runtime_error; };
struct InternalError : std::logic_error { using std::logic_error::logic_error; };

// Kinds of user mistake, for callers that tell them apart (the Python module raises IndexError, TypeError,
// RuntimeError (also for JitError), OSError for these and ValueError for any other tg::Error). Each is a tg::Error: `catch (tg::Error&)`
// catches them all.
struct IndexError : Error { using Error::Error; };    // an index, axis or dim out of range
struct TypeError : Error { using Error::Error; };     // an argument of the wrong dtype or kind
struct RuntimeError : Error { using Error::Error; };  // the system failed (the compiler, a device), not a value
struct IOError : RuntimeError { using RuntimeError::RuntimeError; };  // a file could not be opened, read or written
struct JitError : Error { using Error::Error; };      // a TinyJit cannot capture or replay this call (tg/jit.h)
// An optimization (OptOps: UPCAST, LOCAL, ...) that is not valid for a kernel or device. The heuristics
// and BEAM skip such an action; every other error (a compiler's, a device's) still reaches the caller.
struct KernelOptError : Error { using Error::Error; };

namespace detail {
// A sequence written as a Python tuple, as tinygrad's and torch's messages show shapes: (2,3), (4,), ().
template <class R> void put_tuple(std::ostream& os, const R& r) {
  os << '(';
  size_t n = 0;
  for (const auto& x : r) os << (n++ ? "," : "") << x;
  os << (n == 1 ? ",)" : ")");
}
template <class T> void put(std::ostringstream& os, const T& v) { os << v; }
// A float value as its shortest exact form: a stream's 6 digits would show 2147483653 as 2.14748e+09.
template <class T> requires std::is_floating_point_v<T> void put(std::ostringstream& os, const T& v) {
  char buf[64];
  os.write(buf, std::to_chars(buf, buf + sizeof buf, v).ptr - buf);
}
template <class T> void put(std::ostringstream& os, const std::vector<T>& v) { put_tuple(os, v); }
template <class... A> std::string cat(const A&... a) {
  std::ostringstream os;
  (put(os, a), ...);
  return os.str();
}
}  // namespace detail

}  // namespace tg

// TG_CHECK(cond, "reshape", ": cannot reshape ", shape, " to ", new_shape) -> "reshape: cannot reshape (2,3) to (4,)"
#define TG_CHECK(cond, ...) TG_CHECK_AS(Error, cond, __VA_ARGS__)
#define TG_ERROR(...) throw ::tg::Error(::tg::detail::cat(__VA_ARGS__))
// The same with a kind: TG_CHECK_AS(IndexError, i < n, "index: ", i, " out of range")
#define TG_CHECK_AS(kind, cond, ...) \
  do { if (!(cond)) [[unlikely]] throw ::tg::kind(::tg::detail::cat(__VA_ARGS__)); } while (0)
#define TG_ERROR_AS(kind, ...) throw ::tg::kind(::tg::detail::cat(__VA_ARGS__))
// For invariants of our own code: a failure is a tinygrad.cpp bug, never a user mistake.
#define TG_ASSERT(cond, ...)                                                                        \
  do {                                                                                              \
    if (!(cond)) [[unlikely]]                                                                       \
      throw ::tg::InternalError(::tg::detail::cat("internal error at ", __FILE__, ":", __LINE__,   \
                                                  ": " #cond " ", ##__VA_ARGS__));                  \
  } while (0)
