-- Near-duplicate documents of a host (the same page under two names, one release-notes page per
-- release) share a cluster, set at index time from their text (`activities.search.corpus.
-- mark_duplicates`); search shows each cluster once, its best-ranked member with the others
-- listed under it. NULL: the document is its own cluster.
ALTER TABLE research.corpus_documents ADD COLUMN cluster text;
