"""The bounded YAML loader behind :func:`citeaudit.core.limits.load_yaml`: PyYAML's safe loader with nesting,
aliases, expanded size, duplicate keys and numbers bounded (the limits are those of :mod:`citeaudit.core.limits`)."""

from __future__ import annotations

import math
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from citeaudit.core.errors import InvalidValue, MalformedInput
from citeaudit.core.limits import MAX_DEPTH, MAX_INT, MAX_YAML_ALIASES, MAX_YAML_NODES, MIN_INT, shown

__all__ = ["load_bounded_yaml"]


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader with nesting, aliases, expanded size, duplicate keys and numbers bounded."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._aliases = 0
        self._open: set[str] = set()
        """Anchors of the nodes being composed: an alias to one of them would make the node contain itself."""

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_YAML_ALIASES:
                raise _YamlRefused(f"more than {MAX_YAML_ALIASES} aliases", event.start_mark)
            if event.anchor in self._open:
                # ``&a [*a]`` stands for an endless document: expanding or walking it would never end.
                raise _YamlRefused(
                    f"alias *{event.anchor} refers to a node that contains it (a recursive alias)", event.start_mark
                )
            return super().compose_node(parent, index)
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise _YamlRefused(f"nested deeper than {MAX_DEPTH} levels", event.start_mark)
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            self._open.add(anchor)
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1
            if anchor is not None:
                self._open.discard(anchor)

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            # Merge keys (``<<: *base``) may be overridden by the mapping's own keys: that is what they are for.
            if isinstance(key_node, ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                key = self.construct_object(key_node, deep=deep)
                try:
                    duplicate = key in seen
                except TypeError:
                    continue
                if duplicate:
                    raise _YamlRefused(f"key {shown(key, 40)} is given twice in one mapping", key_node.start_mark)
                seen.add(key)
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node: ScalarNode) -> int:
        try:
            value: int = super().construct_yaml_int(node)
        except ValueError:  # int() refuses past 4 300 digits
            raise _YamlRefused(
                f"integer {shown(node.value, 40)} ({len(node.value)} characters) is outside the 64-bit range",
                node.start_mark,
            ) from None
        if not MIN_INT <= value <= MAX_INT:
            raise _YamlRefused(
                f"integer {shown(value, 40)} is outside the 64-bit range ({MIN_INT}..{MAX_INT})", node.start_mark
            )
        return value

    def construct_yaml_float(self, node: ScalarNode) -> float:
        value: float = super().construct_yaml_float(node)
        if not math.isfinite(value):
            raise _YamlRefused(f"{node.value!r} is not a finite number", node.start_mark)
        return value

    def construct_yaml_str(self, node: ScalarNode) -> str:
        value: str = super().construct_yaml_str(node)
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise _YamlRefused(
                f"lone surrogate {value[exc.start]!r} in a string: not a character UTF-8 can store", node.start_mark
            ) from None
        return value


def _refuse_binary(loader: _BoundedLoader, node: Node) -> None:
    # Bytes are no value of any citeaudit file: taken, they would become text nobody wrote (a question id).
    raise _YamlRefused("!!binary is not a value citeaudit reads (write the text itself)", node.start_mark)


_BoundedLoader.add_constructor("tag:yaml.org,2002:binary", _refuse_binary)
_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _BoundedLoader.construct_yaml_int)
_BoundedLoader.add_constructor("tag:yaml.org,2002:float", _BoundedLoader.construct_yaml_float)
_BoundedLoader.add_constructor("tag:yaml.org,2002:str", _BoundedLoader.construct_yaml_str)


class _YamlRefused(Exception):
    def __init__(self, message: str, mark: Any) -> None:
        super().__init__(message)
        self.message = message
        self.mark = mark


def _expanded_size(root: Node) -> int:
    """How many nodes the document stands for with every alias expanded (shared nodes counted once per use)."""
    sizes: dict[int, int] = {}
    # Children before parents, without recursion: an explicit stack of (node, children counted?) entries.
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, ready = stack.pop()
        if id(node) in sizes:
            continue
        children: list[Node] = []
        if isinstance(node, SequenceNode):
            children = list(node.value)
        elif isinstance(node, MappingNode):
            children = [part for pair in node.value for part in pair]
        if ready or not children:
            sizes[id(node)] = min(1 + sum(sizes[id(child)] for child in children), MAX_YAML_NODES + 1)
        else:
            stack.append((node, True))
            stack.extend((child, False) for child in children if id(child) not in sizes)
    return sizes[id(root)]


def load_bounded_yaml(text: str, source: str) -> Any:
    """Parse one YAML document (JSON is YAML too) within the limits; errors name line and column."""
    try:
        # The reader checks every character when made: a control character (NUL, ESC) is refused here.
        loader = _BoundedLoader(text)
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        character = exc.character if isinstance(exc.character, str) else chr(exc.character)
        raise MalformedInput(
            source, f"line {line} column {column}", f"character {character!r} is not allowed in YAML"
        ) from None
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        size = _expanded_size(root)
        if size > MAX_YAML_NODES:
            raise _YamlRefused(f"aliases expand the document to more than {MAX_YAML_NODES} nodes", root.start_mark)
        return loader.construct_document(root)
    except _YamlRefused as exc:
        kind = InvalidValue if "given twice" in exc.message or "range" in exc.message else MalformedInput
        raise kind(source, _mark(exc.mark), exc.message) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise MalformedInput(source, _mark(mark), f"invalid YAML: {getattr(exc, 'problem', exc)}") from None
    except RecursionError:  # the depth bound above makes this unreachable; kept as a last guard
        raise MalformedInput(source, "", f"nested deeper than {MAX_DEPTH} levels") from None
    finally:
        loader.dispose()


def _mark(mark: Any) -> str:
    return "" if mark is None else f"line {mark.line + 1} column {mark.column + 1}"
