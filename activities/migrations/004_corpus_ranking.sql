-- Corpus search that ranks like a search engine: the page's own name (the URL's file name) and
-- its title weigh most (label A), body text least (D); identifiers are indexed whole and by their
-- parts (`typing.Optional`, `wait_for`); and document frequencies per lexeme let a query weigh
-- rare words above the corpus's ubiquitous ones (refreshed after each indexing).
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
) STORED;
CREATE INDEX corpus_documents_tsv ON research.corpus_documents USING gin (tsv);

CREATE TABLE research.corpus_terms (
    lexeme text PRIMARY KEY,
    ndoc   integer NOT NULL  -- documents holding the lexeme
);
INSERT INTO research.corpus_terms (lexeme, ndoc)
SELECT word, ndoc FROM ts_stat('SELECT tsv FROM research.corpus_documents');
