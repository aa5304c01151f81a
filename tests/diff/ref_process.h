// The NumPy reference process: tests/diff/numpy_ref.py under Debian's python3, started once and kept
// for the life of the program (tests/common/python_process.h).
#pragma once
#include "python_process.h"

namespace tgdiff {

class NumpyRef : public tgtest::PythonProcess {
 public:
  NumpyRef();
};

}  // namespace tgdiff
