// tinygrad.cpp: the one header a user includes.
#pragma once
#include "tg/dtype.h"
#include "tg/error.h"
#include "tg/helpers.h"
#include "tg/jit.h"
#include "tg/progress.h"
#include "tg/tensor.h"
#include "tg/nn.h"
#include "tg/optim.h"
#include "tg/state.h"
