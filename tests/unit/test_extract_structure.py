"""HTML structure in snapshots: rows stay rows, listings and diagrams stay code-like, widget
controls are not text, headings however marked are headings. Snippets are modelled on the
installed Debian documentation (httpd, Django, Python, Node.js), shortened."""

from __future__ import annotations

from activities.pages.extract import PASSAGE_MAX, Extracted, extract


def _extract(body: str) -> Extracted:
    return extract(
        f"<html><body><main>{body}</main></body></html>".encode(), "text/html", max_chars=50_000
    )


def _blocks(body: str) -> list[str]:
    return _extract(body).text.split("\n\n")


def _passages(result: Extracted) -> list[str]:
    return [result.text[span.start : span.end] for span in result.passages]


def test_a_table_inside_a_cell_follows_its_row_as_rows_of_its_own() -> None:
    # httpd's mod_proxy_hcheck: the hcmethod row's description cell holds a table of methods.
    html = """<table>
      <tr><th>Parameter</th><th>Default</th><th>Description</th></tr>
      <tr><td>hcmethod</td><td>None</td><td>Health check method. Choices are:
        <table><tr><th>Method</th><th>Description</th></tr>
          <tr><td>TCP</td><td>Check that a socket can be created</td></tr>
          <tr><td>GET</td><td>Send a GET request</td></tr></table></td></tr>
      <tr><td>hcpasses</td><td>1</td><td>Passed checks before the worker is enabled</td></tr>
    </table>"""

    assert _blocks(html) == [
        "Parameter | Default | Description",
        "hcmethod | None | Health check method. Choices are:",
        "Method | Description",
        "TCP | Check that a socket can be created",
        "GET | Send a GET request",
        "hcpasses | 1 | Passed checks before the worker is enabled",
    ]


def test_line_breaks_and_paragraphs_inside_a_cell_separate_words() -> None:
    # Python's unittest table: "does not log on<br>logger"; Sphinx wraps cells in <p>.
    html = (
        "<table><tr><td><p>assertNoLogs(logger, level)</p></td>"
        "<td><p>The with block does not log on<br>logger</p>with minimum level</td>"
        "<td><p>3.10</p></td></tr></table>"
    )

    assert _blocks(html) == [
        "assertNoLogs(logger, level) | The with block does not log on logger with minimum level"
        " | 3.10"
    ]


def test_a_pre_keeps_its_lines_without_its_copy_button_or_flavour_switch() -> None:
    # Node.js: one <pre> holds the ES module and the CommonJS version and a copy button.
    html = (
        "<p>Use it like this:</p>"
        '<pre><input class="js-flavor-toggle" type="checkbox" checked>'
        "<code>import process from 'node:process';\nprocess.exit(1);</code>"
        "<code>const process = require('node:process');\nprocess.exit(1);</code>"
        '<button class="copy-button">copy</button></pre>'
    )

    assert _blocks(html) == [
        "Use it like this:",
        "import process from 'node:process';\nprocess.exit(1);\n"
        "const process = require('node:process');\nprocess.exit(1);",
    ]


def test_a_paragraph_of_one_broken_code_element_is_a_listing() -> None:
    # httpd's examples: <div class="example"><p><code>line<br>line</code></p></div>.
    lines = [f'ProxyPass "/app{n}/" "http://backend{n}.example.com/"' for n in range(60)]
    html = (
        "<h2>Examples</h2><p>Map the paths:</p>"
        '<div class="example"><p><code>\n  # Reverse proxy<br>\n  '
        f"{'<br>'.join(lines)}\n</code></p></div>"
        "<p>A single <code>code</code> word in a sentence stays prose.</p>"
    )

    result = _extract(html)

    listing = "\n".join(["# Reverse proxy", *lines])
    assert len(listing) > PASSAGE_MAX
    assert result.text.split("\n\n") == [
        "Examples",
        "Map the paths:",
        listing,
        "A single code word in a sentence stays prose.",
    ]
    assert listing in _passages(result)  # a listing is one passage, never split


def test_a_syntax_diagram_drawn_in_svg_is_its_words_one_a_line() -> None:
    html = (
        "<p>The statement is<svg class='railroad-diagram'><g><path d='M0 0'/>"
        "<g><rect/><text>DELETE</text></g><g><text>FROM</text></g>"
        "<g><text>table-name</text></g></g></svg>as drawn.</p>"
    )

    assert _blocks(html) == ["The statement is", "DELETE\nFROM\ntable-name", "as drawn."]


def test_heading_permalinks_are_not_part_of_the_heading() -> None:
    html = (
        '<h2 id="examples">Examples <a class="permalink" href="#examples" title="Permanent'
        ' link">&para;</a></h2><p>First example.</p>'
        '<h3 id="event-exit">Event: <code>\'exit\'</code><span><a class="mark" href="#event-exit">'
        "#</a></span></h3><p>Emitted on exit.</p>"
    )

    result = _extract(html)

    assert [span.section for span in result.passages] == ["Examples", "Event: 'exit'"]
    assert result.text == "Examples\n\nFirst example.\n\nEvent: 'exit'\n\nEmitted on exit."


def test_links_within_the_page_that_say_something_are_kept() -> None:
    # Python's copy and datetime pages link their own names: "the copy module", "fold".
    html = (
        '<p>In fact, the <a href="#module-copy">copy</a> module uses <a href="#pickle">pickle</a>'
        ' and the <a href="#fold">fold</a> attribute, and <a href="#pow"><code>**</code></a>'
        ' raises. <a href="git-show.html">Show</a> lists objects.</p>'
    )

    assert _blocks(html) == [
        "In fact, the copy module uses pickle and the fold attribute, and ** raises. "
        "Show lists objects."
    ]


def test_tab_controls_are_dropped_and_every_tab_kept() -> None:
    # Django's console blocks: radio inputs and icon-glyph labels choose Unix or Windows.
    html = (
        "<p>Check the version:</p>"
        '<div class="console-block"><input class="c-tab-unix" id="t0" type="radio" checked>'
        '<label for="t0" title="Linux/macOS">\uf17c/\uf179</label>'
        '<input class="c-tab-win" id="t1" type="radio"><label for="t1" title="Windows">\uf17a'
        "</label><section><pre>$ python -m django --version</pre></section>"
        "<section><pre>...\\&gt; py -m django --version</pre></section></div>"
    )

    assert _blocks(html) == [
        "Check the version:",
        "$ python -m django --version",
        "...\\> py -m django --version",
    ]


def test_show_and_hide_widgets_keep_what_they_show_and_lose_their_controls() -> None:
    html = (
        "<details><summary>Show example</summary><p>An example of the option.</p></details>"
        '<details class="changelog"><summary>History</summary>'
        "<table><tr><td>v12.0.0</td><td>Added the origin argument.</td></tr></table></details>"
        '<p>Options <a class="toggle" href="#">[+]</a> <a href="javascript:toggle()">Hide</a>'
        ' <span class="expand-all" onclick="expandAll()">Expand all</span></p>'
        '<div class="collapse" id="more">The collapsible panel says what matters.</div>'
        '<p><span role="button" aria-expanded="false">Output</span> Copy <button>Copy</button>'
        "selection into the clipboard.</p>"
    )

    assert _blocks(html) == [
        "An example of the option.",
        "History",
        "v12.0.0 | Added the origin argument.",
        "Options",
        "The collapsible panel says what matters.",
        "Copy selection into the clipboard.",
    ]


def test_a_role_heading_is_a_heading_and_a_definition_term_is_not() -> None:
    html = (
        '<div role="heading" aria-level="3">Low-level APIs</div><p>Event loops and futures.</p>'
        "<dl><dt>run(coro)</dt><dd><p>Execute the coroutine.</p></dd></dl>"
        '<p class="caption" role="heading">Guides</p><p>How to write code.</p>'
    )

    result = _extract(html)

    assert [span.section for span in result.passages] == ["Low-level APIs", "Guides"]
    assert _passages(result) == [
        "Low-level APIs\n\nEvent loops and futures.\n\nrun(coro)\n\nExecute the coroutine.",
        "Guides\n\nHow to write code.",
    ]


def test_a_listing_may_wrap_its_code_twice_and_a_sentence_with_a_break_is_prose() -> None:
    # httpd's fd-limits page: <p><code><code>#!/bin/sh<br>ulimit ...</code></code></p>.
    html = (
        '<div class="example"><p><code>\n  <code>#!/bin/sh<br>\n  ulimit -S -n 100<br>\n'
        "  exec httpd</code>\n</code></p></div>"
        "<p>Run <code>ulimit</code> first,<br>then start the server.</p>"
    )

    assert _blocks(html) == [
        "#!/bin/sh\nulimit -S -n 100\nexec httpd",
        "Run ulimit first, then start the server.",
    ]
