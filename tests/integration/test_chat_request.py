"""`decide`'s chat request (activities.model.decide.chat_request) sends the same request as the
openai client's own `create` with the messages and tools as its arguments: same body, same bytes
in the same order, same headers, for OpenAI and for Azure with a key or an Entra token."""

from __future__ import annotations

import json
from typing import Any, cast

import pytest
from openai import omit
from openai.types.chat import ChatCompletionFunctionToolParam, ChatCompletionMessageParam

from activities.model.decide import ModelClient, chat_request
from composition.providers import open_model_client
from runtime.options import ChatOptions
from runtime.settings import Settings
from tests.fakes.openai_server import FakeOpenAI, serve, tool
from tests.integration.test_model import FakeCredential, azure_env, openai_env
from workflows.tools import tool_schemas

MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a careful research agent."},
    {"role": "user", "content": "Question: Ünïcode — “quotes” and 30 s?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "read_page", "arguments": '{"url": "https://x.example/a"}'},
            }
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": '{"ok":true}\n<untrusted_page source="S1">\nText, 5 tries.\n</untrusted_page>',
    },
    {"role": "user", "content": "Guidance from the operator: be brief"},
]


async def _old_request(client: ModelClient, chat: ChatOptions) -> None:
    """The request as `decide` made it before chat_request: everything through `create`."""
    await client.openai.chat.completions.with_raw_response.create(
        model=chat.model,
        messages=cast("list[ChatCompletionMessageParam]", MESSAGES),
        tools=cast("list[ChatCompletionFunctionToolParam]", tool_schemas()),
        tool_choice="auto",
        parallel_tool_calls=chat.parallel_tool_calls,
        temperature=omit if chat.temperature is None else chat.temperature,
        max_completion_tokens=chat.max_output_tokens,
        extra_headers=client.headers or None,
    )


@pytest.mark.parametrize(
    ("environ", "credential"),
    [
        (openai_env(), None),
        (openai_env(RESEARCH_PARALLEL_TOOL_CALLS="true", RESEARCH_TEMPERATURE="default"), None),
        (azure_env(AZURE_OPENAI_API_KEY="azure-key-0123456789"), None),
        (azure_env(), FakeCredential()),
    ],
    ids=["openai", "openai-parallel", "azure-key", "azure-entra"],
)
async def test_the_request_is_the_one_create_would_send(
    environ: Any, credential: FakeCredential | None
) -> None:
    fake = FakeOpenAI(lambda turn, messages: tool("search_web", query="x"))
    with serve(fake) as base_url:
        settings = Settings.from_env(environ(base_url))
        chat = settings.chat_options()
        async with open_model_client(settings, credential=credential) as client:
            assert client is not None
            await _old_request(client, chat)
            raw = await chat_request(client, chat, MESSAGES, tool_schemas())
            assert raw.parse().choices[0].message.tool_calls

    old, new = fake.requests
    assert json.dumps(new) == json.dumps(old)  # the same keys in the same order, the same values
    assert new["messages"] == MESSAGES and new["tools"] == tool_schemas()
    drop = {"x-stainless-retry-count"}
    old_headers, new_headers = ({k: v for k, v in h.items() if k not in drop} for h in fake.headers)
    assert new_headers == old_headers
    assert fake.paths[0] == fake.paths[1]
