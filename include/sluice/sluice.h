#pragma once
// The umbrella header: everything a user of sluice includes. Tensors and dtypes; devices (list_devices,
// default_device, synchronize); the JIT (sluice::jit); profiling traces (start_profiling, write_profile).
#include "base/error.h"
#include "core/ir/dtype.h"
#include "core/ir/ops.h"
#include "core/ir/uop.h"
#include "runtime/device.h"
#include "runtime/device_name.h"
#include "runtime/jit.h"
#include "runtime/profile.h"
#include "runtime/tensor.h"

#include <sluice/version.h>  // SLUICE_VERSION_MAJOR, _MINOR, _PATCH, _STRING
