"""Building pydantic models from values that are valid by construction, without validating.

The loop makes a dozen events and blocks per model call out of values it holds already typed
(ids it generated, text a validated `ChatResponse` carried). Validating them again is most of
their cost, and `BaseModel.model_construct` is slower still, so `trusted` fills an instance's
fields directly: given values as they are, defaults as pydantic would (factories called,
unhashable defaults deep-copied), and the same `model_fields_set` as the validating
constructor. Models with private attributes or validators that rewrite data are not supported.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

M = TypeVar("M", bound=BaseModel)

_Default = tuple[str, Callable[[], Any]]
_plans: dict[type[BaseModel], tuple[_Default, ...]] = {}

_setattr = object.__setattr__


def _plan(cls: type[BaseModel]) -> tuple[_Default, ...]:
    decorators = cls.__pydantic_decorators__
    if cls.__private_attributes__ or decorators.model_validators or decorators.field_validators:
        raise TypeError(f"{cls.__name__} cannot be built without validation")
    defaults: list[_Default] = []
    for name, info in cls.model_fields.items():
        factory = info.default_factory
        if factory is not None:
            if info.default_factory_takes_validated_data:
                raise TypeError(f"{cls.__name__}.{name}: a factory taking data is not supported")
            defaults.append((name, factory))  # type: ignore[arg-type]
        elif info.default is PydanticUndefined:
            defaults.append((name, _required(cls, name)))
        else:
            defaults.append((name, _constant(info.default)))
    _plans[cls] = plan = tuple(defaults)
    return plan


def _constant(value: Any) -> Callable[[], Any]:
    try:
        hash(value)
    except TypeError:
        return lambda: copy.deepcopy(value)
    return lambda: value


def _required(cls: type[BaseModel], name: str) -> Callable[[], Any]:
    def missing() -> Any:
        raise TypeError(f"{cls.__name__}: the required field {name!r} was not given")

    return missing


def trusted(cls: type[M], /, **values: Any) -> M:
    """Build `cls` from `values` without validating them.

    The caller vouches that every value already has its field's type (and that no name is
    unknown): this is for values the caller made or took from validated models.

    Raises:
        TypeError: a required field is missing, or `cls` has private attributes, model
            validators or a data-taking default factory.
    """
    plan = _plans.get(cls) or _plan(cls)
    data = {name: values[name] if name in values else default() for name, default in plan}
    obj = cls.__new__(cls)
    _setattr(obj, "__dict__", data)
    _setattr(obj, "__pydantic_fields_set__", set(values))
    _setattr(obj, "__pydantic_extra__", None)
    _setattr(obj, "__pydantic_private__", None)
    return obj
