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
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

M = TypeVar("M", bound=BaseModel)

_Builder = Callable[[dict[str, Any]], BaseModel]

_builders: dict[type[BaseModel], _Builder] = {}
_checked_builders: dict[type[BaseModel], _Builder] = {}

_new = object.__new__
# The slots every pydantic model has, set through their descriptors: no attribute dispatch.
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def _builder(cls: type[BaseModel], checked: bool = False) -> _Builder:
    """Compile the function that fills `cls`'s fields from given values, defaults and factories.

    One dict display in field order, each field taken from the values or else from its
    default (a constant, or a factory called, or a deep copy of an unhashable default): no
    template copy, no loop over factories, no check of the given names per instance.
    """
    _check(cls, checked)
    namespace = _namespace(cls)
    items = [
        f"{name!r}: v[{name!r}]"
        if default is None
        else f"{name!r}: v[{name!r}] if {name!r} in v else {default}"
        for name, default in _defaults(cls, namespace)
    ]
    source = (
        "def build(v):\n"
        "    try:\n"
        f"        data = {{{', '.join(items)}}}\n"
        "    except KeyError as exc:\n"
        "        raise _missing(_cls, exc) from None\n"
        f"{_FILL.format(fields_set='set(v)')}"
    )
    build: _Builder = _compile(source, namespace)
    (_checked_builders if checked else _builders)[cls] = build
    return build


def _check(cls: type[BaseModel], checked: bool) -> None:
    decorators = cls.__pydantic_decorators__
    validators = decorators.model_validators or decorators.field_validators
    if cls.__private_attributes__ or (validators and not checked):
        raise TypeError(f"{cls.__name__} cannot be built without validation")


_FILL = (
    "    obj = _new(_cls)\n"
    "    _set_dict(obj, data)\n"
    "    _set_fields_set(obj, {fields_set})\n"
    "    _set_extra(obj, None)\n"
    "    _set_private(obj, None)\n"
    "    return obj\n"
)
"""The end of every compiled builder: an instance holding `data`, as validation leaves it."""


def _namespace(cls: type[BaseModel]) -> dict[str, Any]:
    # Underscored names: a field's name (a builder's parameter) never starts with one.
    return {
        "_cls": cls,
        "_new": _new,
        "_set_dict": _set_dict,
        "_set_fields_set": _set_fields_set,
        "_set_extra": _set_extra,
        "_set_private": _set_private,
        "_missing": _missing,
    }


def _defaults(cls: type[BaseModel], namespace: dict[str, Any]) -> list[tuple[str, str | None]]:
    """Each field in order with the expression of its default (None for a required field).

    A constant default is referenced, a factory called (`dict` and `list` as displays), an
    unhashable default deep-copied; what the expressions reference is added to `namespace`.
    """
    fields: list[tuple[str, str | None]] = []
    for index, (name, info) in enumerate(cls.model_fields.items()):
        factory = info.default_factory
        if factory is None and info.default is PydanticUndefined:
            fields.append((name, None))
            continue
        if factory is not None:
            if info.default_factory_takes_validated_data:
                raise TypeError(f"{cls.__name__}.{name}: a factory taking data is not supported")
        elif _hashable(info.default):
            namespace[f"_d{index}"] = info.default
            fields.append((name, f"_d{index}"))
            continue
        else:
            factory = functools.partial(copy.deepcopy, info.default)
        if factory is dict or factory is list:
            fields.append((name, "{}" if factory is dict else "[]"))
            continue
        namespace[f"_f{index}"] = factory
        fields.append((name, f"_f{index}()"))
    return fields


def _compile(source: str, namespace: dict[str, Any]) -> Any:
    # The source holds nothing but the model's field names and references into `namespace`.
    exec(source, namespace)
    return namespace["build"]


def _missing(cls: type[BaseModel], exc: KeyError) -> TypeError:
    return TypeError(f"{cls.__name__}: the required field {exc.args[0]!r} was not given")


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
    return (_builders.get(cls) or _builder(cls))(values)  # type: ignore[return-value]


def trusted_checked(cls: type[M], /, **values: Any) -> M:
    """Build `cls`, a model with validators, from `values` without validating them.

    As `trusted`, and the caller also vouches that the values are what the model's validators
    would leave unchanged and accept (say, a message's content already a block list whose block
    types its role allows).

    Raises:
        TypeError: a required field is missing, or `cls` has private attributes or a
            data-taking default factory.
    """
    build = _checked_builders.get(cls) or _builder(cls, checked=True)
    return build(values)  # type: ignore[return-value]


def trusted_maker(cls: type[M], /, *names: str, checked: bool = False) -> Callable[..., M]:
    """Compile a builder of `cls` taking exactly the fields `names`, as keyword arguments.

    `trusted` for a call site that always gives the same fields: `make = trusted_maker(Event,
    "reply_id", "delta")`, then `make(reply_id=..., delta=...)` builds what `trusted(Event,
    reply_id=..., delta=...)` builds, without the keyword dict, the look-up of the builder and
    the per-field checks of what was given. The caller vouches for the values as for `trusted`
    (with `checked`, as for `trusted_checked`: for a model with validators).

    Raises:
        TypeError: a name is not a field of `cls`, a required field is not among `names`, or
            `cls` cannot be built without validation (as for `trusted` or `trusted_checked`).
    """
    _check(cls, checked)
    unknown = set(names) - set(cls.model_fields)
    if unknown:
        raise TypeError(f"{cls.__name__} has no fields {sorted(unknown)}")
    namespace = _namespace(cls)
    items = []
    for name, default in _defaults(cls, namespace):
        if name not in names and default is None:
            raise TypeError(f"{cls.__name__}: the required field {name!r} is not among {names}")
        items.append(f"{name!r}: {name if name in names else default}")
    fields_set = "{" + ", ".join(repr(name) for name in names) + "}" if names else "set()"
    parameters = f"*, {', '.join(names)}" if names else ""
    source = (
        f"def build({parameters}):\n"
        f"    data = {{{', '.join(items)}}}\n"
        f"{_FILL.format(fields_set=fields_set)}"
    )
    build: Callable[..., M] = _compile(source, namespace)
    return build


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
