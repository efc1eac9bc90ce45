"""Depending on a set's last dependents orders a resource before the whole set."""

from __future__ import annotations

from core.last_dependents import last_dependents

# a <- b <- c, a <- d, e alone; x outside the set.
GRAPH = {"a": ["x"], "b": ["a"], "c": ["b", "a"], "d": ["a"], "e": [], "x": []}


def reaches(start: list[str], graph: dict[str, list[str]]) -> set[str]:
    seen: set[str] = set()
    todo = list(start)
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(graph[node])
    return seen


def test_only_what_no_other_member_depends_on_is_kept() -> None:
    members = ["a", "b", "c", "d", "e"]
    assert last_dependents(members, GRAPH.__getitem__) == ["c", "d", "e"]
    # Every member is reached from them: deleted after them, created before them.
    assert set(members) <= reaches(last_dependents(members, GRAPH.__getitem__), GRAPH)


def test_dependencies_outside_the_set_and_repeats_do_not_count() -> None:
    assert last_dependents(["a", "a", "e"], GRAPH.__getitem__) == ["a", "e"]
    assert last_dependents(["x"], GRAPH.__getitem__) == ["x"]
    assert last_dependents([], GRAPH.__getitem__) == []


def test_a_member_listed_as_its_own_dependency_is_kept() -> None:
    assert last_dependents(["a"], {"a": ["a"]}.__getitem__) == ["a"]
