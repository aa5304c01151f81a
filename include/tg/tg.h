// tinygrad.cpp: the one header a user includes.
#pragma once
#include "tg/dtype.h"
#include "tg/error.h"
#include "tg/helpers.h"
#include "tg/tensor.h"
