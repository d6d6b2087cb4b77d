from collections.abc import AsyncIterator

from hypothesis import given
from hypothesis import strategies as st

from agent_core.model._sse import SSEDecoder, aiter_sse_data


def decode(*chunks: bytes) -> list[str]:
    decoder = SSEDecoder()
    events = [event for chunk in chunks for event in decoder.feed(chunk)]
    return events + decoder.close()


def test_data_lines_make_events() -> None:
    assert decode(b'data: {"a": 1}\n\ndata: [DONE]\n\n') == ['{"a": 1}', "[DONE]"]


def test_multi_line_data_joins_with_lf() -> None:
    assert decode(b"data: one\ndata: two\ndata:three\n\n") == ["one\ntwo\nthree"]


def test_comments_and_other_fields_are_ignored() -> None:
    stream = b": keep-alive\n\nevent: message\nid: 7\nretry: 10\ndata: x\n: note\n\n"
    assert decode(stream) == ["x"]


def test_only_one_leading_space_is_stripped() -> None:
    assert decode(b"data:  two spaces\n\ndata\n\n") == [" two spaces", ""]


def test_crlf_and_cr_line_endings() -> None:
    assert decode(b"data: a\r\n\r\ndata: b\r\rdata: c\n\n") == ["a", "b", "c"]


def test_crlf_split_between_chunks_is_one_line_end() -> None:
    assert decode(b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n") == ["a\nb"]


def test_multibyte_character_split_between_chunks() -> None:
    raw = "data: héllo ✓\n\n".encode()
    cut = raw.index("✓".encode()) + 1
    assert decode(raw[:cut], raw[cut:]) == ["héllo ✓"]


def test_unfinished_event_at_end_is_dropped() -> None:
    assert decode(b"data: complete\n\ndata: cut off") == ["complete"]
    assert decode(b"data: no blank line\n") == []


def test_leading_bom_is_ignored() -> None:
    assert decode(b"\xef\xbb\xbfdata: x\n\n") == ["x"]


@given(st.lists(st.integers(min_value=0, max_value=80), max_size=12))
def test_any_chunking_gives_the_same_events(cuts: list[int]) -> None:
    raw = 'data: é\r\ndata: ✓\r\n\r\n: c\n\ndata: {"k": "v"}\r\r'.encode()
    points = sorted({min(c, len(raw)) for c in cuts})
    chunks = [raw[a:b] for a, b in zip([0, *points], [*points, len(raw)], strict=True)]
    assert decode(*chunks) == ["é\n✓", '{"k": "v"}']


async def test_async_iteration_over_byte_chunks() -> None:
    async def body() -> AsyncIterator[bytes]:
        for piece in (b"da", b"ta: 1\n", b"\nda", b"ta: 2\n\n"):
            yield piece

    assert [event async for event in aiter_sse_data(body())] == ["1", "2"]
