"""Argument checking for pygraph's methods: each helper takes the value and the words
that name it in the message ("conv_fprop '0': padding"), and raises TypeError or
ValueError saying what was expected and what came."""
from __future__ import annotations

import operator
from typing import Any, Iterable, List, Optional

import numpy as np

from ..arrays import as_data_type
from ..enums import data_type


def _type_name(v: Any) -> str:
    return type(v).__name__


def _int_list(value: Any, what: str) -> List[int]:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{what}: expected a list of ints, got {_type_name(value)}")
    out = []
    for v in value:
        if isinstance(v, (bool, float)):
            raise TypeError(f"{what}: expected a list of ints, got an item of type {_type_name(v)}")
        try:
            out.append(operator.index(v))
        except TypeError:
            raise TypeError(f"{what}: expected a list of ints, got an item of type "
                            f"{_type_name(v)}") from None
    return out


def _dtype_arg(value: Any, what: str, allow_none: bool = True) -> Optional[data_type]:
    """A data type argument: the enum, its int, or a NumPy / torch dtype (as_data_type).
    NOT_SET, cuDNN frontend's default, means not set."""
    if value is None and not allow_none:
        raise TypeError(f"{what}: expected a hipdnn.data_type, got None")
    dt = as_data_type(value, what)
    if dt == data_type.NOT_SET and allow_none:
        return None
    return dt


def _name_arg(value: Any, what: str) -> Optional[str]:
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{what}: expected a str, got {_type_name(value)}")
    return value


def _bool_arg(value: Any, what: str) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)) and int(value) in (0, 1):
        return bool(value)
    raise TypeError(f"{what}: expected a bool, got {_type_name(value)}")


def _fe_enum(value: Any, enum_type: Any, op: str, what: str) -> int:
    """A cuDNN-frontend enum argument (its own numbering, NOT_SET = 0) checked and
    returned as an int."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{op}: {what} must be a hipdnn.{enum_type.__name__}, got "
                        f"{_type_name(value)}")
    try:
        member = enum_type(int(value))
    except ValueError:
        raise ValueError(f"{op}: {what} {int(value)} is not a hipdnn.{enum_type.__name__}") \
            from None
    if member == 0:
        raise ValueError(f"{op}: {what} is NOT_SET")
    return int(member)


def _notes(notes: Iterable[int], enum: Any, what: str) -> List[Any]:
    if isinstance(notes, (str, bytes)) or not hasattr(notes, "__iter__"):
        raise TypeError(f"{what}: expected a list of hipdnn.{enum.__name__} values, got "
                        f"{_type_name(notes)}")
    out = []
    for n in notes:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise TypeError(f"{what}: expected hipdnn.{enum.__name__} values, got "
                            f"{_type_name(n)}")
        try:
            out.append(enum(int(n)))
        except ValueError:
            raise ValueError(f"{what}: {int(n)} is not a hipdnn.{enum.__name__}") from None
    return out
