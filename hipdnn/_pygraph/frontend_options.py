"""cuDNN frontend's pygraph options that hipdnn takes without acting on them, so that code
written for cuDNN frontend builds unchanged: each is checked for its type and kept, and
none changes a result.

- ``sm_count`` (cuDNN: limit the kernels to that many multiprocessors) and
  ``sm_version`` (cuDNN: compile for that architecture without its device): hipdnn's
  kernels are sized and compiled for the handle's device at build time.
- ``kernel_cache`` (``create_kernel_cache()``): hipdnn keeps every kernel it compiles
  for the process already, so a graph built again finds its kernels; the cache object
  holds nothing, and serializing it raises NotImplementedError.
- ``device_property`` (``create_device_properties()``): for cuDNN's ahead-of-time
  compilation without the device; hipdnn builds on the handle's device.
- ``is_dynamic_shape_enabled`` / ``is_override_shape_enabled``: hipdnn builds a graph
  for its shapes; running one with other shapes (execute's ``override_shapes``) raises
  NotImplementedError.
"""
from __future__ import annotations

import json
from typing import Any, Dict, Optional, Union

from .args import _type_name


class KernelCache:
    """cuDNN frontend's kernel cache (``create_kernel_cache()``), for ``pygraph(kernel_cache=)``.
    hipdnn caches the kernels it compiles for the whole process: this object holds none."""

    def serialize(self) -> str:
        """cuDNN frontend writes its compiled kernels out: NotImplementedError here."""
        raise NotImplementedError("KernelCache.serialize: hipdnn keeps compiled kernels in "
                                  "its process cache and cannot write them out yet")

    def deserialize(self, data: Any) -> None:
        """cuDNN frontend reads them back: NotImplementedError here."""
        raise NotImplementedError("KernelCache.deserialize: hipdnn cannot load a serialized "
                                  "kernel cache yet")


class DeviceProperties:
    """cuDNN frontend's device properties (``create_device_properties(device_id)``, or from
    the JSON its ``serialize()`` wrote), for ``pygraph(device_property=)``; hipdnn builds
    on the handle's device and keeps only the id."""

    def __init__(self, device_id: int = 0):
        self.device_id = device_id

    def serialize(self) -> str:
        """The properties as JSON, for create_device_properties(json)."""
        return json.dumps({"device_id": self.device_id})

    @staticmethod
    def from_json(text: str) -> "DeviceProperties":
        """The properties serialize() wrote; ValueError for anything else."""
        try:
            data = json.loads(text)
            device_id = data["device_id"]
        except (ValueError, TypeError, KeyError) as e:
            raise ValueError(f"create_device_properties: not device properties that "
                             f"serialize() wrote: {e}") from None
        if isinstance(device_id, bool) or not isinstance(device_id, int) or device_id < 0:
            raise ValueError(f"create_device_properties: device_id {device_id!r} is not a "
                             f"device number")
        return DeviceProperties(device_id)


def create_kernel_cache() -> KernelCache:
    """A kernel cache for ``pygraph(kernel_cache=)`` (cuDNN frontend's); see KernelCache."""
    return KernelCache()


def create_device_properties(device: Union[int, str] = 0) -> DeviceProperties:
    """Device properties for ``pygraph(device_property=)`` (cuDNN frontend's): of device
    number ``device``, or from the JSON a DeviceProperties' serialize() wrote."""
    if isinstance(device, str):
        return DeviceProperties.from_json(device)
    if isinstance(device, bool) or not isinstance(device, int) or device < 0:
        raise TypeError(f"create_device_properties: expected a device number or a JSON str, "
                        f"got {device!r}")
    return DeviceProperties(device)


def check_options(sm_count: Optional[int], sm_version: Optional[int], kernel_cache: Any,
                  device_property: Any, is_dynamic_shape_enabled: bool,
                  is_override_shape_enabled: bool) -> Dict[str, Any]:
    """pygraph's cuDNN-frontend options, checked (TypeError / ValueError naming the
    keyword), as a dict to keep."""
    for name, value in (("sm_count", sm_count), ("sm_version", sm_version)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise TypeError(f"pygraph: {name} must be an int or None, got {_type_name(value)}")
        if value is not None and value <= 0:
            raise ValueError(f"pygraph: {name} must be positive, got {value}")
    if kernel_cache is not None and not isinstance(kernel_cache, KernelCache):
        raise TypeError(f"pygraph: kernel_cache must come from create_kernel_cache(), got "
                        f"{_type_name(kernel_cache)}")
    if device_property is not None and not isinstance(device_property, DeviceProperties):
        raise TypeError(f"pygraph: device_property must come from create_device_properties(), "
                        f"got {_type_name(device_property)}")
    for name, flag in (("is_dynamic_shape_enabled", is_dynamic_shape_enabled),
                       ("is_override_shape_enabled", is_override_shape_enabled)):
        if not isinstance(flag, bool):
            raise TypeError(f"pygraph: {name} must be a bool, got {_type_name(flag)}")
    return {"sm_count": sm_count, "sm_version": sm_version, "kernel_cache": kernel_cache,
            "device_property": device_property,
            "is_dynamic_shape_enabled": is_dynamic_shape_enabled,
            "is_override_shape_enabled": is_override_shape_enabled}


def refuse_overrides(what: str, override_uids: Any, override_shapes: Any,
                     override_strides: Any) -> None:
    """execute's override_* arguments (cuDNN frontend's dynamic shapes): NotImplementedError
    where any is given."""
    given = [n for n, v in (("override_uids", override_uids), ("override_shapes", override_shapes),
                            ("override_strides", override_strides)) if v is not None]
    if given:
        raise NotImplementedError(f"{what}: {', '.join(given)} (running a plan with other "
                                  f"shapes than it was built for) is not in hipdnn; build a "
                                  f"graph for each shape")
