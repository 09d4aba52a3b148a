"""What the composition root (`worker.py`) builds from the settings and hands to the activities:
the provider clients (`composition.providers`: the model, the verifier and the search provider)
and the ledger (`composition.ledger`: which database, and the ledger on its pool). The CLI opens
them the same way. Its modules load on their own: a command that reads the ledger imports no
provider client."""
