"""The review page: one self-contained, inert HTML file per run, built from its ledger rows."""

from starter.page.render import CONTENT_SECURITY_POLICY, PageLinks, render_page

__all__ = ["CONTENT_SECURITY_POLICY", "PageLinks", "render_page"]
