"""The offline policy's strongest test (`baselines.excerpts.says_answer`, through `quote_settles`):
a required question is settled only by a sentence that, on its own, answers it. Each case is a
way a completed run cited a sentence that does not say the answer (issue 24)."""

from __future__ import annotations

from baselines.excerpts import (
    _POINTER,
    _VERSION_NOTE,
    Passage,
    Wanted,
    _before,
    _entry_name,
    _excerpts,
    best_excerpt,
    name_parts,
    quote_settles,
    says_answer,
    wanted_words,
)
from workflows.contracts import DecideInput
from workflows.models import Brief, Budget
from workflows.scope import RunScope
from workflows.substance import evidence_problem, keywords

SIGNATURE = "queue.purge(name, force=False)"
TITLE = "queue — Harbor Queue client"


def _wanted(question: str, main: str = "How does the queue client manage queues?") -> Wanted:
    return _wanted_of(main, question, "Why?")


def _settles(
    question: str, quote: str, *texts: str, section: str = "Client functions", title: str = TITLE
) -> bool:
    passages = {
        f"S1.P{n}": Passage("S1", text, section, title) for n, text in enumerate(texts, start=1)
    }
    return quote_settles(_wanted(question), passages, "S1", quote)


OPENING = "Delete every message of the named queue and return how many were deleted."
REMARK = "A purge cannot be undone, so queue.purge() is best kept out of scripts run by hand."


def test_a_question_on_a_name_alone_is_settled_by_its_definitions_opening_only() -> None:
    page = f"{SIGNATURE}\n\n{OPENING} {REMARK}"
    assert _settles("What does queue.purge do?", OPENING + " " + REMARK, page)
    assert not _settles("What does queue.purge do?", REMARK, page), "a remark further on"


def test_every_word_asked_is_in_the_sentence_or_the_definition_it_sits_under() -> None:
    says = "If force is true, messages still being processed are deleted too."
    page = f"{SIGNATURE}\n\n{OPENING}\n\n{says}"
    assert _settles("What does the force argument of queue.purge do?", says, page)
    vague = "The queue.purge function deletes messages in batches."
    assert not _settles("What does the force argument of queue.purge do?", vague, f"x\n\n{vague}")


def test_a_long_definition_keeps_its_name_across_passages_and_examples() -> None:
    says = "If force is true, messages still being processed are deleted too."
    example = "    purge('billing')\n    purge('billing', force=True)"
    texts = (f"{SIGNATURE}\n\n{OPENING}", f"Example:\n\n{example}", says)
    assert _settles("What does the force argument of queue.purge do?", says, *texts)


def test_a_leading_label_and_an_aside_say_nothing() -> None:
    changed = "Changed in version 2.1: A warning is now logged for a large purge."
    page = f"{SIGNATURE}\n\n{OPENING}\n\n{changed}"
    assert not _settles("What does queue.purge change?", changed, page)
    aside = "Counts are approximate (as reported by queue.stats(), which returns estimates)."
    assert not _settles("What does queue.stats return?", aside, f"Notes\n\n{aside}")


def test_a_sentence_sending_the_reader_elsewhere_answers_nothing() -> None:
    """httpd's "For more details on the available flags, their meanings, and examples, see the
    Rewrite Flags document" had passed for what the [NC] flag does."""
    question = "What does the force flag of queue.purge do?"
    for pointer in (
        "For more details on the force flag and its effects on messages, see Purging.",
        "See Purging for the force flag and its effects on messages being processed.",
    ):
        assert not _settles(question, pointer, f"{SIGNATURE}\n\n{OPENING}\n\n{pointer}")
    says = "The force flag deletes even the messages being processed by a consumer."
    assert _settles(question, says, f"{SIGNATURE}\n\n{OPENING}\n\n{says}")


def test_a_version_note_answers_only_a_question_about_a_change_a_version_or_a_default() -> None:
    """Python's "Changed in version 3.5: Support for recursive globs using "**"." had passed
    for what `recursive` does with `**`: a note says what changed then."""
    note = "Changed in version 2.1: The force flag also deletes messages being processed."
    for other in ("New in this release, the 2 options: force and keep.", "See that it is closed."):
        assert not (_VERSION_NOTE.match(other) or _POINTER.match(other)), "not a note, no pointer"
    page = f"{SIGNATURE}\n\n{OPENING}\n\n{note}"
    assert not _settles("What does the force flag of queue.purge do?", note, page)
    assert _settles("What changed for the force flag of queue.purge?", note, page)
    says = "The force flag also deletes messages being processed by a consumer."
    assert _settles("What does the force flag of queue.purge do?", says, page.replace(note, says))


def test_a_table_row_answers_nothing() -> None:
    row = "force | Whether to delete messages being processed | bool, False by default."
    assert not _settles("What does force mean for queue.purge?", row, f"{SIGNATURE}\n\n{row}")


def test_a_comparison_is_answered_by_a_sentence_that_contrasts() -> None:
    question = "What is the difference between queue.purge and queue.drain?"
    both = "The queue.purge and queue.drain functions both act on messages in a queue."
    contrast = "The queue.purge function deletes messages, while queue.drain delivers them first."
    assert not _settles(question, both, f"Notes\n\n{both}")
    assert _settles(question, contrast, f"Notes\n\n{contrast}")
    # naming the two together says what they share, a negation notwithstanding
    shared = "Since purge() and drain() return None when no queue is found, test the result."
    assert not _settles(question, shared, f"Notes\n\n{shared}")
    listed = "The force option is not valid for purge or drain on a paused queue."
    assert not _settles(question, listed, f"Notes\n\n{listed}")
    against = "Unlike drain(), purge() and its batches do not deliver messages: they delete them."
    assert _settles(question, against, f"Notes\n\n{against}")
    # the contrast sets one against the other: between them, or under one's definition; not a
    # contrast before both (threading's "Otherwise, a new RLock object is created ...")
    otherwise = "Otherwise, a new drain() call delivers what purge() left in the queue."
    assert not _settles(question, otherwise, f"Notes\n\n{otherwise}")
    under = "Like drain(), but messages are deleted rather than delivered to a consumer first."
    assert _settles(question, under, f"{SIGNATURE}\n\n{OPENING}\n\n{under}")
    # "While" opening a sentence may tell a time, not a contrast
    meanwhile = "While a drain() call is running, purge() waits for it to return."
    assert not _settles(question, meanwhile, f"Notes\n\n{meanwhile}")


def test_a_name_after_a_leading_clause_or_under_another_definition_is_not_its_subject() -> None:
    later = "If you want to empty a queue safely, it is best to call queue.purge() with force off."
    assert not _settles("What does queue.purge do with force?", later, f"Recipes\n\n{later}")
    other = "Purge removes the messages that match a pattern from the queue."
    # the heading defines the `purge` command, not the `queue.purge` function
    assert not _settles(
        "What does queue.purge remove?",
        other,
        f"purge PATTERN\n\n{other}",
        section="purge",
        title="hq — the command line",
    )


def _wanted_of(main: str, question: str, other: str) -> Wanted:
    brief = Brief.model_validate(
        {
            "question": main,
            "questions": [{"id": "Q1", "text": question}, {"id": "Q2", "text": other}],
            "allowed_hosts": ["tool.example"],
        }
    )
    budget = Budget(steps_left=9, searches_left=1, pages_left=1, tokens_left=9)
    request = DecideInput(
        scope=RunScope.turn_of("r", "", 1, 0, ""), brief=brief, transcript=[], budget=budget
    )
    return wanted_words(brief.questions[0], request)


def _settles_for(wanted: Wanted, quote: str, page: str, **where: str) -> bool:
    passages = {"S1.P1": Passage("S1", page, where.get("section", ""), **_page(where))}
    return quote_settles(wanted, passages, "S1", quote)


def _page(where: dict[str, str]) -> dict[str, str]:
    return {key: value for key, value in where.items() if key in {"title", "site"}}


def test_the_page_title_and_the_site_name_what_the_page_is_about() -> None:
    """`tool-merge(1)` on tool-scm.example is about tool and merge: its sentence need not say
    them; on a page about something else it must."""
    wanted = _wanted_of(
        "How does tool merge pick a strategy?",
        "Which strategy does tool merge use by default for one branch?",
        "What does tool merge --squash do?",
    )
    says = "ort: This is the default strategy when pulling one branch."
    assert _settles_for(wanted, says, says, title="tool-merge(1)", site="tool-scm.example")
    assert not _settles_for(wanted, says, says, title="Release notes", site="docs.example")
    # a labelled list's term above is what the sentence defines, but a question asking which
    # one is answered by a quote that names it: under `ort::`, "This is the default strategy"
    # does not say which (a reader of the quote cannot tell)
    term = "This is the default strategy when pulling one branch."
    listed = f"ort::\n\t{term}"
    assert not _settles_for(wanted, term, listed, title="tool-merge(1)", site="tool-scm.example")


def test_a_question_of_framing_words_alone_looks_for_the_brief_s_word_it_uses() -> None:
    """ "when no mode option is given": framing and light words; the brief's "mode" is what the
    question asks about, so it leads."""
    wanted = _wanted_of(
        "How do the modes of tool reset differ?",
        "Which mode does tool reset use when no mode option is given?",
        "What does tool reset --soft do to the index?",
    )
    assert wanted.lead[0] == "mode"
    assert "given" not in wanted.lead[:1]


def test_a_value_is_what_a_sentence_tells() -> None:
    """One new word is enough when it is a value ("is None", "90 days"); a sentence with one
    new plain word tells nothing, nor one on a default asked for that states no value."""
    wanted = _wanted_of(
        "How do I control what override files may change?",
        "What is the default value of AllowOverride?",
        "In which sections is the AllowOverride directive valid?",
    )
    says = "The default value of AllowOverride is None."
    assert _settles_for(wanted, says, says, section="AllowOverride Directive")
    vague = "The default value of AllowOverride is documented."
    assert not _settles_for(wanted, vague, vague, section="AllowOverride Directive")
    # "What is the default X?" asks for a value: a sentence on X's default stating none
    # ("set this option to a value larger than ...") does not answer it
    asked = _wanted_of(
        "How does the queue client limit messages?",
        "What is the default maximum size of a message the queue accepts?",
        "How are larger messages refused?",
    )
    says = "The maximum size of a message the queue accepts defaults to 50M."
    assert _settles_for(asked, says, says, section="message_size_limit")
    none = "The default maximum size of a message the queue accepts protects the server."
    assert not _settles_for(asked, none, none, section="message_size_limit")


def test_what_the_sub_questions_share_may_be_said_around_the_sentence() -> None:
    """Both questions are about a bisect run script's exit code: the paragraph before says so,
    the sentence need only say what this one asks; a page that never says it does not."""
    wanted = _wanted_of(
        "How do I automate tool bisect with a script?",
        "Which exit code should a tool bisect run script exit with if a commit cannot be tested?",
        "Which exit codes of a tool bisect run script mark the commit as bad?",
    )
    before = "The bisect run script must exit with code 0 if the commit is good."
    says = "The special exit code 125 should be used when the current source cannot be tested."
    page = f"{before}\n\n{says}"
    assert _settles_for(wanted, says, page, section="Bisect run", title="tool-bisect(1)")
    assert not _settles_for(wanted, says, says, section="Building", title="tool-bisect(1)")


def test_a_reference_entry_s_labelled_value_answers_what_its_label_names() -> None:
    """A directive's table (`Default: | LimitRequestBody 1073741824` under its heading) says
    its default; the next directive's row, a question that compares, and a row whose label the
    question does not ask for do not."""
    wanted = _wanted_of(
        "How do I limit the size of request bodies the server accepts?",
        "What is the default value of LimitRequestBody?",
        "What does the server do when a request body exceeds the LimitRequestBody limit?",
    )
    table = (
        "Description: | Restricts the total size of the HTTP request body\n\n"
        "Syntax: | LimitRequestBody bytes\n\nDefault: | LimitRequestBody 1073741824\n\n"
        "Context: | server config, virtual host"
    )
    quote = (
        "Description: | Restricts the total size of the HTTP request body\n"
        "Syntax: | LimitRequestBody bytes\nDefault: | LimitRequestBody 1073741824"
    )
    assert _settles_for(wanted, quote, table, section="LimitRequestBody Directive")
    other = table.replace("LimitRequestBody", "LimitRequestFields")
    assert not _settles_for(
        wanted,
        quote.replace("LimitRequestBody", "LimitRequestFields"),
        other,
        section="LimitRequestFields Directive",
    )
    compares = _wanted_of(
        "How do I limit the size of request bodies the server accepts?",
        "How does the default of LimitRequestBody differ from LimitRequestFields?",
        "What does the server do when a request body exceeds the LimitRequestBody limit?",
    )
    assert not _settles_for(compares, quote, table, section="LimitRequestBody Directive")


def test_a_row_names_what_its_values_are_of() -> None:
    """`smtp_accept_max | Use: main | Type: integer | Default: 20` and the definition under it
    say how many calls are accepted by default; the next option's row, with the same default,
    is about waiting connections."""
    wanted = _wanted_of(
        "How many SMTP calls will the daemon take?",
        "How many simultaneous incoming SMTP calls does the daemon accept by default?",
        "What SMTP reply does a client get when it opens more calls than allowed?",
    )
    page = (
        "smtp_accept_max | Use: main | Type: integer | Default: 20\n\nThis option specifies the "
        "maximum number of simultaneous incoming SMTP calls that the daemon will accept.\n\n"
        "smtp_connect_backlog | Use: main | Type: integer | Default: 20\n\nThis option "
        "specifies a maximum number of waiting SMTP connections for the daemon."
    )
    says = (
        "smtp_accept_max | Use: main | Type: integer | Default: 20\nThis option specifies the "
        "maximum number of simultaneous incoming SMTP calls that the daemon will accept."
    )
    assert _settles_for(wanted, says, page, section="Main configuration")
    backlog = (
        "smtp_connect_backlog | Use: main | Type: integer | Default: 20\nThis option "
        "specifies a maximum number of waiting SMTP connections for the daemon."
    )
    assert not _settles_for(wanted, backlog, page, section="Main configuration")


def test_a_comparison_is_said_by_its_contrast_not_by_the_word_differ() -> None:
    wanted = _wanted_of(
        "Which kinds of clone can tool clone make?",
        "How does tool clone --mirror differ from tool clone --bare?",
        "Does a shallow tool clone fetch every branch?",
    )
    says = "Compared to --bare, --mirror not only maps local branches but all refs."
    assert _settles_for(wanted, says, says, title="tool-clone(1)")
    same = "Both --bare and --mirror make a repository for serving others."
    assert not _settles_for(wanted, same, same, title="tool-clone(1)"), "no contrast"


def test_a_question_asking_which_one_is_answered_by_naming_it() -> None:
    """With no name to pin it down, "which mode" is answered by a sentence that names one
    (`--mixed`), not by one that uses the words ("might no longer use the patch mode")."""
    wanted = _wanted_of(
        "How do the modes of tool reset differ?",
        "Which mode does tool reset use when no mode option is given?",
        "What does tool reset --soft do to the index?",
    )
    names = "If no mode is given, the reset uses --mixed, the default mode."
    assert _settles_for(wanted, names, names, title="tool-reset(1)")
    uses = "Now you might no longer use the patch mode of the reset command at all."
    assert not _settles_for(wanted, uses, uses, title="tool-reset(1)")


def test_an_option_is_a_name_whole_and_a_synopsis_says_nothing_of_it() -> None:
    """`-x` asks about -x: another option's definition (`-s:: --signoff:: Add ...`) does not
    say what -x adds; a usage line that lists `[-u|--include-untracked]` says nothing of it."""
    wanted = _wanted_of(
        "How do I copy commits with tool cherry-pick?",
        "What does tool cherry-pick -x add to the commit message?",
        "What does tool cherry-pick --no-commit do?",
    )
    assert "-x" in wanted.codes
    signoff = "Add a Signed-off-by trailer at the end of the commit message."
    page = f"-s:: --signoff:: {signoff}"
    assert not _settles_for(wanted, signoff, page, title="tool-cherry-pick(1)")
    says = "When recording the commit, add a line that says so to the commit message."
    assert _settles_for(wanted, says, f"-x:: {says}", title="tool-cherry-pick(1)")
    assert not _settles_for(wanted, says, says, title="tool-cherry-pick(1)"), "of which option?"
    stash = _wanted_of(
        "How do I set work aside with tool stash?",
        "What does the --include-untracked option of tool stash push do?",
        "How does tool stash apply differ from tool stash pop?",
    )
    usage = "push [-p|--patch] [-u|--include-untracked] [<pathspec>...]:: Save your local changes."
    assert not _settles_for(stash, usage, usage, title="tool-stash(1)")
    show = "Show the changes recorded in the stash entry as a diff, untracked files too."
    page = f"show [-u|--include-untracked] [<stash>]\n\n{show}"
    assert not _settles_for(stash, show, page, title="tool-stash(1)"), "the usage of show"


def test_an_option_that_goes_on_with_a_hyphen_is_another_option() -> None:
    """`--prune-tags` is not `--prune`: a sentence under its definition that mentions
    `--prune` in a condition does not say what `--prune` removes."""
    wanted = _wanted_of(
        "How does tool fetch update references?",
        "What does tool fetch --prune remove before fetching?",
        "What does tool fetch --depth limit?",
    )
    other = "Before fetching, remove any local tags that no longer exist if --prune is enabled."
    assert not _settles_for(wanted, other, f"--prune-tags:: {other}", title="tool-fetch(1)")
    says = "Before fetching, remove any remote-tracking references that no longer exist."
    assert _settles_for(wanted, says, f"--prune:: {says}", title="tool-fetch(1)")


def test_a_list_naming_the_things_compared_says_what_they_share() -> None:
    """ "How does X apply differ from X pop?" compares two plain words: a list naming both
    ("valid for `apply`, `drop`, `pop`") says what they share, "Unlike pop, ..." how they
    differ, and "Compared to ..." sets one against the other."""
    wanted = _wanted_of(
        "How do I set work aside with tool stash?",
        "How does tool stash apply differ from tool stash pop?",
        "What does tool stash push save?",
    )
    listed = "This option is only valid for `apply`, `drop`, `pop` and `push` commands."
    assert not _settles_for(wanted, listed, f"--index:: {listed}", title="tool-stash(1)")
    ending = "This option is only valid for apply, drop, push and pop."
    assert not _settles_for(wanted, ending, f"--index:: {ending}", title="tool-stash(1)")
    says = "Unlike pop, apply leaves the state in the stash list."
    assert _settles_for(wanted, says, says, title="tool-stash(1)", section="apply")
    compared = _wanted_of(
        "How do I copy repositories with tool clone?",
        "How does tool clone --mirror differ from tool clone --bare?",
        "What does tool clone --depth do?",
    )
    against = "Compared to --bare, --mirror not only maps local branches, it maps all refs."
    assert _settles_for(compared, against, f"--mirror:: {against}", title="tool-clone(1)")


def test_the_shared_ground_is_the_paragraph_s_not_the_whole_section_s() -> None:
    """A `return` statement's section mentions a try statement's finally clause: its "else
    None is substituted" says nothing of a try statement's else clause."""
    wanted = _wanted_of(
        "How does exception handling work?",
        "What does the else clause of a try statement do?",
        "When does the finally clause of a try statement run?",
    )
    far = "When return leaves a try statement with a finally clause, it runs first."
    says = "If an expression list is present, it is evaluated, else None is substituted."
    page = f"{far}\n\nThe return statement may only occur in a function.\n\n{says}"
    assert not _settles_for(wanted, says, page, section="The return statement")


def test_under_its_definition_the_word_asked_about_is_still_said() -> None:
    """One word may be said otherwise under the definition, never the one asked about: the
    opening of `json.dump`'s definition does not say what its indent parameter does."""
    wanted = _wanted_of(
        "How does the json module format output?",
        "What does the indent parameter of json.dump do?",
        "What does json.dumps return?",
    )
    signature = "json.dump(obj, fp, *, skipkeys=False, indent=None, sort_keys=False)"
    opening = "Serialize obj as a JSON formatted stream to fp using this conversion table."
    says = "If indent is a non-negative integer or string, then array elements are pretty-printed."
    page = f"{signature}\n\n{opening}\n\n{says}"
    where = {"section": "Basic Usage", "title": "json — JSON encoder and decoder"}
    assert not _settles_for(wanted, opening, page, **where)
    assert _settles_for(wanted, says, page, **where)
    # what a "Which element ..." asks for is the kind of thing the answer names
    pop = "Pop and return the oldest message of the queue, leaving the rest in order."
    assert _settles("Which element does queue.pop return?", pop, f"queue.pop(name)\n\n{pop}")


def test_a_change_note_tells_what_it_says_not_its_label() -> None:
    """'Changed in version 3.5: Added the chunksize argument.' says the argument exists, not
    what it does: the label's words are not what the sentence tells."""
    question = "What does the chunksize argument of queue.purge do?"
    note = "Changed in version 3.5: Added the chunksize argument."
    page = f"{SIGNATURE}\n\n{OPENING}\n\n{note}"
    assert not _settles(question, note, page)
    says = "The chunksize argument sets how many messages are deleted in each batch."
    assert _settles(question, says, f"{SIGNATURE}\n\n{OPENING}\n\n{says}")


def test_a_version_the_question_pins_to_a_name_is_not_another_names() -> None:
    """'Which Python versions does Harbor 3.2 support?' is not answered by a sentence on
    Python 3.2's end of support; it is by one on Harbor 3.2's."""
    wanted = _wanted_of(
        "Can I run Harbor 3.2 on my Python?",
        "Which Python versions does Harbor 3.2 support?",
        "How long will Harbor 3.2 get fixes?",
    )
    other = "Upstream support for Python 3.2 ends in February, so its versions get no updates."
    ours = "Harbor 3.2 supports Python versions 3.8, 3.9 and 3.10."
    where = {"section": "Release notes", "title": "Harbor release notes"}
    assert not _settles_for(wanted, other, f"Notes\n\n{other}", **where)
    assert _settles_for(wanted, ours, f"Notes\n\n{ours}", **where)


def test_a_sentence_of_a_shared_entry_opening_with_another_option_is_that_options() -> None:
    """Under `--ff:: --no-ff:: --ff-only::`, 'With --ff, ...' is about --ff, not --ff-only."""
    wanted = _wanted_of(
        "How does tool merge handle fast-forwards?",
        "What does tool merge --ff-only refuse?",
        "Which strategy does tool merge use?",
    )
    entry = "--ff::\n--no-ff::\n--ff-only::"
    other = "With --ff, tool merge refuses nothing and creates a merge commit when it must."
    ours = "With --ff-only, tool merge refuses every merge that is not a fast-forward."
    where = {"section": "OPTIONS", "title": "tool-merge(1)"}
    page = f"{entry}\n\n{other}\n\n{ours}"
    assert not _settles_for(wanted, other, page, **where)
    assert _settles_for(wanted, ours, page, **where)


def test_a_version_the_question_pins_to_a_name_is_said_not_only_the_title_s() -> None:
    """A general policy sentence on 'a Python version' and 'the first Harbor LTS release' does
    not say which versions Harbor 3.2 supports, though the doc set's title carries 3.2.25."""
    wanted = _wanted_of(
        "Can I run Harbor 3.2 on my Python?",
        "Which Python versions does Harbor 3.2 support?",
        "How long will Harbor 3.2 get fixes?",
    )
    policy = (
        "Typically, we will support a Python version up to the first Harbor LTS release whose "
        "security support ends after that version of Python ends."
    )
    where = {"section": "Installation FAQ", "title": "Harbor 3.2.25 documentation"}
    assert not _settles_for(wanted, policy, f"Notes\n\n{policy}", **where)
    under = {"section": "Harbor 3.2 release notes", "title": "Harbor 3.2.25 documentation"}
    assert _settles_for(wanted, policy, f"Notes\n\n{policy}", **under)
    # a table's row before it is no heading; Python's 3.2 is not Harbor's, nor is a sentence
    # after it that writes no version
    table = "Harbor version | Python versions\n\n3.2 | 3.6, 3.7, 3.8"
    assert not _settles_for(wanted, policy, f"{table}\n\n{policy}", **where)
    older = (
        "Harbor 1.5 introduces support for Python 3, specifically Python 3.2 and above. "
        "This comes as a single codebase; no other version of Harbor is supported on Python 3."
    )
    assert not _settles_for(wanted, older, f"Notes\n\n{older}", **where)


def test_a_sentence_that_points_back_is_quoted_with_the_one_it_points_to() -> None:
    """'The size of these chunks ...' is quoted from the sentence that says what the chunks are,
    so a quote says what it is about; the test still reads each sentence on its own: what the
    sentence before says is not said by one that points back to it ("It requires Python 3.8",
    after a sentence holding every word asked, tells nothing asked)."""
    wanted = _wanted_of(
        "How do I run calls in parallel with the queue pool?",
        "What does the chunksize argument of pool.map do?",
        "What happens when a call made by pool.map raises?",
    )
    says = "This method chops iterables into a number of chunks it submits as separate tasks."
    points = "The size of these chunks can be set with chunksize, 1 by default."
    passage = Passage("S1", f"pool.map(func, *iterables, chunksize=1)\n\n{says} {points}", "Pool")
    quotes = [e.quote for e in _excerpts("S1.P1", passage, wanted)]
    assert f"{says} {points}" in quotes and points not in quotes
    lts = _wanted_of(
        "Can I run Harbor 3.2 on my Python?",
        "How long will the Harbor 3.2 long-term support release get security fixes?",
        "Which Python versions does Harbor 3.2 support?",
    )
    where = {"section": "Release notes", "title": "Harbor release notes"}
    before = "Harbor 3.2 is a long-term support release and will receive security fixes."
    for other in (
        "It requires Python 3.8 or later.",
        "This release was published 2 April 2021.",
        "Its predecessor, Harbor 2.2, received them for three years.",
    ):
        quote = f"{before} {other}"
        assert not _settles_for(lts, quote, quote, **where), other


def test_another_inflection_says_a_word_but_a_heading_never_says_a_lead_word() -> None:
    """'If MaxRequests is set to 0, ...' says what setting MaxRequests to 0 does ("set" says
    "setting"); a heading that says "set" does not say it for a sentence that does not."""
    wanted = _wanted_of(
        "How do I tune persistent connections in the queue server?",
        "What does setting MaxRequests to 0 do?",
        "How long does the queue server wait for a next request?",
    )
    where = {"section": "Connection directives", "title": "Queue server core features"}
    says = "If MaxRequests is set to 0, unlimited requests will be allowed."
    assert _settles_for(wanted, says, says, **where)
    limits = "The MaxRequests directive limits the number of requests allowed, up to 500."
    assert not _settles_for(wanted, limits, limits, **where)
    for heading in ({"section": "Directives you can set"}, {"title": "set: server settings"}):
        assert not _settles_for(wanted, limits, limits, **{**where, **heading}), heading


def test_a_labelled_value_is_quoted_so_the_host_takes_it() -> None:
    """Three labelled lines read as a table of contents to the host, so the entry's default is
    quoted with the one row that says what it is of: an answer the run can record."""
    wanted = _wanted_of(
        "How do I tune persistent connections in the queue server?",
        "How long does the queue server wait for a next request on a persistent connection by "
        "default (IdleTimeout)?",
        "What does setting MaxRequests to 0 do?",
    )
    table = (
        "Description: | Time the server waits for a next request on a persistent connection\n\n"
        "Syntax: | IdleTimeout num[ms]\n\nDefault: | IdleTimeout 5\n\n"
        "Context: | server config, virtual host"
    )
    where = ("IdleTimeout Directive", "Core features")
    passages = {"S1.P1": Passage("S1", table, *where, site="queue.example")}
    best = best_excerpt(wanted, passages, set(), {"S1"}, 1, about=says_answer)
    assert best is not None and best.quote.endswith("Default: | IdleTimeout 5")
    assert evidence_problem(best.quote, best.context, best.claim, wanted.terms) is None
    assert quote_settles(wanted, passages, "S1", best.quote)


def test_the_entry_the_question_names_may_say_one_word_otherwise() -> None:
    """`max_size | Use: main | Default: 50M` with 'This option limits the maximum size of
    message that the server will process' answers the default maximum size the server will
    accept (the main max_size): the entry is the one named, and "accept" is said otherwise."""
    wanted = _wanted_of(
        "How big a message will the queue server accept?",
        "What is the default maximum size of a message that the queue server will accept "
        "(the main max_size)?",
        "What happens to a message larger than the max_size of its transport?",
    )
    entry = "max_size | Use: main | Type: string | Default: 50M"
    says = "This option limits the maximum size of message that the queue server will process."
    quote = f"{entry}\n{says}"
    page = f"{entry}\n\n{says}"
    where = {"section": "Main configuration", "title": "Queue server options"}
    assert _settles_for(wanted, quote, page, **where)
    other = entry.replace("max_size", "max_rate")
    assert not _settles_for(wanted, quote.replace("max_size", "max_rate"), f"{other}\n\n{says}")


MAX_REQUESTS = _wanted_of(
    "How do I tune persistent connections in the queue server?",
    "What does setting MaxRequests to 0 do?",
    "How long does the queue server wait for a next request?",
)
MAX_REQUESTS_ENTRY = {"section": "MaxRequests Directive", "title": "Queue server core features"}
LIMITS = "The MaxRequests directive limits the number of requests allowed per connection."
PICK = _wanted_of(
    "How do I copy commits between branches with tool pick?",
    "What does tool pick --no-commit do?",
    "What does tool pick -x add to the message?",
)
PICK_PAGE = {"section": "OPTIONS", "title": "tool-pick(1)", "site": "tool-scm.example"}
PICK_OPENING = "Usually the command automatically creates a sequence of commits."


def test_a_sentence_pointing_back_under_an_entry_says_the_entry_s_name() -> None:
    """'If it is set to 0, ...' after 'The MaxRequests directive limits ...', under the
    MaxRequests heading, is about MaxRequests: the name the sentence before and the heading
    share is its own. Only the name: a number the question sets is the sentence's, and under a
    heading that defines something else the sentence says nothing of MaxRequests."""
    says = f"{LIMITS} If it is set to 0, unlimited requests will be allowed."
    assert _settles_for(MAX_REQUESTS, says, says, **MAX_REQUESTS_ENTRY)
    other = f"{LIMITS} This setting defaults to 100, the number most sites keep."
    assert not _settles_for(MAX_REQUESTS, other, other, **MAX_REQUESTS_ENTRY), "not what 0 does"
    notes = {"section": "Release notes", "title": "Queue server core features"}
    assert not _settles_for(MAX_REQUESTS, says, says, **notes), "the heading defines another"


def test_the_sentence_after_an_entry_s_opening_that_points_back_to_it_says_what_it_does() -> None:
    """'What does tool pick --no-commit do?': the entry's opening ('Usually the command creates
    commits.') says nothing of the flag; the sentence after it ('This flag applies ...') does,
    and is quoted with the opening. Further on, a remark is no answer to what it does."""
    flag = (
        "This flag applies the changes necessary to pick each named commit to your working "
        "tree and the index, without making any commit."
    )
    quote = f"{PICK_OPENING} {flag}"
    assert _settles_for(PICK, quote, f"-n::\n--no-commit::\n\n{quote}", **PICK_PAGE)
    later = f"{PICK_OPENING} It is handy in scripts. {flag}"
    page = f"-n::\n--no-commit::\n\n{later}"
    assert not _settles_for(PICK, later, page, **PICK_PAGE), "a remark further on"


def test_a_class_the_sentence_names_qualifies_the_method_above_it() -> None:
    """`limit_denominator()` on the fractions page, with 'Finds and returns the closest Fraction
    ...' under it, is `Fraction.limit_denominator`: the sentence names the class. A plain word
    ('from the queue') is no qualifier (see the queue.purge case above)."""
    wanted = _wanted_of(
        "How do I do exact rational arithmetic with fractions?",
        "What does Fraction.limit_denominator do?",
        "Why does Fraction(1.1) not equal eleven tenths?",
    )
    where = {"section": "fractions — Rational numbers", "title": "fractions — Rational numbers"}
    says = "Finds and returns the closest Fraction to self that has denominator at most max."
    page = f"limit_denominator(max_denominator=1000000)\n\n{says}"
    assert _settles_for(wanted, says, page, **where)
    plain = "Finds and returns the closest value to self that has denominator at most max."
    page = f"limit_denominator(max_denominator=1000000)\n\n{plain}"
    assert not _settles_for(wanted, plain, page, **where)


def test_a_reference_table_s_row_naming_its_entry_is_the_signature_not_its_default() -> None:
    """Under 'MaxRequests Directive', the prose sits under the `Syntax:` row that names the
    entry, not the `Module:` row at the table's end nor the `Default:` row (whose words and
    value are not what every sentence below says), in the passage or the one before."""
    wanted = _wanted_of(
        "How do the server's child processes handle connections?",
        "What does MaxRequests set to 0, its default, mean?",
        "How many children does the server start?",
    )
    table = (
        "Description: | Limit on the requests a child handles\n\nSyntax: | MaxRequests number"
        "\n\nDefault: | MaxRequests 0\n\nModule: | core"
    )
    prose = "The MaxRequests directive sets the limit on the number of requests a child handles."
    section = "MaxRequests Directive"
    one = {"S1.P1": Passage("S1", f"{table}\n\n{prose}", section, "core")}
    two = {"S1.P1": Passage("S1", table, section, "core"), "S1.P2": Passage("S1", prose, section)}
    for passages in (one, two):
        last = list(passages)[-1]
        excerpts = _excerpts(last, passages[last], wanted, *_before(passages, last))
        assert {e.signature for e in excerpts if e.quote == prose} == {
            "Syntax: | MaxRequests number"
        }
        assert not quote_settles(wanted, passages, "S1", prose), "it does not say what 0 means"


def test_a_definition_list_s_terms_all_name_what_the_prose_below_defines() -> None:
    """`--autosquash` then `--no-autosquash`, each a term of its own above one definition: the
    prose is `--autosquash`'s too, in the passage or after the passage the terms end."""
    wanted = _wanted_of(
        "How do I clean up a branch's history with tool rebase?",
        "What does tool rebase --autosquash do with commits whose message begins with fixup!?",
        "What does tool rebase do with merge commits?",
    )
    says = (
        'When the commit message begins with "fixup! ...", automatically modify the todo list '
        "so that the commit marked for squashing comes right after the commit to be modified."
    )
    where = {"section": "OPTIONS", "title": "tool-rebase(1)", "site": "tool-scm.example"}
    terms = "--autosquash\n\n--no-autosquash"
    assert _settles_for(wanted, says, f"{terms}\n\n{says}", **where)
    passages = {
        "S1.P1": Passage(
            "S1", f"See also the options below.\n\n{terms}", "OPTIONS", **_page(where)
        ),
        "S1.P2": Passage("S1", says, "OPTIONS", **_page(where)),
    }
    assert quote_settles(wanted, passages, "S1", says)
    assert not _settles_for(wanted, says, f"--no-autosquash\n\n{says}", **where)
    # three terms or more (`-u`, `--include-untracked`, `--no-include-untracked`): the first
    # are the prose's as much as the last
    assert _settles_for(wanted, says, f"-s\n\n{terms}\n\n{says}", **where)


def test_a_quantity_asked_may_be_stated_in_the_sentence_s_aside() -> None:
    """'for how many files does it work?': '(works only for a single file)' states it."""
    wanted = _wanted_of(
        "How do I follow a file's history with tool log?",
        "What does tool log --follow do, and for how many files does it work?",
        "What does tool log --first-parent do?",
    )
    where = {"section": "OPTIONS", "title": "tool-log(1)", "site": "tool-scm.example"}
    says = "Continue listing the history of a file beyond renames (works only for a single file)."
    assert _settles_for(wanted, says, f"--follow::\n\n{says}", **where)
    vague = "Continue listing the history of a file beyond renames."
    assert not _settles_for(wanted, vague, f"--follow::\n\n{vague}", **where)


def test_what_a_borrowed_name_needs_of_the_sentence_that_points_back() -> None:
    """A review's wrong passes, each refused: the number set is the sentence's as a number
    ("0.25" is not 0); the sentence before names nothing else "it" could be (IdleTimeout); the
    sentence opens pointing back ("Unlike these limits, setting Timeout ..." does not); the second
    sentence of an entry says a word asked, not a remark; a class named in the sentence
    qualifies only on its page (Decimal on the fractions page does not); a quantity in an aside
    comes with a word asked ("(since 2.1)" states none)."""
    for quote in (
        f"{LIMITS} This setting defaults to 0.25 of the pool, the share most sites keep.",
        "The MaxRequests directive limits the number of requests allowed per connection; see "
        "also the IdleTimeout directive. If it is set to 0, the server waits forever.",
        f"{LIMITS} Unlike these limits, setting Timeout to 0 disables waiting altogether.",
    ):
        assert not _settles_for(MAX_REQUESTS, quote, quote, **MAX_REQUESTS_ENTRY), quote
    remark = f"{PICK_OPENING} This is not what most scripts expect, so take care when scripting it."
    page = f"-n::\n--no-commit::\n\n{remark}"
    assert not _settles_for(PICK, remark, page, **PICK_PAGE)
    decimal = _wanted_of(
        "How do I convert floats exactly?", "What does Decimal.from_float do?", "Why is 0.1 off?"
    )
    says = (
        "Alternative constructor which only accepts float or int; a Decimal goes to from_decimal()."
    )
    fractions = {"section": "fractions — Rational numbers", "title": "fractions — Rational numbers"}
    assert not _settles_for(decimal, says, f"from_float(flt)\n\n{says}", **fractions)
    since = "The queue.purge function waits for the lock before deleting messages (since 2.1)."
    page = f"{SIGNATURE}\n\n{OPENING}\n\n{since}"
    assert not _settles("How long does queue.purge wait for a lock?", since, page)


def test_a_labelled_value_answers_only_for_the_entry_the_question_names() -> None:
    """On a reference page of many entries, `Default: | ErrorLog logs/error_log` under 'ErrorLog
    Directive' is ErrorLog's default, not that of the Options directive the question asks about,
    though every entry's heading says 'Directive' and the page says 'options' elsewhere; the
    Options entry's own row does answer (bench.strongest_test found 25 such quotes on httpd's
    core.html)."""
    wanted = _wanted_of(
        "Which options can I enable for a directory in the server?",
        "What is the default of the Options directive in the server?",
        "What happens if one Options line mixes options prefixed with + or - with plain options?",
    )
    table = (
        "Description: | Where the server will log errors\n\n"
        "Syntax: | ErrorLog file-path\n\nDefault: | ErrorLog logs/error_log\n\n"
        "Context: | server config, virtual host"
    )
    quote = "Syntax: | ErrorLog file-path\nDefault: | ErrorLog logs/error_log"
    where = {"section": "ErrorLog Directive", "title": "core - the server's options"}
    assert not _settles_for(wanted, quote, table, **where)
    own = table.replace("ErrorLog file-path", "Options [+|-]option").replace(
        "ErrorLog logs/error_log", "Options FollowSymlinks"
    )
    quote = "Syntax: | Options [+|-]option\nDefault: | Options FollowSymlinks"
    assert _settles_for(wanted, quote, own, **{**where, "section": "Options Directive"})
    # an entry whose value does not repeat its name is named by another row of its table
    unset = table.replace("ErrorLog file-path", "RLimitCPU seconds").replace(
        "ErrorLog logs/error_log", "Unset; uses operating system defaults"
    )
    quote = "Syntax: | RLimitCPU seconds\nDefault: | Unset; uses operating system defaults"
    assert not _settles_for(wanted, quote, unset, **{**where, "section": "RLimitCPU Directive"})


def test_a_labelled_value_is_held_to_the_entry_it_names_and_to_none_where_it_names_none() -> None:
    """The entry a `Default:` row belongs to is named by its row, or by the heading's first
    word when a row of its table opens with it too; a row under a heading of several options
    ("3.1.1. General Options", `Default: | off`) names none, and is not held to one."""
    wanted = _wanted_of(
        "How do I configure the build?",
        "What is the default of the debug build option?",
        "What does the shared library option build?",
    )

    def names(text: str, section: str) -> list[set[str] | None]:
        passage = Passage("S1", text, section, "Configure the build")
        fielded = [e for e in _excerpts("S1.P1", passage, wanted) if e.field is not None]
        return [_entry_name(excerpt, excerpt.field) for excerpt in fielded if excerpt.field]

    table = "Description: | Limit on CPU\n\nSyntax: | RLimitCPU seconds\n\nDefault: | Unset"
    assert {"rlimitcpu"} in names(table, "RLimitCPU Directive")
    assert set(map(str, names("Default: | off, a release build", "3.1.1. General Options"))) == {
        "None"
    }
    row = "debug_build | Use: main | Type: boolean | Default: false"
    assert {"debug_build", "debug", "build"} in names(row, "Options")


def test_a_union_written_in_prose_is_no_table_row() -> None:
    """A table row is its cells joined by " | ": three or more, or two after a row. A sentence
    writing a union (`Timeout[X] is equivalent to X | None`) under its definition is prose."""
    says = "Timeout[X] is equivalent to X | None (or Union[X, None])."
    page = f"queue.Timeout\n\nTimeout type.\n\n{says}"
    assert _settles("What does queue.Timeout mean?", says, page)
    row = "force | Delete messages being processed"
    table = f"{SIGNATURE}\n\nname | The queue's name | str\n\n{row}"
    assert not _settles("What does force mean for queue.purge?", row, table), "a row after a row"


def test_a_term_s_label_names_what_its_sentence_defines() -> None:
    """A parameter list's entry (`handler: A function to be called ...`) under the class
    signature defines the name its label holds, though a leading label otherwise says nothing."""
    question = "What does the on_message attribute of a queue.Consumer do?"
    says = "on_message: A function to be called whenever the Consumer receives a message."
    signature = "class queue.Consumer(on_message, on_error)\n\nA consumer of one queue."
    page = f"{signature}\n\n{says}"
    assert _settles(question, says, page)
    other = says.replace("on_message:", "on_error:")
    page = f"{signature}\n\n{other}"
    assert not _settles(question, other, page), "the label names another"
    attribute = says.replace("on_message:", "queue.Consumer.on_message:")
    page = f"{signature}\n\n{attribute}"
    assert not _settles("What does queue.Consumer do?", attribute, page), "its attribute's"
    fixed = "on_message: no longer called twice when the Consumer reconnects to the broker."
    assert not _settles(question, fixed, f"Changes in 2.1\n\n{fixed}"), "no definition above"
    note = "WARNING: calling this from a signal handler may deadlock the Consumer."
    page = f"{signature}\n\n{note}"
    assert not _settles("What does queue.WARNING mean?", note, page), "a note's label"


def test_what_a_name_is_used_for_is_said_by_a_sentence_saying_its_use() -> None:
    """'What is a queue.Batch used for?' asks its use: under its definition, a sentence further
    on that says how it is used answers, one that says something else of it does not."""
    question = "What is a queue.Batch used for?"
    says = "Such classes are primarily used with consumers that acknowledge many messages at once."
    page = f"class queue.Batch\n\nBase class for batches.\n\n    class Bulk(Batch): ...\n\n{says}"
    assert _settles(question, says, page)
    other = "Such classes are rarely subclassed by applications written by hand."
    assert not _settles(question, other, page.replace(says, other)), "not its use"
    old = "Batch objects used by versions before 2.0 are no longer read by the server."
    assert not _settles(question, old, page.replace(says, old)), "used, but not its use"


def test_a_value_asked_is_said_by_the_term_its_list_entry_opens_with() -> None:
    """The question "What does repeat='+' mean for a queue?": the list entry "'+'. Just like
    '*', every failed message ..." under the repeat heading says it though the value is a
    sentence of its own; another value's entry does not."""
    question = "What does repeat='+' mean for a queue?"
    says = "'+'. Just like '*', every failed message is put back on the queue until it expires."
    assert _settles(question, says, says, section="repeat")
    other = says.replace("'+'. Just like '*'", "'?'. Unlike '*'")
    assert not _settles(question, other, other, section="repeat"), "another value's entry"
    star = "What does repeat='*' mean for a queue?"
    assert not _settles(star, says, says, section="repeat"), "'*' named in the '+' entry"
    remark = "Retries are scheduled by the broker. Any value but '+' may be given a timeout."
    page = f"Retry a failed message.\n\n{remark}"
    assert not _settles(question, remark, page, section="repeat"), "a remark naming the value"


def test_a_question_asking_two_things_is_answered_part_by_part_in_its_order() -> None:
    """'What does queue.size return, and is it affected by expired messages?' asks two things:
    a sentence answering each, the first before the second, answers it, though none says both;
    the second said before the first is not its answer."""
    question = "What does queue.size return, and is it affected by expired messages?"
    signature = "queue.size(name)"
    says = (
        "Return the number of messages waiting in the named queue, a count kept by the server. "
        "The count is not affected by expired messages."
    )
    assert _settles(question, says, f"{signature}\n\n{says}")
    backwards = "The count is not affected by expired messages. The returned count is approximate."
    assert not _settles(question, backwards, f"{signature}\n\n{backwards}"), "out of order"
    # the second part, naming nothing, is still about queue.size: not another name's
    notes = (
        "queue.size() now returns the number of pending messages. "
        "The total shown by queue.stats() is affected by expired messages."
    )
    assert not _settles(question, notes, f"Changes in 2.1\n\n{notes}"), "said of another"
    # and a version the whole question pins stays pinned in each part
    pinned = "Is Harbor 3.2 a long-term support release, and when does it end extended support?"
    other = (
        "Harbor 3.2 is a long-term support release. Harbor 2.2 will end extended support in 2022."
    )
    assert not _settles(pinned, other, f"Releases\n\n{other}"), "another version's end"


def test_a_yes_or_no_question_is_answered_no_by_a_sentence_negating_every_word_it_asks() -> None:
    """A question asking yes or no is answered "no" by a sentence saying every word it asks,
    negated, with nothing of its own ('is not affected by ...'); a "yes" needs what any answer
    needs (one word of its own may be anything: 'precedes a blocking call'), and a question
    asking what is wants more than a negation."""
    page = f"{SIGNATURE}\n\n{OPENING}"
    no = "A purge is not affected by paused consumers."
    assert _settles("Is a queue purge affected by paused consumers?", no, f"{page}\n\n{no}")
    assert not _settles("How is a queue purge affected by paused consumers?", no, f"{page}\n\n{no}")
    yes = "A purge precedes a blocking call."
    assert not _settles("Is a queue purge a blocking call?", yes, f"{page}\n\n{yes}")
    there = "There is no way to undo a purge."
    assert not _settles("Is there a way to undo a purge?", there, f"{page}\n\n{there}")


def test_an_option_with_no_word_is_quoted_from_its_definitions_opening() -> None:
    """'What does hq -c do?': `-c` holds no word to find, so the sentence opening its entry
    ('Create the queue.') starts a quote, not only the later one holding a question's word."""
    wanted = _wanted_of("How do I manage queues with hq?", "What does hq -c do?", "Why?")
    text = "-c\n\nCreate the queue. If the queue already exists, it is emptied first."
    passage = Passage("S1", text, "Options", "hq — the command line")
    quotes = [excerpt.quote for excerpt in _excerpts("S1.P1", passage, wanted)]
    assert any(quote.startswith("Create the queue.") for quote in quotes), quotes


def test_a_condition_without_its_subject_is_the_sentence_before_s() -> None:
    """'What does hq push --ff-only do when the push cannot be made as a fast-forward?': "When not
    possible, refuse to push ..." is the sentence before's condition said again, reversed, under
    the option's entry; a sentence with its own subject does not borrow the one before's
    words."""
    wanted = _wanted_of(
        "How does hq push update queues?",
        "What does hq push --ff-only do when the push cannot be made as a fast-forward?",
        "Why?",
    )
    entry = {"section": "--ff-only", "title": "hq-push(1)"}
    says = "With --ff-only, make the push as a fast-forward when possible. When not possible, "
    says += "refuse to push and exit with a non-zero status."
    assert _settles_for(wanted, says, f"--ff::\n--ff-only::\n\n{says}", **entry)
    other = says.replace("When not possible, refuse", "The server may not refuse")
    assert not _settles_for(wanted, other, f"--ff::\n--ff-only::\n\n{other}", **entry)


def test_a_default_asked_by_a_clause_is_said_as_a_default() -> None:
    """'Which URL does the client open when QUEUE_URL is not set?' asks the default: the
    `Default:` line under QUEUE_URL's heading says it, a question without the clause is not
    asked it, and the next setting's default is not QUEUE_URL's."""
    wanted = _wanted_of(
        "Where does the client connect?",
        "Which URL does the client open when QUEUE_URL is not set?",
        "Which port does the client use?",
    )
    entry = "Default: 'http://localhost/queues/'\n\nThe URL the client opens for the queue page."
    quote = "Default: 'http://localhost/queues/'\nThe URL the client opens for the queue page."
    assert _settles_for(wanted, quote, entry, section="QUEUE_URL")
    assert not _settles_for(wanted, quote, entry, section="QUEUE_REDIRECT_URL")
    plain = _wanted_of(
        "Where does the client connect?",
        "Which URL does the client open?",
        "Which port does the client use?",
    )
    assert not _settles_for(plain, quote, entry, section="QUEUE_URL"), "no default asked"
    # a negated verb that is no condition asks what is left out, not a default
    left_out = _wanted_of(
        "Where does the client connect?",
        "Which headers are not passed to the upstream?",
        "Which port does the client use?",
    )
    headers = "Default: 'Host, Connection'\n\nThe headers sent to the upstream."
    sent = "Default: 'Host, Connection'\nThe headers sent to the upstream."
    assert not _settles_for(left_out, sent, headers, section="PROXY_HEADERS")


def test_a_name_left_at_its_default_need_not_be_said() -> None:
    """'Which algorithm does the client sign messages with when MESSAGE_SIGNERS is left
    alone?': "By default, the client signs messages with the HMAC algorithm" answers it without
    naming MESSAGE_SIGNERS; a sentence on another entry's default that says little of the
    question does not, nor one that does not say default, nor one naming another setting, nor
    one that leaves out a word of the name ("a connect timeout" for READ_TIMEOUT)."""
    wanted = _wanted_of(
        "How does the client sign and verify messages?",
        "Which algorithm does the client sign messages with when MESSAGE_SIGNERS is left alone?",
        "How do I switch to Ed25519?",
    )
    says = "By default, the client signs messages with the HMAC algorithm and a SHA256 hash."
    assert _settles_for(wanted, says, says, section="Signing")
    other = "On large systems, the default should probably be increased to a higher number."
    assert not _settles_for(wanted, other, other, section="Signing")
    undefaulted = "The client signs messages with the HMAC algorithm and a SHA256 hash."
    assert not _settles_for(wanted, undefaulted, undefaulted, section="Signing")
    named = "By default, `client.sign` signs messages with the HMAC algorithm and a SHA256 hash."
    assert not _settles_for(wanted, named, named, section="Signing")
    timeout = _wanted_of(
        "How does the client wait for the server?",
        "What timeout does the client use when READ_TIMEOUT is not set?",
        "How do I retry a request?",
    )
    connect = "By default, the client uses a connect timeout of 10 seconds."
    assert not _settles_for(timeout, connect, connect, section="Timeouts")
    read = "By default, the client uses a read timeout of 30 seconds."
    assert _settles_for(timeout, read, read, section="Timeouts")


def test_how_long_something_lasts_is_said_by_its_duration() -> None:
    """'How long does the session token last by default?': the token's `Default:` line gives a
    duration (it need not say "last"); one with no quantity does not; "live" of 'How long does
    a live migration take?' is no such verb."""
    wanted = _wanted_of(
        "How does the client keep sessions?",
        "How long does the session token last by default?",
        "Where is the session token stored?",
    )
    entry = "Default: 86400 (one day, in seconds)\n\nThe age of session tokens, in seconds."
    quote = "Default: 86400 (one day, in seconds)\nThe age of session tokens, in seconds."
    assert _settles_for(wanted, quote, entry, section="SESSION_TOKEN_AGE")
    live = _wanted_of("How do I move queues?", "How long does a live migration take?", "Why?")
    took = "A migration takes about 2 minutes for small queues."
    assert not _settles_for(live, took, took, section="Migrations")
    none = entry.replace("86400 (one day, in seconds)", "empty")
    assert not _settles_for(
        wanted, quote.replace("86400 (one day, in seconds)", "empty"), none, section="X"
    )


def test_an_aside_of_the_question_and_a_value_it_sets_are_said_by_the_value() -> None:
    """'What does MaxWorkersPerQueue set to 0, its default, mean?': "If MaxWorkersPerQueue is 0,
    then the queue never stops taking workers" answers it (", its default," is an aside, "set
    to 0" is said by "is 0"); a sentence without the 0 does not."""
    wanted = _wanted_of(
        "How does the server manage queue workers?",
        "What does MaxWorkersPerQueue set to 0, its default, mean?",
        "How many workers does a queue start with?",
    )
    says = "If MaxWorkersPerQueue is 0, then the queue never stops taking new workers."
    assert _settles_for(wanted, says, says, section="MaxWorkersPerQueue Directive")
    other = "If MaxWorkersPerQueue is reached, then the queue stops taking new workers."
    assert not _settles_for(wanted, other, other, section="MaxWorkersPerQueue Directive")
    aside = "If MaxWorkersPerQueue is 10, the queue takes 10 workers at most; 0 is also valid."
    assert not _settles_for(wanted, aside, aside, section="MaxWorkersPerQueue Directive")


def test_a_default_is_said_by_what_a_thing_starts_with() -> None:
    """'What is the default level of the root queue?': "Note that the root queue is created with
    level WARNING." says it; a sentence on what a queue is set to later does not."""
    wanted = _wanted_of(
        "How does the client decide which messages to keep?",
        "What is the default level of the root queue?",
        "What does a queue do with a message below its level?",
    )
    says = "Note that the root queue is created with level WARNING."
    assert _settles_for(wanted, says, says, section="Queue levels")
    later = "Note that the root queue is later given level WARNING by the server."
    assert not _settles_for(wanted, later, later, section="Queue levels")


def test_a_heading_says_the_words_of_the_name_it_defines() -> None:
    """Under "LimitUploadBody Directive", "that limit" is the upload body's: the heading says
    "body" as `keywords` says the parts of `upload_body`; under another heading it does not."""
    wanted = _wanted_of(
        "How does the queue server limit upload bodies?",
        "What does the queue server do when a client's upload body exceeds the LimitUploadBody "
        "limit?",
        "What is the default value of LimitUploadBody?",
    )
    says = "If the client upload exceeds that limit, the server will return an error response."
    title = "Queue server core features"
    for heading, settles in [
        ("LimitUploadBody Directive", True),
        ("Upload limits", False),
        ("LimitUpload Directive", False),
    ]:
        page = f"{heading}\n\n{says}"
        assert _settles_for(wanted, says, page, section=heading, title=title) is settles, heading
    # only a name the question writes: a heading naming something else (a product, PowerShell's
    # "shell") says none of its words
    unnamed = _wanted_of(
        "How does the queue server limit upload bodies?",
        "What does the queue server do when a client's upload body exceeds the limit?",
        "What is the default value of LimitUploadBody?",
    )
    page = f"LimitUploadBody Directive\n\n{says}"
    assert not _settles_for(unnamed, says, page, section="LimitUploadBody Directive", title=title)
    assert name_parts("<LimitUploadBody> Directive", "the LimitUploadBody limit") == keywords(
        "limit upload body"
    )
    assert name_parts("PowerShell Integration", "Which shell starts by default?") == set()
