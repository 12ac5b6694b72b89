"""Every event kind is explained in every language, and explanations read well."""

from __future__ import annotations

import re

import pytest

from gradtutor.errors import DataFileError
from gradtutor.explanations import EXPLANATION_KEYS, LANGUAGES, book_for, explanation_key, load_book
from gradtutor.model import ERROR_CAUSES, EVENT_KINDS, WARNING_CAUSES, Event

# One event of each kind and cause, with the fields the engine gives it.
SAMPLES = [
    Event.make("name-bound", 3, name="x", node="t1"),
    Event.make("name-rebound", 4, name="x", old_in_graph=False, old_node=None, node="t2"),
    Event.make("name-rebound", 4, name="x", old_in_graph=True, old_node="t1", node="n2"),
    Event.make("name-rebound", 4, name="h", old_in_graph=True, old_node="n1", node="n2"),
    Event.make("name-rebound", 4, name="model", old_in_graph=True, module=True),
    Event.make("name-rebound", 4, name="model", old_in_graph=False, module=True),
    Event.make("backward", 5, api="backward", root="loss", retain_graph=False, create_graph=False, freed=2),
    Event.make("backward", 5, api="backward", root=None, retain_graph=True, create_graph=False, freed=0),
    Event.make("backward", 5, api="backward", root="y", retain_graph=False, create_graph=False, freed=0),
    Event.make("backward", 5, api="autograd.grad", root="y", retain_graph=False, create_graph=False, freed=1,
               result="g"),
    Event.make("backward", 5, api="autograd.grad", root="y", retain_graph=True, create_graph=False, freed=0,
               result=None),
    Event.make("backward", 5, api="autograd.grad", root="y", retain_graph=True, create_graph=True, freed=0,
               result="dydx"),
    Event.make("grad-accumulated", 6, name="w"),
    Event.make("grad-accumulated", 6, name="model", parameters=4),
    Event.make("grad-accumulated", 6, leaves=2),
    *(Event.make("grad-before-error", 6, name="w", added=added) for added in (False, True)),
    *(Event.make("grad-before-error", 6, name="model", parameters=2, added=added) for added in (False, True)),
    Event.make("detached", 7, name="d", how="detach", source="y"),
    Event.make("detached", 7, name="d", how="no_grad", source=None),
    Event.make("detached", 7, name="d", how="data", source="y"),
    Event.make("detached", 7, how="detach", source="fake"),
    Event.make("retain-grad", 8, name="h"),
    Event.make("requires-grad", 8, name="w", on=True),
    Event.make("requires-grad", 8, name="w", on=False),
    Event.make("requires-grad", 8, name="model", on=True, parameters=4),
    Event.make("requires-grad", 8, name="model", on=False, parameters=4),
    Event.make("inplace", 9, name=None, op="add_", version=1),
    Event.make("inplace", 9, name="model", op="add_", how="optimizer", via="SGD.step", parameters=4),
    Event.make("inplace", 9, name="model", op="add_", how="", parameters=4),
    Event.make("inplace", 9, name="bn", op="add_", how="buffers", via="BatchNorm1d.forward", parameters=3),
    Event.make("inplace", 9, name="ema", op="lerp_", how="", parameters=1, through="ema_v"),
    Event.make("inplace", 9, name="ema", op="copy_", how="buffers-other", parameters=1, through="ema_v"),
    Event.make("inplace", 9, name="ema", op="zero_", how="buffers-other", parameters=2),
    Event.make("inplace", 9, name="c", op="add_", version=1, through="d"),
    Event.make("inplace", 9, name="w", op="add_", how="data"),
    Event.make("inplace", 9, name="c", op="add_", how="data", through="d"),
    Event.make("inplace", 9, name="model", op="add_", how="data", parameters=4),
    *(Event.make("grad-reset", 9, name="w", how=how, op="zero_") for how in ("zeroed", "none", "set", "changed")),
    *(Event.make("grad-reset", 9, name="model", how=how, op="mul_", parameters=4)
      for how in ("zeroed", "none", "set", "changed")),
    Event.make("graph-growth", 10, name="total", nodes=12),
    Event.make("function-unfollowed", 10, function="RNN.forward", calls=8, repeated=5),
    Event.make("warning", 11, cause="non-leaf-grad", name="y"),
    Event.make("error", 13, cause="second-backward", exception="RuntimeError", message="...", node="n3",
               node_op="MmBackward0", node_line=7, node_file="f.py", node_source="z = x @ w",
               freed_by_line=10, freed_by_file="f.py", freed_by_source="loss.backward()"),
    Event.make("error", 13, cause="second-backward", exception="RuntimeError", message="..."),
    Event.make("error", 13, cause="second-backward", exception="RuntimeError", message="...", node="n3",
               node_op="MulBackward0", node_line=12, node_file="f.py", node_source="h = h * w",
               freed_by_line=13, freed_by_file="f.py", freed_by_source="h.sum().backward()", again=True),
    Event.make("error", 14, cause="freed-saved-read", exception="RuntimeError", message="..."),
    Event.make("error", 6, cause="inplace-modified", exception="RuntimeError", message="...", node="n2",
               node_op="ExpBackward0", node_line=3, node_file="f.py", node_source="a = x.exp()",
               saved_output_of="Exp", saved_output_nr=0, modified_at_line=5,
               modified_at_file="f.py", modified_at_source="a.add_(1)", modified_op="add_"),
    Event.make("error", 6, cause="inplace-modified", exception="RuntimeError", message="...", node="n2",
               node_op="SigmoidBackward0", node_line=5, node_file="f.py", node_source="y = x.sigmoid().relu_()",
               saved_output_of="Sigmoid", saved_output_nr=0, modified_at_line=5, modified_at_file="f.py",
               modified_at_source="y = x.sigmoid().relu_()", modified_op="relu_", changed_in="same-statement"),
    Event.make("error", 6, cause="inplace-modified", exception="RuntimeError", message="...", node="n2",
               node_op="SigmoidBackward0", node_line=6, node_file="f.py", node_source="model(x).sum().backward()",
               modified_at_line=6, modified_at_file="f.py", modified_at_source="model(x).sum().backward()",
               modified_op="relu(inplace=True)", modified_by="ReLU(inplace=True)", changed_in="backward-statement"),
    Event.make("error", 7, cause="inplace-modified", exception="RuntimeError", message="...", node="n2",
               node_op="SigmoidBackward0", node_line=5, node_file="f.py", node_source="h = h.relu_() if i else h.sigmoid()",
               saved_output_of="Sigmoid", saved_output_nr=0, modified_at_line=5, modified_at_file="f.py",
               modified_at_source="h = h.relu_() if i else h.sigmoid()", modified_op="relu_", changed_in="later-run"),
    Event.make("error", 3, cause="leaf-inplace", exception="RuntimeError", message="...", name="x"),
    Event.make("error", 3, cause="leaf-inplace", exception="RuntimeError", message="...", name="c", view=True),
    Event.make("error", 3, cause="no-grad-fn", exception="RuntimeError", message="..."),
    Event.make("error", 3, cause="non-scalar-backward", exception="RuntimeError", message="..."),
    Event.make("error", 3, cause="out-requires-grad", exception="RuntimeError", message="..."),
    Event.make("error", 2, cause="other", exception="ZeroDivisionError", message="division by zero"),
]


SECOND_BACKWARD = next(e for e in SAMPLES if e.get("cause") == "second-backward" and e.get("node_line"))
BACKWARD = next(e for e in SAMPLES if e.kind == "backward")
DETACHED = next(e for e in SAMPLES if e.kind == "detached")


def test_samples_cover_every_kind_and_cause():
    keys = {explanation_key(e) for e in SAMPLES}
    assert keys == set(EXPLANATION_KEYS)
    assert {e.kind for e in SAMPLES} == set(EVENT_KINDS)
    assert {f"error/{c}" for c in ERROR_CAUSES} | {f"warning/{c}" for c in WARNING_CAUSES} <= keys


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_event_is_explained_without_placeholders(language):
    book = book_for(language)
    assert book.language == language
    for event in SAMPLES:
        explanation = book.explain(event, file="f.py")
        for part in (explanation.title, explanation.text, explanation.more):
            # No unfilled placeholder, and no "?" standing for an unknown field.
            assert part and not re.search(r"[{}]|(^|\s)\?(\s|$)", part), (language, event.kind, part)


@pytest.mark.parametrize("language, line_word", [("en", "line 7"), ("zh", "第 7 行")])
def test_second_backward_names_the_node_line_and_the_freeing_backward(language, line_word):
    text = book_for(language).explain(SECOND_BACKWARD, file="f.py").text
    assert line_word in text and "z = x @ w" in text and "loss.backward()" in text
    assert "retain_graph=True" in text


def test_places_are_worded_by_the_front_end():
    locate = lambda file, line: f"In [{line}]"
    text = book_for("en").explain(SECOND_BACKWARD, file="f.py", locate=locate).text
    assert text.startswith("In [13] ran backward") and "created at In [7]" in text


INPLACE_MODIFIED = [e for e in SAMPLES if e.get("cause") == "inplace-modified"]


@pytest.mark.parametrize("language, line_word", [("en", "line {}"), ("zh", "第 {} 行")])
def test_a_changed_saved_tensor_is_told_with_each_place_once(language, line_word):
    """Which node saved what, what changed it, where: a statement that made
    the node and changed what it saved (and ran the backward) is one place,
    not two or three that happen to have the same number; a loop's statement
    that changed it on a later run is that statement again, later."""
    apart, one_statement, backward_statement, later_run = (
        book_for(language).explain(e, file="f.py").text for e in INPLACE_MODIFIED
    )
    words = {"en": ("the output of Exp", "the output of Sigmoid", "a tensor"),
             "zh": ("`Exp` 的输出", "`Sigmoid` 的输出", "一个张量")}[language]
    assert [text.lower().count(line_word.format(n)) for text, n in
            ((apart, 6), (apart, 3), (apart, 5), (one_statement, 5), (backward_statement, 6), (later_run, 5))
    ] == [1] * 6
    assert "`ExpBackward0`" in apart and words[0] in apart and "a.add_(1)" in apart
    assert "`SigmoidBackward0`" in one_statement and words[1] in one_statement and "`relu_`" in one_statement
    assert "`SigmoidBackward0`" in backward_statement and words[2] in backward_statement
    assert "`ReLU(inplace=True)`" in backward_statement and "relu(inplace=True)" not in backward_statement
    assert words[1] in later_run and "`relu_`" in later_run


def test_explanations_correct_the_seeds():
    backward = book_for("en").explain(BACKWARD).more
    assert "does NOT keep the graph's buffers after backward" in backward
    detached = book_for("en").explain(DETACHED).more
    assert "Recomputing an expression (y = x ** 2 again) does not detach" in detached


@pytest.mark.parametrize(
    "text, message",
    [
        ("language: fr\nexplanations: {}\n", ":1: field 'language': expected one of en, zh"),
        ("language: en\nexplanations:\n  nope:\n    title: a\n", ":3: unknown explanation key 'nope'"),
        ("language: en\nexplanations:\n  name-bound:\n    title: a\n    text: b\n", ":3: explanation 'name-bound': missing text field 'more'"),
        ("language: en\nexplanations: !!python/object:os.system {}\n", "YAML error"),
        ("language: en\nexplanations:\n  name-bound: [\n", "YAML error"),
    ],
)
def test_a_broken_explanations_file_gets_one_clear_message(tmp_path, text, message):
    path = tmp_path / "broken.yaml"
    path.write_text(text)
    with pytest.raises(DataFileError) as info:
        load_book(str(path))
    assert str(info.value).startswith(str(path)) and message in str(info.value)


@pytest.mark.parametrize("freed, title, text", [
    (1, "backward through loss: 1 node freed its saved tensors", "(1 node)"),
    (2, "backward through loss: 2 nodes freed their saved tensors", "(2 nodes)"),
])
def test_a_count_reads_as_english_does(freed, title, text):
    """No "2 node(s)": a template counts with {n:node|nodes}."""
    explanation = book_for("en").explain(Event.make("backward", 7, api="backward", root="loss", freed=freed,
                                                    retain_graph=False, create_graph=False))
    assert explanation.title == title and text in explanation.text
    assert "(s)" not in explanation.title + explanation.text + explanation.more
    zh = book_for("zh").explain(Event.make("backward", 7, api="backward", root="loss", freed=freed,
                                           retain_graph=False, create_graph=False))
    assert f"{freed} 个节点" in zh.title


def test_no_template_counts_with_a_parenthesised_plural():
    import glob
    import os

    from gradtutor.explanations import lessons_dir
    from gradtutor.messages import MESSAGES

    texts = [open(p, encoding="utf-8").read() for p in glob.glob(os.path.join(lessons_dir(), "**", "*.yaml"), recursive=True)]
    texts += [m for table in MESSAGES.values() for m in table.values()]
    assert not [t for t in texts if re.search(r"\w\(s\)", t)]


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_statement_of_several_lines_is_quoted_on_one_line(language):
    event = Event.make("error", 6, cause="second-backward", exception="RuntimeError", message="…", again=False,
                       node_line=3, node_source="z = (a * 2 +\n     a.exp()).sum()",
                       freed_by_line=5, freed_by_source="z.backward()")
    text = book_for(language).explain(event).text
    assert "`z = (a * 2 + a.exp()).sum()`" in text and "\n" not in text
    long = event.data | {"node_source": "model = nn.Sequential(\n" + "    nn.Linear(10, 10),\n" * 8 + ")"}
    text = book_for(language).explain(Event.make("error", 6, **long)).text
    quoted = re.search(r"`(model = [^`]*)`", text).group(1)
    assert quoted.startswith("model = nn.Sequential( nn.Linear(10, 10), nn.Linear") and quoted.endswith("…")
    assert len(quoted) == 60


def test_a_backward_that_freed_nothing_does_not_say_the_graph_cannot_run_again():
    # ("autograd then freed the tensors the graph had saved for this (0
    # nodes), so the same graph cannot be run backward again": it can.)
    event = Event.make("backward", 5, api="backward", root="y", retain_graph=False, create_graph=False, freed=0)
    explained = book_for("en").explain(event, file="f.py")
    assert explained.title == "backward through y: no node had saved tensors to free"
    assert "a second backward through this graph works" in explained.text and "cannot" not in explained.text
    freed = Event.make("backward", 5, api="backward", root="y", retain_graph=False, create_graph=False, freed=2)
    assert "cannot be run backward again" in book_for("en").explain(freed, file="f.py").text
