-- Heading words weigh more than body words: each document's section headings are kept in their
-- own column and indexed once more with label B (ts_rank's weights: `LABEL_WEIGHTS`), besides
-- their place in the body (label D). The other vectors are as in 014.
ALTER TABLE research.corpus_documents ADD COLUMN headings text NOT NULL DEFAULT '';
ALTER TABLE research.corpus_documents DROP COLUMN tsv;
ALTER TABLE research.corpus_documents ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', regexp_replace(
        regexp_replace(url, '^.*/([^/]*?)(\.[A-Za-z0-9]+)?$', '\1'), '[._-]+', ' ', 'g')), 'A')
    || setweight(to_tsvector('english', coalesce(title, '')), 'A')
    || setweight(to_tsvector('english', regexp_replace(coalesce(title, ''),
        '([A-Za-z0-9])[._]([A-Za-z])', '\1 \2', 'g')), 'A')
    || setweight(to_tsvector('english', regexp_replace(headings,
        '([A-Za-z0-9])[._]([A-Za-z])', '\1 \2', 'g')), 'B')
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
