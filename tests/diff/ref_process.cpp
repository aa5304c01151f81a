#include "ref_process.h"

namespace tgdiff {

NumpyRef::NumpyRef() : PythonProcess(TG_DIFF_SCRIPT, "numpy_ref", "python3-numpy") {}

}  // namespace tgdiff
