-- The share of a corpus document's words that are stop words: prose is about a third, an index,
-- a table of contents or a list of links far less. Search weighs such pages down (set on index).
ALTER TABLE research.corpus_documents ADD COLUMN prose real NOT NULL DEFAULT 1;
