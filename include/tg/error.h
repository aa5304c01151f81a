// tg::Error and the checks that throw it.
//
// User mistakes (bad shapes, unknown devices, a failing compiler) throw tg::Error with a message that
// names the op, the shapes and the dtypes involved. Our own bugs throw tg::InternalError. Neither ever
// aborts. The message is built only when the check fails, so checks are free on the hot path.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tg {

struct Error : std::runtime_error { using std::runtime_error::runtime_error; };
struct InternalError : std::logic_error { using std::logic_error::logic_error; };

namespace detail {
template <class T> void put(std::ostringstream& os, const T& v) { os << v; }
template <class T> void put(std::ostringstream& os, const std::vector<T>& v) {
  os << '(';
  for (size_t i = 0; i < v.size(); i++) os << (i ? "," : "") << v[i];
  os << (v.size() == 1 ? ",)" : ")");
}
template <class... A> std::string cat(const A&... a) {
  std::ostringstream os;
  (put(os, a), ...);
  return os.str();
}
}  // namespace detail

}  // namespace tg

// TG_CHECK(cond, "reshape", ": cannot reshape ", shape, " to ", new_shape) -> "reshape: cannot reshape (2,3) to (4,)"
#define TG_CHECK(cond, ...) \
  do { if (!(cond)) [[unlikely]] throw ::tg::Error(::tg::detail::cat(__VA_ARGS__)); } while (0)
#define TG_ERROR(...) throw ::tg::Error(::tg::detail::cat(__VA_ARGS__))
// For invariants of our own code: a failure is a tinygrad.cpp bug, never a user mistake.
#define TG_ASSERT(cond, ...)                                                                        \
  do {                                                                                              \
    if (!(cond)) [[unlikely]]                                                                       \
      throw ::tg::InternalError(::tg::detail::cat("internal error at ", __FILE__, ":", __LINE__,   \
                                                  ": " #cond " ", ##__VA_ARGS__));                  \
  } while (0)
