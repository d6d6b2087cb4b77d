"""Building pydantic models from values that are valid by construction, without validating.

The loop makes a dozen events and blocks per model call out of values it holds already typed
(ids it generated, text a validated `ChatResponse` carried). Validating them again is most of
their cost, and `BaseModel.model_construct` is slower still, so `trusted` fills an instance's
fields directly: given values as they are, defaults as pydantic would (factories called,
unhashable defaults deep-copied), and the same `model_fields_set` as the validating
constructor. Models with private attributes are not supported, nor, through `trusted`, models
with validators (`trusted_checked` is for callers whose values those validators would pass
unchanged).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

M = TypeVar("M", bound=BaseModel)

_Factory = tuple[str, Callable[[], Any]]


class _Plan(NamedTuple):
    """How to fill one model's fields: a template in field order, then what it cannot hold."""

    template: dict[str, Any]
    """Every field, in order; hashable constant defaults filled in."""
    factories: tuple[_Factory, ...]
    """Fields whose default must be made fresh for each instance."""
    required: frozenset[str]


_plans: dict[type[BaseModel], _Plan] = {}
_checked_plans: dict[type[BaseModel], _Plan] = {}

_new = object.__new__
# The slots every pydantic model has, set through their descriptors: no attribute dispatch.
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def _plan(cls: type[BaseModel], checked: bool = False) -> _Plan:
    decorators = cls.__pydantic_decorators__
    validators = decorators.model_validators or decorators.field_validators
    if cls.__private_attributes__ or (validators and not checked):
        raise TypeError(f"{cls.__name__} cannot be built without validation")
    template: dict[str, Any] = {}
    factories: list[_Factory] = []
    required: list[str] = []
    for name, info in cls.model_fields.items():
        template[name] = None
        factory = info.default_factory
        if factory is not None:
            if info.default_factory_takes_validated_data:
                raise TypeError(f"{cls.__name__}.{name}: a factory taking data is not supported")
            factories.append((name, factory))  # type: ignore[arg-type]
        elif info.default is PydanticUndefined:
            required.append(name)
        elif _hashable(info.default):
            template[name] = info.default
        else:
            factories.append((name, functools.partial(copy.deepcopy, info.default)))
    plan = _Plan(template, tuple(factories), frozenset(required))
    (_checked_plans if checked else _plans)[cls] = plan
    return plan


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def trusted(cls: type[M], /, **values: Any) -> M:
    """Build `cls` from `values` without validating them.

    The caller vouches that every value already has its field's type (and that no name is
    unknown): this is for values the caller made or took from validated models.

    Raises:
        TypeError: a required field is missing, or `cls` has private attributes, model
            validators or a data-taking default factory.
    """
    return _build(cls, _plans.get(cls) or _plan(cls), values)


def trusted_checked(cls: type[M], /, **values: Any) -> M:
    """Build `cls`, a model with validators, from `values` without validating them.

    As `trusted`, and the caller also vouches that the values are what the model's validators
    would leave unchanged and accept (say, a message's content already a block list whose block
    types its role allows).

    Raises:
        TypeError: a required field is missing, or `cls` has private attributes or a
            data-taking default factory.
    """
    return _build(cls, _checked_plans.get(cls) or _plan(cls, checked=True), values)


def _build(cls: type[M], plan: _Plan, values: dict[str, Any]) -> M:
    if not plan.required <= values.keys():
        missing = sorted(plan.required - values.keys())[0]
        raise TypeError(f"{cls.__name__}: the required field {missing!r} was not given")
    data = plan.template.copy()
    data.update(values)
    for name, factory in plan.factories:
        if name not in values:
            data[name] = factory()
    obj = _new(cls)
    _set_dict(obj, data)
    _set_fields_set(obj, set(values))
    _set_extra(obj, None)
    _set_private(obj, None)
    return obj


def trusted_copy(obj: M, /, **update: Any) -> M:
    """`obj.model_copy(update=update)`, shallow, without pydantic's copying machinery.

    As with `model_copy`, the values are not validated and the updated fields count as set.
    A model holding extra or private values is copied by `model_copy` itself.
    """
    if obj.__pydantic_extra__ is not None or obj.__pydantic_private__ is not None:
        return obj.model_copy(update=update)
    copied = _new(type(obj))
    _set_dict(copied, {**obj.__dict__, **update})
    _set_fields_set(copied, obj.__pydantic_fields_set__.union(update))
    _set_extra(copied, None)
    _set_private(copied, None)
    return copied


def trusted_set(obj: BaseModel, name: str, value: Any) -> None:
    """Set a field the way pydantic's assignment does, minus its dispatch.

    For models that neither validate on assignment nor freeze (messages, blocks, state), where
    pydantic would store the value and mark the field set; the caller vouches for the value.
    """
    obj.__dict__[name] = value
    obj.__pydantic_fields_set__.add(name)
