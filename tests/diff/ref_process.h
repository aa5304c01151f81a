// The NumPy reference process: tests/diff/numpy_ref.py under Debian's python3 (TG_REF_PYTHON), started
// once and kept for the life of the program, one JSON line in, one JSON line out.
#pragma once
#include <sys/types.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <vector>

namespace tgdiff {

class NumpyRef {
 public:
  NumpyRef();
  ~NumpyRef();
  NumpyRef(const NumpyRef&) = delete;
  NumpyRef& operator=(const NumpyRef&) = delete;
  // Throws std::runtime_error when the process is gone.
  nlohmann::json call(const nlohmann::json& request);
  // Its pipe ends, for a forked child to close (so the interpreter sees EOF when this process ends).
  std::vector<int> fds() const;

 private:
  pid_t pid_ = 0;
  FILE* in_ = nullptr;
  FILE* out_ = nullptr;
};

}  // namespace tgdiff
