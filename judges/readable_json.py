"""JSON as a person reads it on a trace page: indented, and a text with line breaks shown on its lines.

`json.dumps(..., indent=2)` writes a prompt as one line of `\\n` escapes, so a 40-line system
prompt is unreadable. Here every value is written as JSON except that a string's line breaks
are real (its continuation lines indented under it); nothing else is escaped but quotes and
backslashes. The exact JSON stays one click away (the page's "Copy as JSON").
"""

import json


def _text(value: str, pad: str) -> str:
    lines = [json.dumps(line, ensure_ascii=False)[1:-1] for line in value.split("\n")]
    return '"' + ("\n" + pad).join(lines) + '"'


def readable_json(value, level: int = 0) -> str:
    """Write `value` (JSON-like) indented by two spaces a level, strings with line breaks on their lines."""
    pad, inner = "  " * level, "  " * (level + 1)
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [
            f"{inner}{json.dumps(str(k), ensure_ascii=False)}: {readable_json(v, level + 1)}" for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        return "[\n" + ",\n".join(inner + readable_json(v, level + 1) for v in value) + "\n" + pad + "]"
    if isinstance(value, str) and "\n" in value:
        return _text(value, inner)
    return json.dumps(value, ensure_ascii=False)
