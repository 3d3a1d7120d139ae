"""Request/response classes for Kafka APIs kafka-python 3.0 has none for, declared from Kafka's own
message layouts (``clients/src/main/resources/common/message/*.json``) given here as dicts.

``field(name, type, versions)`` is one entry of such a layout; ``message_pair(api_key, version, name,
request_fields, response_fields)`` builds the two classes for one version, encoded and decoded by
kafka-python's own machinery exactly as its packaged messages are. No I/O.
"""

from __future__ import annotations

from typing import Any

__all__ = ["field", "message_pair", "nullable"]


def field(name: str, kind: str, versions: str = "0+", **extra: Any) -> dict:
    """One field of a message layout (``fields=[...]`` for a struct or an array of structs)."""
    return {"name": name, "type": kind, "versions": versions, **extra}


def nullable(versions: str = "0+") -> dict:
    """The extra keys of a nullable field whose default is null."""
    return {"nullableVersions": versions, "default": "null"}


_INLINE: list[Any] = []


def _inline_meta() -> Any:
    """kafka-python's message metaclass, taking its schema from a ``SCHEMA`` dict instead of a
    packaged .json file (built once, on first use: kafka-python is imported only when needed)."""
    if not _INLINE:
        from kafka.protocol.api_data import JsonSchemaData
        from kafka.protocol.api_message import ApiMessageData
        from kafka.protocol.schemas import StructField

        class Inline(ApiMessageData):
            def __new__(metacls, cls_name, bases, attrs, **kw):
                if kw.get("init", True):  # the versioned subclasses (Request[0]...) inherit it
                    schema = attrs.pop("SCHEMA")
                    attrs.update(_json=schema, _struct=StructField(schema), __license__=None)
                return super(JsonSchemaData, metacls).__new__(metacls, cls_name, bases, attrs, **kw)

        _INLINE.append(Inline)
    return _INLINE[0]


def message_pair(
    api_key: int, version: int, name: str, request: list[dict], response: list[dict]
) -> tuple[Any, Any]:
    """``(<name>Request, <name>Response)`` of one flexible version of API ``api_key``."""
    from kafka.protocol.api_message import ApiMessage

    inline = _inline_meta()
    common = {"apiKey": api_key, "validVersions": str(version), "flexibleVersions": f"{version}+"}
    classes = []
    for kind, fields in (("request", request), ("response", response)):
        cls_name = f"{name}{kind.title()}"
        schema = {**common, "type": kind, "name": cls_name, "fields": fields}
        classes.append(inline(cls_name, (ApiMessage,), {"SCHEMA": schema}))
    return classes[0], classes[1]
