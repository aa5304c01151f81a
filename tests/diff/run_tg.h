// Runs a Program on tinygrad.cpp through the public API only (include/tg/tensor.h) and reads its outputs
// back as raw bytes (no extra cast in the graph).
#pragma once
#include <nlohmann/json.hpp>

#include "program.h"

namespace tgdiff {

// {"ok": true, "outputs": [{"dtype": "float32", "shape": [...], "data": [...]}]} with NaN/inf as
// "nan"/"inf"/"-inf" strings, or {"ok": false, "error": "<what() of the exception>"}.
nlohmann::json run_on_tg(const Program& p);

}  // namespace tgdiff
