"""Activities: every piece of I/O the research workflow needs (model, search, pages, ledger)."""
