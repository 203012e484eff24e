"""The namespaces the device tests stand in for a GPU with: array-api-strict on a device of its
own (nothing crosses to numpy without an explicit copy)."""

import importlib.util

import numpy as np
import pytest

#: The array API wrapper and the strict namespace are installed (the test extra).
ARRAY_API = all(importlib.util.find_spec(m) for m in ("array_api_compat", "array_api_strict"))
needs_array_api = pytest.mark.skipif(not ARRAY_API, reason="needs array-api-compat and array-api-strict")

#: array-api-strict copies between its devices with ``np.asarray(..., copy=True)``, which numpy
#: has from 2.0 on (array-api-strict 2.6 on numpy 1.24: "asarray() got an unexpected keyword
#: argument 'copy'"): a test whose arrays cross its devices needs both.
STRICT_DEVICES = ARRAY_API and int(np.__version__.split(".")[0]) >= 2
needs_strict_devices = pytest.mark.skipif(not STRICT_DEVICES,
                                          reason="array-api-strict's devices need it, array-api-compat and numpy >= 2")


def strict():
    """An :class:`~approxpath.compute.device.Accelerator` of array-api-strict with a device of its own."""
    import array_api_strict as xps

    from approxpath.compute.device import Accelerator

    return Accelerator(xps, xps.Device("device1"), xps.Device("CPU_DEVICE"), "array-api-strict")
