"""The syntax tree of a bash command line, and the lexer that scans its words.

A word's `value` is its text after quote removal, with `UNKNOWN` wherever the text is only
known at run time; the scripts of its substitutions are parsed and kept with it.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from agent_core.permission.errors import ShellSyntaxError

UNKNOWN = "\x00"
"""Stands in a word's value for text only known at run time ($VAR, $(...), ...)."""

MAX_DEPTH = 48
_OPERATORS = (
    *("&>>", ";;&", "<<<", "<<-"),
    *("&&", "||", ";;", ";&", "|&", "&>", "<<", ">>", "<&", ">&", "<>", ">|"),
    *(";", "&", "|", "(", ")", "<", ">"),
)
REDIRECT_OPS = frozenset({"<", ">", ">>", ">|", "<>", "<<", "<<-", "<<<", "<&", ">&", "&>", "&>>"})
_WORD_END = frozenset(" \t\n;&|()<>")
_NAME = re.compile(r"[A-Za-z0-9_]+")
_ANSI_ESCAPE = re.compile(
    r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)"
)
_ANSI_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r"}
_ANSI_SIMPLE |= {"t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


@dataclass(slots=True)
class Word:
    """One shell word: its source text and its value after quote removal."""

    raw: str
    value: str
    quoted: bool = False
    # cmdsub backtick procsub param braced (${...}) arith, and arithvar: arithmetic that
    # reads variables
    kinds: set[str] = field(default_factory=set)
    scripts: list[Script] = field(default_factory=list)  # parsed substitutions


@dataclass(slots=True)
class Redirect:
    """A redirection; `body` holds a here-document's text."""

    op: str
    target: Word
    fd: int | None = None
    body: Word | None = None


@dataclass(slots=True)
class Simple:
    """A simple command: assignments, words and redirections, and its source text."""

    assignments: list[Word]
    words: list[Word]
    redirects: list[Redirect]
    source: str = ""


@dataclass(slots=True)
class Compound:
    """subshell, group, if, while, until, for, select, case, arith, cond or function."""

    kind: str
    bodies: list[Script]
    words: list[Word]
    redirects: list[Redirect]
    name: str = ""


@dataclass(slots=True)
class Pipeline:
    """Commands joined by `|`."""

    commands: list[Simple | Compound]
    negated: bool = False


@dataclass(slots=True)
class Script:
    """A command list: each pipeline with the operator after it (`&&` `||` `;` `&` or '')."""

    items: list[tuple[Pipeline, str]]


@dataclass(slots=True)
class Token:
    kind: str  # word, op, io, eof
    text: str
    start: int
    word: Word | None = None


class Acc:
    """Accumulates a word's value and what it contains while it is scanned."""

    __slots__ = ("kinds", "quoted", "scripts", "value")

    def __init__(self) -> None:
        self.value: list[str] = []
        self.quoted = False
        self.kinds: set[str] = set()
        self.scripts: list[Script] = []

    def param(self, name: str) -> None:
        self.kinds.add("param")
        known = {"HOME": "~", "PWD": "."}.get(name) if not self.value else None
        self.value.append(known or UNKNOWN)

    def word(self, raw: str) -> Word:
        return Word(raw, "".join(self.value), self.quoted, self.kinds, self.scripts)


class Lexer(ABC):
    """The on-demand tokenizer under the parser; both share one position in the source.

    Words are scanned completely here, quotes and substitutions included; a substitution's
    contents are handed to the parser (`_subscript`, `parse_program`), which subclasses this.
    """

    def __init__(self, src: str, pos: int = 0, depth: int = 0) -> None:
        if depth > MAX_DEPTH:
            raise ShellSyntaxError("command nests too deeply", pos)
        self.src = src
        self.pos = pos
        self.depth = depth
        self._ahead: Token | None = None
        self._heredocs: list[Redirect] = []

    def _error(self, message: str, pos: int | None = None) -> ShellSyntaxError:
        return ShellSyntaxError(message, self.pos if pos is None else pos)

    # ---- lexer -------------------------------------------------------------------------

    def peek(self) -> Token:
        if self._ahead is None:
            self._ahead = self._lex()
        return self._ahead

    def take(self) -> Token:
        token = self.peek()
        self._ahead = None
        return token

    def _lex(self) -> Token:
        src, n = self.src, len(self.src)
        while self.pos < n:
            c = src[self.pos]
            if c in " \t":
                self.pos += 1
            elif src.startswith("\\\n", self.pos):
                self.pos += 2
            elif c == "#":
                end = src.find("\n", self.pos)
                self.pos = n if end < 0 else end
            else:
                break
        start = self.pos
        if start >= n:
            return Token("eof", "", start)
        c = src[start]
        if c == "\n":
            self.pos += 1
            self._read_heredocs()
            return Token("op", "\n", start)
        if c in ";&|()<>" and not (c in "<>" and src.startswith("(", start + 1)):
            for op in _OPERATORS:
                if src.startswith(op, start):
                    self.pos += len(op)
                    return Token("op", op, start)
        word = self._scan_word()
        follows = src[self.pos : self.pos + 2]
        if word.raw.isdigit() and follows[:1] in ("<", ">") and follows[1:] != "(":
            return Token("io", word.raw, start)
        return Token("word", word.raw, start, word)

    def _scan_word(self) -> Word:
        src, n, start, acc = self.src, len(self.src), self.pos, Acc()
        while self.pos < n:
            c = src[self.pos]
            if c in "<>" and src.startswith("(", self.pos + 1):
                acc.kinds.add("procsub")
                acc.scripts.append(self._subscript(self.pos + 2))
                acc.value.append(UNKNOWN)
            elif c in _WORD_END:
                break
            elif c == "\\":
                if self.pos + 1 >= n:
                    raise self._error("trailing backslash")
                if src[self.pos + 1] != "\n":
                    acc.quoted = True
                    acc.value.append(src[self.pos + 1])
                self.pos += 2
            elif c == "'":
                end = src.find("'", self.pos + 1)
                if end < 0:
                    raise self._error("unterminated single quote")
                acc.quoted = True
                acc.value.append(src[self.pos + 1 : end])
                self.pos = end + 1
            elif c == '"':
                acc.quoted = True
                self.pos += 1
                self._scan_quoted(acc, '"')
            elif c == "$":
                self._scan_dollar(acc, quoted=False)
            elif c == "`":
                self._scan_backtick(acc, in_quotes=False)
            else:
                acc.value.append(c)
                self.pos += 1
        if self.pos == start:
            raise self._error(f"unexpected {src[start]!r}")
        return acc.word(src[start : self.pos])

    def _scan_quoted(self, acc: Acc, end: str | None) -> None:
        """Scan double-quoted text (up to `end`), or a whole here-document body (`end` None)."""
        src, n = self.src, len(self.src)
        escapable = '$`"\\\n' if end else "$`\\\n"
        while self.pos < n:
            c = src[self.pos]
            if c == end:
                self.pos += 1
                return
            if c == "\\" and src[self.pos + 1 : self.pos + 2] in tuple(escapable):
                if src[self.pos + 1] != "\n":
                    acc.value.append(src[self.pos + 1])
                self.pos += 2
            elif c == "$":
                self._scan_dollar(acc, quoted=True)
            elif c == "`":
                self._scan_backtick(acc, in_quotes=end is not None)
            else:
                acc.value.append(c)
                self.pos += 1
        if end is not None:
            raise self._error("unterminated double quote")

    def _scan_dollar(self, acc: Acc, *, quoted: bool) -> None:
        src, pos = self.src, self.pos
        nxt = src[pos + 1 : pos + 2]
        if src.startswith("((", pos + 1):
            self.pos = self._arith_end(pos + 3)
            self._arith(acc, src[pos + 3 : self.pos - 2])
        elif nxt == "(":
            acc.kinds.add("cmdsub")
            acc.scripts.append(self._subscript(pos + 2))
            acc.value.append(UNKNOWN)
        elif nxt == "{":
            self._scan_braced(acc)
        elif nxt == "'" and not quoted:
            self._scan_ansi(acc)
        elif nxt == '"' and not quoted:
            self.pos += 1  # $"..." is a translated string; the caller scans the quotes
        elif nxt.isdigit() or nxt in ("@", "*", "#", "?", "$", "!", "-"):
            self.pos += 2
            acc.param(nxt)
        elif nxt.isalpha() or nxt == "_":
            match = _NAME.match(src, pos + 1)
            name = match.group() if match else nxt
            self.pos = pos + 1 + len(name)
            acc.param(name)
        else:
            acc.value.append("$")
            self.pos += 1

    def _scan_braced(self, acc: Acc) -> None:
        src, start, inner, depth = self.src, self.pos + 2, Acc(), 0
        self.pos = start
        while True:
            if self.pos >= len(src):
                raise self._error("unterminated ${")
            c = src[self.pos]
            if c == "}" and depth == 0:
                break
            if c == "\\":
                self.pos += 2
            elif c == "'":
                end = src.find("'", self.pos + 1)
                if end < 0:
                    raise self._error("unterminated single quote")
                self.pos = end + 1
            elif c == '"':
                self.pos += 1
                self._scan_quoted(inner, '"')
            elif c == "$":
                self._scan_dollar(inner, quoted=True)
            elif c == "`":
                self._scan_backtick(inner, in_quotes=True)
            else:
                depth += {"{": 1, "}": -1}.get(c, 0)
                self.pos += 1
        name = src[start : self.pos]
        self.pos += 1
        acc.kinds.add("braced")
        if "[" in name:
            acc.kinds.add("arithvar")  # an array subscript is evaluated as arithmetic
        acc.kinds |= inner.kinds
        acc.scripts += inner.scripts
        acc.param(name)

    def _scan_ansi(self, acc: Acc) -> None:
        src, i = self.src, self.pos + 2
        while i < len(src) and src[i] != "'":
            i += 2 if src[i] == "\\" else 1
        if i >= len(src):
            raise self._error("unterminated $'")
        acc.quoted = True
        acc.value.append(_ANSI_ESCAPE.sub(_ansi_char, src[self.pos + 2 : i]))
        self.pos = i + 1

    def _scan_backtick(self, acc: Acc, *, in_quotes: bool) -> None:
        src, i, inner = self.src, self.pos + 1, []
        while i < len(src) and src[i] != "`":
            if src[i] == "\\" and i + 1 < len(src):
                keep = src[i + 1] in "$`\\" or (in_quotes and src[i + 1] == '"')
                inner.append(src[i + 1] if keep else src[i : i + 2])
                i += 2
            else:
                inner.append(src[i])
                i += 1
        if i >= len(src):
            raise self._error("unterminated backtick")
        self.pos = i + 1
        acc.kinds.add("backtick")
        acc.value.append(UNKNOWN)
        acc.scripts.append(type(self)("".join(inner), 0, self.depth + 1).parse_program())

    @abstractmethod
    def parse_program(self) -> Script:
        """Parse the whole source as a script."""

    @abstractmethod
    def _subscript(self, start: int) -> Script:
        """Parse the script of a substitution starting at `start`, up to its `)`."""

    def _arith_end(self, i: int) -> int:
        """Index just past the `))` closing an arithmetic expression whose text starts at i."""
        depth = 0
        while i < len(self.src):
            c = self.src[i]
            if c == "(":
                depth += 1
            elif c == ")":
                if depth == 0:
                    if self.src.startswith(")", i + 1):
                        return i + 2
                    raise self._error("expected '))'", i)
                depth -= 1
            i += 1
        raise self._error("unterminated arithmetic expression")

    @staticmethod
    def _arith(acc: Acc, text: str) -> None:
        acc.kinds.add("arith")
        if re.search(r"[A-Za-z_]", text):
            acc.kinds.add("arithvar")
        if "$(" in text or "`" in text:
            acc.kinds.add("cmdsub")  # substitutions inside arithmetic are not parsed
        acc.value.append(UNKNOWN)

    def _read_heredocs(self) -> None:
        pending, self._heredocs = self._heredocs, []
        for redirect in pending:
            strip, lines = redirect.op == "<<-", []
            while self.pos < len(self.src):
                end = self.src.find("\n", self.pos)
                end = len(self.src) if end < 0 else end
                line = self.src[self.pos : end]
                self.pos = min(end + 1, len(self.src))
                line = line.lstrip("\t") if strip else line
                if line == redirect.target.value:
                    break
                lines.append(line)
            text = "\n".join(lines)
            if redirect.target.quoted:
                redirect.body = Word(text, text, quoted=True)
            else:
                acc = Acc()
                type(self)(text, 0, self.depth + 1)._scan_quoted(acc, None)
                redirect.body = acc.word(text)

    # ---- grammar -----------------------------------------------------------------------


def _ansi_char(match: re.Match[str]) -> str:
    esc = match.group(1)
    if esc[0] in "xuU" and len(esc) > 1:
        return chr(min(int(esc[1:], 16), 0x10FFFF))
    if esc[0] in "01234567":
        return chr(int(esc, 8) & 0xFF)
    if esc[0] == "c" and len(esc) == 2:
        return chr(ord(esc[1]) & 0x1F)
    return _ANSI_SIMPLE.get(esc, "\\" + esc)
