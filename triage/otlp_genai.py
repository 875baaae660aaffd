"""The user's question as a GenAI span records it: the last user message, in any of the common shapes.

OpenTelemetry's GenAI conventions changed shape over time, and instrumentations differ:
- `gen_ai.input.messages` (current): a JSON array of `{"role", "parts": [{"type": "text", "content"}]}`;
- `gen_ai.prompt` (older) or `gen_ai.request.messages`: a JSON array of `{"role", "content"}`, where
  content is a string or a list of `{"type": "text", "text"}` parts; or the prompt text itself;
- flattened attributes: `gen_ai.prompt.<i>.role` / `.content` (OpenLLMetry) and
  `llm.input_messages.<i>.message.role` / `.content` (OpenInference);
- span events: `gen_ai.user.message` (attribute `content`), `gen_ai.content.prompt` (attribute
  `gen_ai.prompt`), or any event carrying `gen_ai.input.messages`.
Pure functions over decoded attribute values; nothing here reads the database.
"""

import json
import re

MESSAGE_ATTRIBUTES = ("gen_ai.input.messages", "gen_ai.prompt", "gen_ai.request.messages")
FLATTENED = (
    re.compile(r"^gen_ai\.prompt\.(\d+)\.(role|content)$"),
    re.compile(r"^llm\.input_messages\.(\d+)\.message\.(role|content)$"),
)
# Every attribute above starts with one of these.
GENAI_PREFIXES = ("gen_ai.", "llm.")
MODEL_ATTRIBUTES = ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name")


def part_text(part) -> str:
    """Return the text of one content part: a string, or a text part in either convention."""
    if isinstance(part, str):
        return part
    if isinstance(part, dict) and part.get("type", "text") in ("text", "input_text"):
        text = part.get("content", part.get("text"))
        return text if isinstance(text, str) else ""
    return ""


def message_text(message: dict) -> str:
    """Return a message's text, whether it has `parts`, a string `content` or a list of content parts."""
    for key in ("parts", "content", "text"):
        value = message.get(key)
        if isinstance(value, str):
            return value.strip()
        if isinstance(value, list):
            return "\n".join(text for text in map(part_text, value) if text).strip()
    return ""


def _decoded(value):
    """Decode a JSON-text attribute; any other value is returned as it is."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def last_user_text(messages) -> str | None:
    """Return the text of the last user message in a list of messages (or a prompt string), if any."""
    messages = _decoded(messages)
    if isinstance(messages, str):
        return messages.strip() or None  # an old `gen_ai.prompt` that is the prompt itself
    if isinstance(messages, dict):
        messages = messages.get("messages", [messages])
    if not isinstance(messages, list):
        return None
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") in ("user", "human"):
            text = message_text(message)
            if text:
                return text
    return None


def _flattened_messages(attributes: dict, pattern: re.Pattern) -> list[dict]:
    by_index: dict[int, dict] = {}
    for key, value in attributes.items():
        match = pattern.match(key)
        if match:
            by_index.setdefault(int(match[1]), {})[match[2]] = value
    return [by_index[index] for index in sorted(by_index)]


def _event_user_text(name: str, attributes: dict) -> str | None:
    if name == "gen_ai.user.message":
        content = _decoded(attributes.get("content", attributes.get("gen_ai.event.content")))
        if isinstance(content, dict):
            return message_text(content) or None
        if isinstance(content, list):
            return "\n".join(text for text in map(part_text, content) if text).strip() or None
        if isinstance(content, str):
            return content.strip() or None
        return None
    for key in MESSAGE_ATTRIBUTES:
        if key in attributes:
            return last_user_text(attributes[key])
    return None


def genai_question(attributes: dict, events: list[tuple[str, dict]]) -> str | None:
    """Return the last user message a GenAI span records in its attributes or events, or None."""
    # Most spans (a SQL span, say) carry no GenAI attribute: skip the scans of every key.
    if any(key.startswith(GENAI_PREFIXES) for key in attributes):
        for key in MESSAGE_ATTRIBUTES:
            if key in attributes:
                text = last_user_text(attributes[key])
                if text:
                    return text
        for pattern in FLATTENED:
            text = last_user_text(_flattened_messages(attributes, pattern))
            if text:
                return text
    texts = [text for name, event_attributes in events if (text := _event_user_text(name, event_attributes))]
    return texts[-1] if texts else None


def genai_model(attributes: dict) -> str | None:
    """Return the model a GenAI span names (the one that answered, else the one asked for)."""
    for key in MODEL_ATTRIBUTES:
        value = attributes.get(key)
        if isinstance(value, str) and value:
            return value
    return None
