-- Term rarity per host: each host's document frequency of each lexeme, so a search weighs a word
-- by how rare it is on the hosts the brief may read, whatever else is indexed beside them (a
-- word common in one documentation set and rare in another is weighed as the set searched has
-- it). Indexing a host recounts that host alone.
DELETE FROM research.corpus_terms;
ALTER TABLE research.corpus_terms DROP CONSTRAINT corpus_terms_pkey;
ALTER TABLE research.corpus_terms ADD COLUMN host text NOT NULL;
ALTER TABLE research.corpus_terms ADD PRIMARY KEY (lexeme, host);
INSERT INTO research.corpus_terms (host, lexeme, ndoc)
SELECT h.host, s.word, s.ndoc
FROM (SELECT DISTINCT host FROM research.corpus_documents) h
CROSS JOIN LATERAL ts_stat(format(
    'SELECT tsv FROM research.corpus_documents WHERE host = %L', h.host)) s;
