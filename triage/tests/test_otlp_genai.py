"""The user's question from a GenAI span, in each shape the conventions and instrumentations use."""

import json

import pytest

from triage.otlp_genai import genai_model, genai_question

CONVERSATION = [
    {"role": "system", "content": "You write SQL."},
    {"role": "user", "content": "First question?"},
    {"role": "assistant", "content": "SELECT 1"},
    {"role": "user", "content": "Orders last week?"},
]


@pytest.mark.parametrize(
    "attributes",
    [
        {
            "gen_ai.input.messages": json.dumps(
                [
                    {"role": "system", "parts": [{"type": "text", "content": "You write SQL."}]},
                    {"role": "user", "parts": [{"type": "text", "content": "Orders last week?"}]},
                ]
            )
        },
        {"gen_ai.input.messages": [{"role": "user", "parts": [{"type": "text", "content": "Orders last week?"}]}]},
        {"gen_ai.prompt": json.dumps(CONVERSATION)},
        {"gen_ai.prompt": json.dumps([{"role": "user", "content": [{"type": "text", "text": "Orders last week?"}]}])},
        {"gen_ai.request.messages": json.dumps(CONVERSATION)},
        {"gen_ai.prompt": "Orders last week?"},
        {
            "gen_ai.prompt.0.role": "system",
            "gen_ai.prompt.0.content": "You write SQL.",
            "gen_ai.prompt.1.role": "user",
            "gen_ai.prompt.1.content": "Orders last week?",
        },
        {
            "llm.input_messages.0.message.role": "user",
            "llm.input_messages.0.message.content": "Orders last week?",
            "llm.input_messages.1.message.role": "assistant",
            "llm.input_messages.1.message.content": "SELECT 1",
        },
    ],
    ids=[
        "input-messages",
        "input-messages-structured",
        "prompt-json",
        "prompt-content-parts",
        "request-messages",
        "prompt-text",
        "flattened-openllmetry",
        "flattened-openinference",
    ],
)
def test_the_last_user_message_is_found_in_each_attribute_shape(attributes):
    assert genai_question(attributes, []) == "Orders last week?"


@pytest.mark.parametrize(
    "events",
    [
        [("gen_ai.user.message", {"content": "First?"}), ("gen_ai.user.message", {"content": "Orders last week?"})],
        [("gen_ai.content.prompt", {"gen_ai.prompt": json.dumps(CONVERSATION)})],
        [
            (
                "gen_ai.client.inference.operation.details",
                {"gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"content": "Orders last week?"}]}])},
            )
        ],
    ],
    ids=["user-message-events", "content-prompt-event", "operation-details-event"],
)
def test_the_last_user_message_is_found_in_span_events(events):
    assert genai_question({}, events) == "Orders last week?"


def test_a_span_without_a_user_message_gives_none():
    assert genai_question({"gen_ai.prompt": json.dumps([{"role": "system", "content": "x"}])}, []) is None
    assert genai_question({"gen_ai.input.messages": "[]", "http.route": "/"}, []) is None
    assert genai_question({}, [("exception", {"exception.message": "boom"})]) is None


def test_the_answering_model_is_preferred_to_the_requested_one():
    assert genai_model({"gen_ai.request.model": "big", "gen_ai.response.model": "big-2025"}) == "big-2025"
    assert genai_model({"gen_ai.request.model": "big"}) == "big"
    assert genai_model({}) is None
