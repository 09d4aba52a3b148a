-- Each stored source's sketch (`workflows.families`): the smallest hashes of its text's
-- five-word shingles. The gate counts two pages whose sketches overlap mostly (another rendering
-- of the same text: a manual's HTML page and its AsciiDoc source) as one source, as it counts a
-- mirror with the same text once. Sources stored before this migration have none: they join
-- others by their content hash only.
ALTER TABLE research.sources ADD COLUMN sketch bigint[] NOT NULL DEFAULT '{}';
