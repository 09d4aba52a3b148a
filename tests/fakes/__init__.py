"""Fakes at the boundaries: local servers speaking real wire formats, and network stand-ins."""

# Poll interval of the threaded fake servers: `shutdown()` waits up to one poll, and the standard
# 0.5 s made every test using a server half a second slower.
POLL = 0.02
