"""The review page's one style sheet (inline; the page's Content-Security-Policy allows it by
its hash and nothing else). System fonts only: the page loads no font."""

STYLE = """
:root { color-scheme: light; --ink: #1d2330; --muted: #5b6475; --line: #d9dde5;
  --good: #1c7c3a; --warn: #9a6400; --bad: #b3261e; --mark: #fff1a8; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.55 system-ui, -apple-system, "Segoe UI", sans-serif;
  color: var(--ink); background: #f6f7f9; }
main { max-width: 62rem; margin: 0 auto; padding: 1.5rem 1.25rem 4rem; background: #fff; }
h1 { font-size: 1.5rem; margin: .2rem 0 1rem; }
h2 { font-size: 1.15rem; margin: 2rem 0 .6rem; padding-bottom: .2rem;
  border-bottom: 1px solid var(--line); }
h3 { font-size: 1rem; margin: 1rem 0 .4rem; display: flex; flex-wrap: wrap; gap: .5rem;
  align-items: baseline; }
p { margin: .35rem 0; overflow-wrap: anywhere; }
code { font: .9em ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace;
  overflow-wrap: anywhere; }
a { color: #0b57d0; }
nav { display: flex; flex-wrap: wrap; gap: .25rem .9rem; font-size: .9rem;
  padding: .4rem 0 .6rem; border-bottom: 1px solid var(--line); }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: .4rem 0; }
dt { color: var(--muted); }
dd { margin: 0; overflow-wrap: anywhere; }
.note, .label, .q { color: var(--muted); }
.label { font-weight: 600; }
.badge { display: inline-block; padding: 0 .45rem; border-radius: .6rem; font-size: .85rem;
  font-weight: 600; color: #fff; background: var(--muted); }
.badge.good { background: var(--good); }
.badge.warn { background: var(--warn); }
.badge.bad { background: var(--bad); }
.stance { font-size: .85rem; font-weight: 600; }
.stance.supports { color: var(--good); }
.stance.contradicts { color: var(--bad); }
.finding { margin: 0 0 1rem; }
.verdict, .judged { border-left: 3px solid var(--line); padding: .1rem .7rem; margin: .4rem 0; }
.evidence { border: 1px solid var(--line); border-radius: .4rem; padding: .2rem .9rem .6rem;
  margin: .8rem 0; }
.evidence:target, .finding:target { outline: 3px solid #0b57d0; outline-offset: 2px; }
.passage { white-space: pre-wrap; overflow-wrap: anywhere; margin: .5rem 0; padding: .5rem .8rem;
  border-left: 3px solid var(--line); background: #fafbfc; color: #3b4252; }
mark.quote { background: var(--mark); color: #000; padding: .05rem 0; }
.where { font-size: .9rem; }
.warning { color: var(--bad); font-weight: 600; }
.hidden-char { font: .75em ui-monospace, monospace; color: var(--bad);
  border: 1px solid var(--bad); border-radius: .2rem; padding: 0 .15rem; margin: 0 .1rem; }
table { border-collapse: collapse; width: 100%; font-size: .9rem; }
th, td { text-align: left; vertical-align: top; padding: .3rem .5rem;
  border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
.bounds { width: auto; }
.bounds meter { width: 14rem; height: 1rem; }
.figure { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.timeline td:nth-child(3) { font: .85em ui-monospace, monospace; color: var(--muted); }
ul.verdicts { margin: .2rem 0 0; padding-left: 1.1rem; color: var(--muted); }
"""
