-- Input tokens the provider served from its prompt cache (usage.prompt_tokens_details.
-- cached_tokens): part of input_tokens, shown apart, as reasoning tokens are within output.
ALTER TABLE research.model_calls ADD COLUMN cached_input_tokens integer NOT NULL DEFAULT 0;
