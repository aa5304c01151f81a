// A reference interpreter for the tests: a script run by Debian's python3 (TG_REF_PYTHON, which has
// python3-numpy and python3-torch), started once and kept for the life of the test program; one JSON line
// in, one JSON line out. Used by the PyTorch op tests (tests/ref) and the NumPy differential test
// (tests/diff).
#pragma once
#include <sys/types.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tgtest {

class PythonProcess {
 public:
  // `name` prefixes error messages; `needs` names the Debian package to suggest when the script dies.
  PythonProcess(const std::string& script, std::string name, std::string needs);
  ~PythonProcess();
  PythonProcess(const PythonProcess&) = delete;
  PythonProcess& operator=(const PythonProcess&) = delete;
  // Throws std::runtime_error when the process is gone.
  nlohmann::json call(const nlohmann::json& request);
  // Its pipe ends, for a forked child to close (so the interpreter sees EOF when this process ends).
  std::vector<int> fds() const;

 private:
  std::string name_, needs_;
  pid_t pid_ = 0;
  FILE* in_ = nullptr;
  FILE* out_ = nullptr;
};

}  // namespace tgtest
