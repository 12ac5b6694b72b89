"""The plain data classes behave as the frozen dataclasses they are declared as,
whatever builds their ``__init__``."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from gradtutor.model import Edge, Event, Node, Snapshot, one_step_init


@pytest.mark.parametrize("cls", [Node, Edge, Event, Snapshot])
def test_the_quick_init_takes_the_fields_in_order_with_their_defaults(cls: type) -> None:
    params = list(inspect.signature(cls).parameters.values())
    fields = dataclasses.fields(cls)
    assert [p.name for p in params] == [f.name for f in fields]
    assert [p.default for p in params] == [
        inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default for f in fields
    ]


def test_a_node_is_still_frozen_equal_by_value_and_hashable() -> None:
    node = Node("n1", "op", "MulBackward0", names=("z",), shape=(2, 3))
    same = Node(id="n1", kind="op", label="MulBackward0", names=("z",), shape=(2, 3))
    assert node == same and hash(node) == hash(same)
    assert node != dataclasses.replace(node, names=("y",))
    assert vars(node) == {f.name: getattr(same, f.name) for f in dataclasses.fields(Node)}
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.label = "AddBackward0"  # type: ignore[misc]
    with pytest.raises(TypeError):
        Node("n1", "op")  # type: ignore[call-arg]


def test_a_class_it_cannot_build_for_is_refused() -> None:
    @dataclasses.dataclass(frozen=True)
    class WithFactory:
        items: list[int] = dataclasses.field(default_factory=list)

    with pytest.raises(TypeError, match="WithFactory"):
        one_step_init(WithFactory)
