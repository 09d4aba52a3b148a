-- Where each corpus host's documents were indexed from: the fetcher serves the host from that
-- folder, so a page found by search can be read wherever it was indexed (no second setting).
CREATE TABLE research.corpus_hosts (
    host       text PRIMARY KEY,
    folder     text NOT NULL,  -- absolute path of the folder whose files are https://<host>/<path>
    documents  integer NOT NULL,
    indexed_at timestamptz NOT NULL DEFAULT now()
);
-- Length of each body, kept with the row: ranking weighs stubs down without reading bodies.
ALTER TABLE research.corpus_documents
    ADD COLUMN body_chars integer GENERATED ALWAYS AS (length(body)) STORED;
