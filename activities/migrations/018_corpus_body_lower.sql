-- Each corpus document's body in lower case, stored beside it: search finds where its snippet
-- starts by looking for the rarest query term in the lower-cased body, and lower-casing a whole
-- returned page at every search cost more than a millisecond a page (the same lower(), so the
-- same positions and snippets).
ALTER TABLE research.corpus_documents
    ADD COLUMN body_lower text GENERATED ALWAYS AS (lower(body)) STORED;
