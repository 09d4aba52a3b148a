"""Pages: fetching (`fetch`, checked by `guard`, decoded by `decode`, the corpus served from
disk by `corpus_transport`) and reading (`extract`, which reads HTML elements with `structure`,
and `pdf`). `page` holds the fetched page itself, so code that only stores pages (the ledger)
imports no fetching code."""
