// kiln: PyTorch's tensor API in C++20, every operation deferred.
// This umbrella header is all a user includes.
#pragma once

#include "kiln/autograd.h"
#include "kiln/debug.h"
#include "kiln/device.h"
#include "kiln/dtype.h"
#include "kiln/error.h"
#include "kiln/functions.h"
#include "kiln/indexing.h"
#include "kiln/jit.h"
#include "kiln/nn_functional.h"
#include "kiln/options.h"
#include "kiln/scalar.h"
#include "kiln/shape.h"
#include "kiln/tensor.h"
