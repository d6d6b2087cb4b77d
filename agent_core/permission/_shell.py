"""A parser for bash command lines, built for static permission analysis.

It covers what a permission check has to see through: quoting ('…', "…", $'…', backslashes),
lists (`;` `&` newline `&&` `||`), pipelines (`|` `|&`), redirections (with fd numbers,
here-documents and here-strings), subshells, brace groups, if/while/until/for/select/case,
`[[ ]]`, `(( ))`, function definitions, and command, process and backtick substitutions, whose
contents are parsed as nested scripts. Anything else raises `ShellSyntaxError`: the analysis
treats what it cannot parse as unsafe, so the parser fails closed instead of guessing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agent_core.permission.errors import ShellSyntaxError

UNKNOWN = "\x00"
"""Stands in a word's value for text only known at run time ($VAR, $(...), ...)."""

_MAX_DEPTH = 48
_MAX_LENGTH = 100_000
_OPERATORS = (
    *("&>>", ";;&", "<<<", "<<-"),
    *("&&", "||", ";;", ";&", "|&", "&>", "<<", ">>", "<&", ">&", "<>", ">|"),
    *(";", "&", "|", "(", ")", "<", ">"),
)
REDIRECT_OPS = frozenset({"<", ">", ">>", ">|", "<>", "<<", "<<-", "<<<", "<&", ">&", "&>", "&>>"})
_RESERVED = frozenset(
    {"if", "then", "elif", "else", "fi", "do", "done", "case", "esac", "while", "until", "for"}
    | {"select", "in", "function", "{", "}", "!", "[[", "]]", "time"}
)
_LIST_ENDS = frozenset({")", ";;", ";&", ";;&"})
_WORD_END = frozenset(" \t\n;&|()<>")
_NAME = re.compile(r"[A-Za-z0-9_]+")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")
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
    kinds: set[str] = field(default_factory=set)  # cmdsub backtick procsub param arith
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
    """A simple command: assignments, words and redirections."""

    assignments: list[Word]
    words: list[Word]
    redirects: list[Redirect]


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
class _Token:
    kind: str  # word, op, io, eof
    text: str
    start: int
    word: Word | None = None


class _Acc:
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


def parse(source: str) -> Script:
    """Parse a command line into a `Script`.

    Raises:
        ShellSyntaxError: The command is malformed, too long or too deeply nested, or uses
            syntax this parser does not support.
    """
    if len(source) > _MAX_LENGTH:
        raise ShellSyntaxError("command too long to analyze", _MAX_LENGTH)
    return _Parser(source).parse_program()


class _Parser:
    """Recursive descent over an on-demand lexer sharing one position in the source."""

    def __init__(self, src: str, pos: int = 0, depth: int = 0) -> None:
        if depth > _MAX_DEPTH:
            raise ShellSyntaxError("command nests too deeply", pos)
        self.src = src
        self.pos = pos
        self.depth = depth
        self._ahead: _Token | None = None
        self._heredocs: list[Redirect] = []

    def _error(self, message: str, pos: int | None = None) -> ShellSyntaxError:
        return ShellSyntaxError(message, self.pos if pos is None else pos)

    # ---- lexer -------------------------------------------------------------------------

    def peek(self) -> _Token:
        if self._ahead is None:
            self._ahead = self._lex()
        return self._ahead

    def take(self) -> _Token:
        token = self.peek()
        self._ahead = None
        return token

    def _lex(self) -> _Token:
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
            return _Token("eof", "", start)
        c = src[start]
        if c == "\n":
            self.pos += 1
            self._read_heredocs()
            return _Token("op", "\n", start)
        if c in ";&|()<>" and not (c in "<>" and src.startswith("(", start + 1)):
            for op in _OPERATORS:
                if src.startswith(op, start):
                    self.pos += len(op)
                    return _Token("op", op, start)
        word = self._scan_word()
        if word.raw.isdigit() and src[self.pos : self.pos + 1] in ("<", ">"):
            if not src.startswith("(", self.pos + 1):
                return _Token("io", word.raw, start)
        return _Token("word", word.raw, start, word)

    def _scan_word(self) -> Word:
        src, n, start, acc = self.src, len(self.src), self.pos, _Acc()
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

    def _scan_quoted(self, acc: _Acc, end: str | None) -> None:
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

    def _scan_dollar(self, acc: _Acc, *, quoted: bool) -> None:
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

    def _scan_braced(self, acc: _Acc) -> None:
        src, start, inner, depth = self.src, self.pos + 2, _Acc(), 0
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
        acc.kinds |= inner.kinds
        acc.scripts += inner.scripts
        acc.param(name)

    def _scan_ansi(self, acc: _Acc) -> None:
        src, i = self.src, self.pos + 2
        while i < len(src) and src[i] != "'":
            i += 2 if src[i] == "\\" else 1
        if i >= len(src):
            raise self._error("unterminated $'")
        acc.quoted = True
        acc.value.append(_ANSI_ESCAPE.sub(_ansi_char, src[self.pos + 2 : i]))
        self.pos = i + 1

    def _scan_backtick(self, acc: _Acc, *, in_quotes: bool) -> None:
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
        acc.scripts.append(_Parser("".join(inner), 0, self.depth + 1).parse_program())

    def _subscript(self, start: int) -> Script:
        sub = _Parser(self.src, start, self.depth + 1)
        script = sub.parse_list(frozenset(), allow_empty=True)
        token = sub.take()
        if token.text != ")":
            raise sub._error("expected ')' to close a substitution", token.start)
        self.pos = sub.pos
        return script

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
    def _arith(acc: _Acc, text: str) -> None:
        acc.kinds.add("arith")
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
                acc = _Acc()
                _Parser(text, 0, self.depth + 1)._scan_quoted(acc, None)
                redirect.body = acc.word(text)

    # ---- grammar -----------------------------------------------------------------------

    def _reserved(self, token: _Token, *words: str) -> bool:
        if token.kind != "word" or token.word is None or token.word.quoted or token.word.kinds:
            return False
        return token.text in words if words else token.text in _RESERVED

    def _expect(self, word: str) -> None:
        token = self.take()
        if not self._reserved(token, word) and not (token.kind == "op" and token.text == word):
            raise self._error(f"expected {word!r}, found {token.text or 'end of input'!r}")

    def _skip_newlines(self) -> None:
        while self.peek().kind == "op" and self.peek().text == "\n":
            self.take()

    def parse_program(self) -> Script:
        script = self.parse_list(frozenset(), allow_empty=True)
        token = self.peek()
        if token.kind != "eof":
            raise self._error(f"unexpected {token.text!r}", token.start)
        return script

    def parse_list(self, stops: frozenset[str], *, allow_empty: bool = False) -> Script:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise self._error("command nests too deeply")
        items: list[tuple[Pipeline, str]] = []
        self._skip_newlines()
        while not self._at_list_end(stops):
            pipeline = self._parse_pipeline()
            token = self.peek()
            if token.kind == "op" and token.text in ("&&", "||"):
                self.take()
                self._skip_newlines()
                if self._at_list_end(stops):
                    raise self._error(f"expected a command after {token.text!r}")
                items.append((pipeline, token.text))
            elif token.kind == "op" and token.text in (";", "&", "\n"):
                self.take()
                items.append((pipeline, "&" if token.text == "&" else ";"))
                self._skip_newlines()
            else:
                items.append((pipeline, ""))
                break
        if not items and not allow_empty:
            raise self._error("expected a command")
        self.depth -= 1
        return Script(items)

    def _at_list_end(self, stops: frozenset[str]) -> bool:
        token = self.peek()
        if token.kind == "op":
            return token.text in _LIST_ENDS
        return token.kind == "eof" or (self._reserved(token) and token.text in stops)

    def _parse_pipeline(self) -> Pipeline:
        negated = False
        while self._reserved(self.peek(), "!", "time"):
            if self.take().text == "!":
                negated = not negated
            elif self.peek().text == "-p":
                self.take()
        commands = [self._parse_command()]
        while self.peek().kind == "op" and self.peek().text in ("|", "|&"):
            self.take()
            self._skip_newlines()
            commands.append(self._parse_command())
        return Pipeline(commands, negated)

    def _parse_command(self) -> Simple | Compound:
        token = self.peek()
        node: Compound
        if token.kind == "op" and token.text == "(":
            if self.src.startswith("(", token.start + 1):
                node = Compound("arith", [], [self._arith_word(token.start + 2)], [])
            else:
                self.take()
                node = Compound("subshell", [self.parse_list(frozenset())], [], [])
                self._expect(")")
        elif self._reserved(token, "if"):
            node = self._parse_if()
        elif self._reserved(token, "while", "until"):
            kind = self.take().text
            condition = self.parse_list(frozenset({"do"}))
            node = Compound(kind, [condition, self._parse_do()], [], [])
        elif self._reserved(token, "for", "select"):
            node = self._parse_for()
        elif self._reserved(token, "case"):
            node = self._parse_case()
        elif self._reserved(token, "{"):
            self.take()
            node = Compound("group", [self.parse_list(frozenset({"}"}))], [], [])
            self._expect("}")
        elif self._reserved(token, "[["):
            node = self._parse_cond()
        elif self._reserved(token, "function"):
            self.take()
            name = self.take()
            if name.kind != "word":
                raise self._error("expected a function name", name.start)
            if self.peek().kind == "op" and self.peek().text == "(":
                self.take()
                self._expect(")")
            node = self._function_body(name.text)
        elif self._reserved(token) or (token.kind == "op" and token.text not in REDIRECT_OPS):
            raise self._error(f"unexpected {token.text or 'end of input'!r}", token.start)
        else:
            return self._parse_simple()
        while self.peek().kind == "io" or self.peek().text in REDIRECT_OPS:
            node.redirects.append(self._parse_redirect())
        return node

    def _arith_word(self, start: int) -> Word:
        self._ahead = None
        self.pos = self._arith_end(start)
        acc = _Acc()
        self._arith(acc, self.src[start : self.pos - 2])
        return acc.word(self.src[start - 2 : self.pos])

    def _parse_do(self) -> Script:
        self._expect("do")
        body = self.parse_list(frozenset({"done"}))
        self._expect("done")
        return body

    def _parse_if(self) -> Compound:
        self.take()
        bodies: list[Script] = []
        while True:
            bodies.append(self.parse_list(frozenset({"then"})))
            self._expect("then")
            bodies.append(self.parse_list(frozenset({"elif", "else", "fi"})))
            token = self.take()
            if self._reserved(token, "else"):
                bodies.append(self.parse_list(frozenset({"fi"})))
                self._expect("fi")
                break
            if self._reserved(token, "fi"):
                break
            if not self._reserved(token, "elif"):
                raise self._error("expected 'fi'", token.start)
        return Compound("if", bodies, [], [])

    def _parse_for(self) -> Compound:
        kind, token = self.take().text, self.peek()
        words: list[Word] = []
        if kind == "for" and token.text == "(" and self.src.startswith("(", token.start + 1):
            words.append(self._arith_word(token.start + 2))
        else:
            name = self.take()
            if name.kind != "word":
                raise self._error(f"expected a variable name after {kind!r}", name.start)
            self._skip_newlines()
            if self._reserved(self.peek(), "in"):
                self.take()
                while (token := self.peek()).word is not None:
                    self.take()
                    words.append(token.word)
        if self.peek().text in (";", "\n"):
            self.take()
        self._skip_newlines()
        return Compound(kind, [self._parse_do()], words, [])

    def _parse_case(self) -> Compound:
        self.take()
        subject = self.take()
        if subject.word is None:
            raise self._error("expected a word after 'case'", subject.start)
        words, bodies = [subject.word], []
        self._skip_newlines()
        self._expect("in")
        self._skip_newlines()
        while not self._reserved(self.peek(), "esac"):
            if self.peek().text == "(":
                self.take()
            while True:
                pattern = self.take()
                if pattern.word is None:
                    raise self._error("expected a case pattern", pattern.start)
                words.append(pattern.word)
                separator = self.take()
                if separator.kind == "op" and separator.text == ")":
                    break
                if separator.kind != "op" or separator.text != "|":
                    raise self._error("expected ')' after a case pattern", separator.start)
            bodies.append(self.parse_list(frozenset({"esac"}), allow_empty=True))
            if self.peek().kind == "op" and self.peek().text in (";;", ";&", ";;&"):
                self.take()
                self._skip_newlines()
            elif not self._reserved(self.peek(), "esac"):
                raise self._error("expected ';;' or 'esac'")
        self.take()
        return Compound("case", bodies, words, [])

    def _parse_cond(self) -> Compound:
        self.take()
        words: list[Word] = []
        while True:
            token = self.take()
            if token.kind == "eof":
                raise self._error("expected ']]'")
            if token.word is not None:
                if self._reserved(token, "]]"):
                    return Compound("cond", [], words, [])
                words.append(token.word)

    def _function_body(self, name: str) -> Compound:
        self._skip_newlines()
        body = self._parse_command()
        return Compound("function", [Script([(Pipeline([body]), "")])], [], [], name=name)

    def _parse_simple(self) -> Simple | Compound:
        node = Simple([], [], [])
        while True:
            token = self.peek()
            if token.kind == "io" or (token.kind == "op" and token.text in REDIRECT_OPS):
                node.redirects.append(self._parse_redirect())
                continue
            if token.word is None:
                break
            self.take()
            if not node.words and _ASSIGNMENT.match(token.text):
                node.assignments.append(token.word)
                continue
            node.words.append(token.word)
            if len(node.words) == 1 and not node.assignments and self.peek().text == "(":
                if self.peek().kind == "op" and not node.redirects:
                    self.take()
                    self._expect(")")
                    return self._function_body(token.word.value)
        if not (node.words or node.assignments or node.redirects):
            raise self._error("expected a command")
        return node

    def _parse_redirect(self) -> Redirect:
        token, fd = self.take(), None
        if token.kind == "io":
            fd, token = int(token.text), self.take()
        if token.kind != "op" or token.text not in REDIRECT_OPS:
            raise self._error("expected a redirection operator", token.start)
        target = self.take()
        if target.word is None:
            raise self._error(f"expected a word after {token.text!r}", target.start)
        redirect = Redirect(token.text, target.word, fd)
        if token.text in ("<<", "<<-"):
            self._heredocs.append(redirect)
        return redirect


def _ansi_char(match: re.Match[str]) -> str:
    esc = match.group(1)
    if esc[0] in "xuU" and len(esc) > 1:
        return chr(min(int(esc[1:], 16), 0x10FFFF))
    if esc[0] in "01234567":
        return chr(int(esc, 8) & 0xFF)
    if esc[0] == "c" and len(esc) == 2:
        return chr(ord(esc[1]) & 0x1F)
    return _ANSI_SIMPLE.get(esc, "\\" + esc)
