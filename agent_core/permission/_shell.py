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

from agent_core.permission._shell_lex import (
    MAX_DEPTH,
    REDIRECT_OPS,
    UNKNOWN,
    Acc,
    Compound,
    Lexer,
    Pipeline,
    Redirect,
    Script,
    Simple,
    Token,
    Word,
)
from agent_core.permission.errors import ShellSyntaxError

__all__ = ["UNKNOWN", "Compound", "Pipeline", "Redirect", "Script", "Simple", "Word", "parse"]

_MAX_LENGTH = 100_000
_RESERVED = frozenset(
    {"if", "then", "elif", "else", "fi", "do", "done", "case", "esac", "while", "until", "for"}
    | {"select", "in", "function", "{", "}", "!", "[[", "]]"}
)
_LIST_ENDS = frozenset({")", ";;", ";&", ";;&"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")


def parse(source: str) -> Script:
    """Parse a command line into a `Script`.

    Raises:
        ShellSyntaxError: The command is malformed, too long or too deeply nested, or uses
            syntax this parser does not support.
    """
    if len(source) > _MAX_LENGTH:
        raise ShellSyntaxError("command too long to analyze", _MAX_LENGTH)
    return _Parser(source).parse_program()


class _Parser(Lexer):
    """Recursive descent over the lexer's tokens."""

    def _subscript(self, start: int) -> Script:
        sub = _Parser(self.src, start, self.depth + 1)
        script = sub.parse_list(frozenset(), allow_empty=True)
        token = sub.take()
        if token.text != ")":
            raise sub._error("expected ')' to close a substitution", token.start)
        self.pos = sub.pos
        return script

    def _reserved(self, token: Token, *words: str) -> bool:
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
        if self.depth > MAX_DEPTH:
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
        while self._reserved(self.peek(), "!"):
            self.take()
            negated = not negated
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
        acc = Acc()
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
        start = end = self.peek().start
        while True:
            token = self.peek()
            if token.kind == "io" or (token.kind == "op" and token.text in REDIRECT_OPS):
                node.redirects.append(self._parse_redirect())
                end = self.pos
                continue
            if token.word is None:
                break
            self.take()
            end = self.pos
            if not node.words and _ASSIGNMENT.match(token.text):
                array = token.text.endswith("=") and self.src.startswith("(", self.pos)
                node.assignments.append(self._array(token) if array else token.word)
                continue
            node.words.append(token.word)
            after = self.peek()
            alone = len(node.words) == 1 and not node.assignments and not node.redirects
            if alone and after.kind == "op" and after.text == "(":
                self.take()
                self._expect(")")
                return self._function_body(token.word.value)
        if not (node.words or node.assignments or node.redirects):
            raise self._error("expected a command")
        node.source = self.src[start:end]
        return node

    def _array(self, name: Token) -> Word:
        """`name=(a b c)`: one word holding the elements' values, kinds and substitutions."""
        self.take()
        acc, elements = Acc(), []
        while True:
            self._skip_newlines()
            token = self.take()
            if token.kind == "op" and token.text == ")":
                break
            if token.word is None:
                raise self._error("expected ')' to close an array", token.start)
            elements.append(token.word.value)
            acc.kinds |= token.word.kinds
            acc.scripts += token.word.scripts
        assert name.word is not None
        acc.value.append(f"{name.word.value}({' '.join(elements)})")
        return acc.word(self.src[name.start : self.pos])

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
