"""A further source for a settled question (`baselines.excerpts.corroborates`): another page
that says again what the settled answer says, in its own words, about what the question names;
not a passing mention, a list of names, the same text in another rendering, nor the corpus's
own vocabulary (`baselines.offline._common_words`)."""

from __future__ import annotations

from baselines.excerpts import Passage, _excerpts, answers, copies, corroborates
from baselines.offline import Seen, _common_words
from tests.unit.test_strongest_test import _wanted_of
from workflows.substance import keywords

WANTED = _wanted_of(
    "How does the heap module implement priority queues?",
    "What does heap.nlargest return?",
    "Which element does heap.heappop return?",
)
# what the settled answer ("Return a list with the n largest elements from the dataset
# defined by iterable.") says that neither the question nor the brief asks
ANSWER = keywords("list largest elements dataset defined iterable")
CITED = ["Return a list with the n largest elements from the dataset defined by iterable."]


def _says(text: str, answer: set[str] = ANSWER, cited: list[str] = CITED) -> bool:
    passage = Passage("S2", text, "New modules", "What's new in 2.4")
    return any(
        corroborates(excerpt, WANTED, answer, cited)
        for excerpt in _excerpts("S2.P1", passage, WANTED)
    )


def test_a_page_saying_the_answer_again_in_its_own_words_corroborates_it() -> None:
    again = (
        "In addition, the module has two new functions nlargest() and nsmallest() that use "
        "heaps to find the N largest or smallest values in a dataset without a full sort."
    )
    assert _says(again)
    mention = "The nlargest() function now accepts a key argument, as the largest() builtin does."
    assert not _says(mention), "one word of the answer, not the answer"
    listed = (
        "Tools such as sorted(), min(), max(), nlargest() and merge() find the largest dataset."
    )
    assert not _says(listed), "a list of names is about none of them"


def test_the_same_text_in_another_rendering_is_not_another_source() -> None:
    html = (
        "By default, a rebase will simply drop merge commits from the todo list, and put the "
        "rebased commits into a single, linear branch. With --rebase-merges, it keeps them."
    )
    txt = "By default, a rebase will simply drop merge commits from the `todo` list, and put the"
    assert copies(txt, html) and copies(html, txt), "a rendering's sentence, cut short or not"
    note = (
        "A new hashlib.pbkdf2_hmac() function provides the PKCS#5 password-based key "
        "derivation function 2."
    )
    reference = "The function provides PKCS#5 password-based key derivation function 2."
    assert not copies(note, reference), "a release note restating it in its own sentence"
    again = "nlargest() returns a list with the n largest elements from the dataset it reads."
    assert _says(again, cited=[])
    assert not _says(again, cited=[again]), "a quote already cited is no further source"


def test_a_value_the_settled_answer_states_corroborates_it_when_said_again() -> None:
    wanted = _wanted_of(
        "How do I tune persistent connections in the queue server?",
        "How long does the queue server wait for a next request by default (IdleTimeout)?",
        "What does setting MaxRequests to 0 do?",
    )
    said = "The default IdleTimeout of 5 seconds attempts to minimize this effect."
    other = "The default IdleTimeout was raised in version 2.2, for slow networks."
    for text, expected in ((said, True), (other, False)):
        passage = Passage("S2", text, "Tuning", "Performance tuning")
        found = any(
            corroborates(excerpt, wanted, set(), ["Default: | IdleTimeout 5"], {"5"})
            for excerpt in _excerpts("S2.P1", passage, wanted)
        )
        assert found is expected, text


def test_words_most_passages_read_hold_are_the_corpus_s_not_an_answer_s() -> None:
    seen = Seen()
    texts = [f"Commit {n} records the tree; see the branch notes." for n in range(5)]
    texts += ["A shallow clone fetches one branch.", "The reflog keeps entries for 90 days."]
    for number, text in enumerate(texts, start=1):
        seen.passages[f"S{number}.P1"] = Passage(f"S{number}", text, "")
    common = _common_words(seen)
    assert keywords("commit tree branch") <= common
    assert not keywords("shallow reflog clone") & common


def test_a_sentence_saying_the_answer_is_not_so_or_using_its_value_otherwise_is_no_source() -> None:
    """A review's wrong passes, each refused: a reversal before the answer's words ("no longer
    builds a list") says otherwise, one after them qualifies ("without a full sort", above);
    the value said again needs a word the question asks besides its names; and "how long" is
    answered by a quantity, in `answers` as in the strongest test."""
    contrary = (
        "Since 3.0, nlargest() no longer builds a list: it yields the largest dataset lazily."
    )
    assert not _says(contrary)
    wanted = _wanted_of(
        "How do I tune persistent connections in the queue server?",
        "How long does the queue server wait for a next request by default (IdleTimeout)?",
        "What does setting MaxRequests to 0 do?",
    )
    other = "Setting IdleTimeout below 5 seconds is discouraged on slow networks."
    passage = Passage("S2", other, "Tuning", "Performance tuning")
    assert not any(
        corroborates(excerpt, wanted, set(), ["Default: | IdleTimeout 5"], {"5"})
        for excerpt in _excerpts("S2.P1", passage, wanted)
    )
    vague = (
        "The IdleTimeout directive sets how the queue server waits for a next request on a "
        "persistent connection before it closes it."
    )
    passage = Passage("S3", vague, "IdleTimeout Directive", "core")
    assert not any(answers(e, wanted) for e in _excerpts("S3.P1", passage, wanted))


def test_a_sentence_pointing_back_names_what_the_one_before_it_names() -> None:
    """ "This means ..." is about what the sentence before it names: it says the answer again
    of that name; alone, it names nothing."""
    back = (
        "The module gained heap.nlargest() in this release. This finds the largest elements "
        "of a dataset defined by any iterable."
    )
    assert _says(back)
    assert not _says("This finds the largest elements of a dataset defined by any iterable.")
    named = "The module gained heap.nlargest() in this release. "
    listed = "This, like sorted(), min() and max(), finds the largest elements of a dataset."
    assert not _says(named + listed), "a list of names in the sentence itself"
    led = "In this case sorted() finds the largest elements of a dataset defined by iterable."
    assert not _says(named + led), "led by another name, not pointing back at its opening"
    other = (
        "Unlike heap.nlargest(), sorted() builds a new list. Such lists hold the largest "
        "elements of a dataset defined by any iterable."
    )
    assert not _says(other), "'Such' opens it, but the sentence before is led by another name"


def test_a_comparison_is_said_again_by_a_contrast_not_by_what_both_share() -> None:
    wanted = _wanted_of(
        "How does the queue client remove messages?",
        "What is the difference between queue.purge and queue.drain?",
        "Why?",
    )
    answer = keywords("deletes messages delivers first")
    cited = ["The queue.purge function deletes messages, while queue.drain delivers them first."]

    def says(text: str) -> bool:
        passage = Passage("S2", text, "Removing messages", "Queue guide")
        return any(
            corroborates(excerpt, wanted, answer, cited)
            for excerpt in _excerpts("S2.P1", passage, wanted)
        )

    assert says("Unlike drain(), which delivers messages first, purge() deletes them at once.")
    shared = "Both purge() and drain() act on the messages first, so either may be retried."
    assert not says(shared), "what both share"
    clauses = "After purge(), drain() delivers no messages: each was deleted first."
    assert says(clauses), "two clauses, not a list of the two"


def test_a_further_source_for_a_comparison_sets_one_against_the_other() -> None:
    """As the strongest test asks (`_sets_apart`): a contrast between the two things compared
    says what is asked; one about one of them alone does not."""
    wanted = _wanted_of(
        "How does the queue client remove messages?",
        "What is the difference between queue.purge and queue.drain?",
        "Why?",
    )

    def said(text: str) -> bool:
        passage = Passage("S2", text, "Removing messages", "Queue guide")
        return any(answers(e, wanted) for e in _excerpts("S2.P1", passage, wanted))

    assert said("The queue.purge function deletes messages, while queue.drain delivers them.")
    one = "Otherwise, a queue.drain call delivers the messages queue.purge has not deleted yet."
    assert not said(one)
