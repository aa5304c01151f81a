// The spec check of the codegen middle (spec.cpp): the ops, sources, dtypes and args a graph may hold
// after each pass. SPEC=1 (the default in builds with BUILD_TESTING, SPEC=0 turns it off) runs it
// between the passes; a violation is an InternalError naming the pass and the node.
#pragma once
#include <string>

#include "codegen/passes.h"
#include "tg/helpers.h"

namespace tg {

extern ContextVar SPEC;
void verify(const UOpPtr& sink, Stage stage, const std::string& pass);

}  // namespace tg
