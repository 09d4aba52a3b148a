-- Each step as the model is shown it (the call, its result, the parsed arguments): the decide
-- activity rebuilds the transcript from these rows, so workflow history need not carry it.
ALTER TABLE research.steps ADD COLUMN entry jsonb;
