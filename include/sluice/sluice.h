#pragma once
// The umbrella header: everything a user of sluice includes.
#include "base/error.h"
#include "core/ir/dtype.h"
#include "core/ir/ops.h"
#include "core/ir/uop.h"
#include "runtime/tensor.h"

#include <sluice/version.h>  // SLUICE_VERSION_MAJOR, _MINOR, _PATCH, _STRING
