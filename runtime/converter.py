"""The data converter of every client, worker and replayer: pydantic JSON, with invalid input
refused as one sentence.

A brief that fails validation when a workflow starts (say, from `temporal workflow start`) fails
that workflow at once and non-retryably, with the same sentence the `research` CLI prints.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from temporalio.api.common.v1 import Payload
from temporalio.contrib.pydantic import PydanticJSONPlainPayloadConverter
from temporalio.converter import (
    CompositePayloadConverter,
    DataConverter,
    DefaultPayloadConverter,
    JSONPlainPayloadConverter,
)
from temporalio.exceptions import ApplicationError

from workflows.validation import INVALID_INPUT, describe_validation


class _RefusingJSONConverter(PydanticJSONPlainPayloadConverter):
    def from_payload(self, payload: Payload, type_hint: type | None = None) -> Any:
        try:
            return super().from_payload(payload, type_hint)
        except ValidationError as error:
            raise ApplicationError(
                describe_validation(error), type=INVALID_INPUT, non_retryable=True
            ) from None


class ResearchPayloadConverter(CompositePayloadConverter):
    def __init__(self) -> None:
        super().__init__(
            *(
                _RefusingJSONConverter() if isinstance(c, JSONPlainPayloadConverter) else c
                for c in DefaultPayloadConverter.default_encoding_payload_converters
            )
        )


DATA_CONVERTER = DataConverter(payload_converter_class=ResearchPayloadConverter)
