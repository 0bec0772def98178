"""The order in which a conversation's messages are rendered: user runs merged (V4) and tool results reordered
the way each template version does it (observed on the reference)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

from dscodec.conversation import AssistantMessage, Message, ToolMessage, UserMessage

__all__ = ["Item", "merge_user_runs", "sort_results_by_call_position", "sort_results_by_id_windows"]

# A working item: a message, or (V4) a run of consecutive user messages that forms one part of a user turn.
Item: TypeAlias = "Message | list[UserMessage]"


def merge_user_runs(messages: Sequence[Message]) -> list[Item]:
    """Consecutive user messages as one item (V4), so that a run counts once when results are sorted."""
    items: list[Item] = []
    for message in messages:
        if isinstance(message, UserMessage):
            last = items[-1] if items else None
            if isinstance(last, list):
                last.append(message)
            else:
                items.append([message])
        else:
            items.append(message)
    return items


def sort_results_by_id_windows(items: list[Item]) -> list[Item]:
    """V4 result order (observed): after each assistant turn with ``n`` tool calls, the next ``n`` items.

    The positions and call counts of the assistant turns are taken first; then, for each in order, the ``n``
    items after that position (on the list as already reordered; skipped when fewer than ``n`` remain) are
    stably sorted: tool results first, by tool-call id, then everything else in its order. With the calls
    also written in id order (``sorts_tool_calls_by_id``) the results of a complete round follow the calls.
    """
    windows = [
        (index, len(item.tool_calls))
        for index, item in enumerate(items)
        if isinstance(item, AssistantMessage) and item.tool_calls
    ]
    for index, count in windows:
        start, stop = index + 1, index + 1 + count
        if stop <= len(items):
            items[start:stop] = sorted(items[start:stop], key=_id_window_key)
    return items


def _id_window_key(item: Item) -> tuple[int, str]:
    if isinstance(item, ToolMessage):
        return (0, item.tool_call_id or "")  # an output naming no call sorts as an empty id
    return (1, "")


def sort_results_by_call_position(items: list[Item]) -> list[Item]:
    """V4.1 result order (observed): inside each run of user and tool items (one user turn), the tool results
    are stably sorted by the position of their id among the latest assistant turn's tool calls (an empty id is an
    id like any other, an unknown one counts as position 0, a result without id comes after them all); the other
    items keep their places.
    """
    positions: dict[str, int] = {}
    index = 0
    while index < len(items):
        item = items[index]
        if isinstance(item, AssistantMessage):
            if item.tool_calls:
                positions = {}
                for position, call in enumerate(item.tool_calls):
                    positions.setdefault(call.id, position)
            index += 1
            continue
        if not _in_user_turn(item):
            index += 1
            continue
        stop = index
        while stop < len(items) and _in_user_turn(items[stop]):
            stop += 1
        slots = [i for i in range(index, stop) if isinstance(items[i], ToolMessage)]
        if len(slots) > 1:
            table = positions
            results = sorted(
                (items[i] for i in slots),
                key=lambda m: (
                    (table.get(m.tool_call_id, 0) if m.tool_call_id is not None else len(table))
                    if isinstance(m, ToolMessage)
                    else 0
                ),
            )
            for slot, result in zip(slots, results):
                items[slot] = result
        index = stop
    return items


def _in_user_turn(item: Item) -> bool:
    return isinstance(item, (UserMessage, ToolMessage, list))
