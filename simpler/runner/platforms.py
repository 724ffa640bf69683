"""The platforms the embedded simulator implements and the codes they fail with.

Cheap to import (no cppyy, no numpy). The C++ simulator (runner/simcard.cpp)
returns the same codes; docs/design.md (Error codes) states both.
"""

from simpler.contract import SIM_PLATFORMS

__all__ = ["LAUNCH_FAULT", "OP_TIMEOUT", "POISONED_INIT", "SIM_PLATFORMS", "UNUSABLE_RC"]

# (rc, where) per platform
OP_TIMEOUT = {
    "a5sim": (507046, "aclrtSynchronizeStreamWithTimeout"),
    "a2a3sim": (507018, "aclrtSynchronizeStreamWithTimeout"),
}
POISONED_INIT = {"a5sim": (62, "halResMap"), "a2a3sim": (507899, "rtMalloc")}
LAUNCH_FAULT = (207001, "rtKernelLaunchWithHandleV2")
UNUSABLE_RC = -1
