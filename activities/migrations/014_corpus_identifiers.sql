-- Identifiers with underscores indexed whole as well. PostgreSQL's parser splits `most_common` at
-- the underscore and drops the stop word, so a page about `Counter.most_common` held only
-- "common" (and ranked below a page titled "Common Object Structures"), `wait_for` only "wait".
-- One more vector holds each such identifier as one lexeme, its underscores spelled out
-- (`mostunderscorecommon`; the query is spelled the same way, and the snippet looks for it as
-- written); the other vectors are unchanged.
ALTER TABLE research.corpus_documents DROP COLUMN tsv;
ALTER TABLE research.corpus_documents ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', regexp_replace(
        regexp_replace(url, '^.*/([^/]*?)(\.[A-Za-z0-9]+)?$', '\1'), '[._-]+', ' ', 'g')), 'A')
    || setweight(to_tsvector('english', coalesce(title, '')), 'A')
    || setweight(to_tsvector('english', regexp_replace(coalesce(title, ''),
        '([A-Za-z0-9])[._]([A-Za-z])', '\1 \2', 'g')), 'A')
    || setweight(to_tsvector('english', body), 'D')
    || setweight(to_tsvector('english', regexp_replace(body,
        '([A-Za-z0-9])[._]([A-Za-z])', '\1 \2', 'g')), 'D')
    || setweight(to_tsvector('simple', regexp_replace(regexp_replace(body,
        '(?<![A-Za-z0-9_])[A-Za-z0-9]+(?![A-Za-z0-9_])', ' ', 'g'),
        '([A-Za-z0-9])_(?=[A-Za-z0-9])', '\1underscore', 'g')), 'D')
) STORED;
CREATE INDEX corpus_documents_tsv ON research.corpus_documents USING gin (tsv);

DELETE FROM research.corpus_terms;
INSERT INTO research.corpus_terms (lexeme, ndoc)
SELECT word, ndoc FROM ts_stat('SELECT tsv FROM research.corpus_documents');
