"""The shell parser: words, quoting, structure, substitutions, here-documents, failures."""

from __future__ import annotations

import pickle

import pytest

from agent_core.permission import ShellSyntaxError
from agent_core.permission._shell import UNKNOWN, Compound, Script, Simple, parse


def _simple(source: str, index: int = 0) -> Simple:
    node = parse(source).items[index][0].commands[0]
    assert isinstance(node, Simple)
    return node


def _argv(source: str, index: int = 0) -> list[str]:
    return [word.value for word in _simple(source, index).words]


@pytest.mark.parametrize(
    ("source", "argv"),
    [
        ("ls -la", ["ls", "-la"]),
        ("echo 'a b' \"c d\" e\\ f", ["echo", "a b", "c d", "e f"]),
        ("echo \"a\\\"b\" 'it'\"'\"'s'", ["echo", 'a"b', "it's"]),
        ("echo $'tab\\there' $'\\x72m'", ["echo", "tab\there", "rm"]),
        ("r\\m -rf x", ["rm", "-rf", "x"]),
        ("'r''m' x", ["rm", "x"]),
        ("echo a#b # comment", ["echo", "a#b"]),
        ("echo line\\\ncontinued", ["echo", "linecontinued"]),
        ("echo $HOME/x ${HOME}/y $USER", ["echo", "~/x", "~/y", UNKNOWN]),
        ('echo "$(date)" `pwd` $((1 + 2))', ["echo", UNKNOWN, UNKNOWN, UNKNOWN]),
        ("echo {a,b} *.py", ["echo", "{a,b}", "*.py"]),
        ("echo done if then", ["echo", "done", "if", "then"]),
    ],
)
def test_words_after_quote_removal(source: str, argv: list[str]) -> None:
    assert _argv(source) == argv


def test_lists_keep_their_operators() -> None:
    script = parse("a && b || c; d & e\nf")
    assert [op for _, op in script.items] == ["&&", "||", ";", "&", ";", ""]


def test_pipelines_and_negation() -> None:
    pipeline = parse("! a | b |& c").items[0][0]
    assert pipeline.negated
    assert len(pipeline.commands) == 3


def test_array_assignments() -> None:
    node = _simple("files=(a.txt 'b c' $(ls)) cmd")
    assert node.assignments[0].value == "files=(a.txt b c \x00)"
    assert node.assignments[0].kinds == {"cmdsub"}
    assert [w.value for w in node.words] == ["cmd"]


def test_assignments_and_redirections() -> None:
    node = _simple("FOO=1 BAR='x y' cmd arg 2>&1 >>out <in 3<>rw <<<word")
    assert [w.value for w in node.assignments] == ["FOO=1", "BAR=x y"]
    assert [w.value for w in node.words] == ["cmd", "arg"]
    assert [(r.op, r.fd, r.target.value) for r in node.redirects] == [
        (">&", 2, "1"),
        (">>", None, "out"),
        ("<", None, "in"),
        ("<>", 3, "rw"),
        ("<<<", None, "word"),
    ]


def test_substitutions_are_parsed_as_nested_scripts() -> None:
    word = _simple('echo "$(git rev-parse HEAD | cut -c1-7)"').words[1]
    assert word.kinds == {"cmdsub"}
    inner = word.scripts[0].items[0][0].commands
    assert [[w.value for w in c.words] for c in inner if isinstance(c, Simple)] == [
        ["git", "rev-parse", "HEAD"],
        ["cut", "-c1-7"],
    ]


def test_case_patterns_inside_a_substitution_do_not_close_it() -> None:
    word = _simple("echo $(case $x in a) echo A;; esac) after").words[1]
    assert word.kinds == {"cmdsub"}
    assert _argv("echo $(case $x in a) echo A;; esac) after")[2] == "after"


def test_backticks_and_process_substitution() -> None:
    assert _simple("ls `echo \\`pwd\\``").words[1].kinds == {"backtick"}
    diff = _simple("diff <(ls a) >(wc -l)")
    assert [w.kinds for w in diff.words[1:]] == [{"procsub"}, {"procsub"}]


def test_here_documents() -> None:
    quoted = _simple("cat <<'EOF'\n$(rm -rf /)\nEOF")
    body = quoted.redirects[0].body
    assert body is not None
    assert body.value == "$(rm -rf /)"
    assert not body.kinds

    unquoted = parse("cat <<-EOF | wc -l\n\thi $(whoami)\n\tEOF\necho next")
    first = unquoted.items[0][0].commands[0]
    assert isinstance(first, Simple)
    assert first.redirects[0].body is not None
    assert first.redirects[0].body.kinds == {"cmdsub"}
    assert _argv("cat <<-EOF | wc -l\n\thi $(whoami)\n\tEOF\necho next", 1) == ["echo", "next"]


@pytest.mark.parametrize(
    ("source", "kind"),
    [
        ("(cd src && ls)", "subshell"),
        ("{ ls; pwd; }", "group"),
        ("if a; then b; elif c; then d; else e; fi", "if"),
        ("while read l; do echo $l; done < f", "while"),
        ("until false; do :; done", "until"),
        ("for f in a b; do echo $f; done", "for"),
        ("for ((i = 0; i < 3; i++)); do echo $i; done", "for"),
        ("select x in a b; do break; done", "select"),
        ("case $1 in a|b) x;; (c) y;& *) z;; esac", "case"),
        ("[[ -f x && $y =~ ^(a|b)$ ]]", "cond"),
        ("(( i++ ))", "arith"),
        ("f() { echo hi; }", "function"),
        ("function f { echo hi; }", "function"),
    ],
)
def test_compound_commands(source: str, kind: str) -> None:
    node = parse(source).items[0][0].commands[0]
    assert isinstance(node, Compound)
    assert node.kind == kind


def test_the_fork_bomb_parses_as_a_function_and_a_call() -> None:
    script = parse(":(){ :|:& };:")
    definition = script.items[0][0].commands[0]
    assert isinstance(definition, Compound)
    assert (definition.kind, definition.name) == ("function", ":")
    assert _argv(":(){ :|:& };:", 1) == [":"]


@pytest.mark.parametrize(
    "source",
    [
        "echo 'open",
        'echo "open',
        "echo $(open",
        "echo `open",
        "echo ${open",
        "ls &&",
        "| ls",
        "if true; then ls",
        "for x in a; do ls",
        "case x in a) ls",
        "{ ls",
        "( ls",
        "ls )",
        "fi",
        "echo >",
        "a=(1 2",
        "echo a=(1 2)",
        "echo \\",
        "( " * 200 + "ls" + " )" * 200,
        "echo " + "$(" * 100 + "x" + ")" * 100,
    ],
)
def test_malformed_or_unsupported_input_fails_closed(source: str) -> None:
    with pytest.raises(ShellSyntaxError):
        parse(source)


def test_empty_input_is_an_empty_script() -> None:
    assert parse("  # only a comment\n") == Script([])


def test_syntax_errors_pickle() -> None:
    with pytest.raises(ShellSyntaxError) as caught:
        parse("echo 'open")
    copy = pickle.loads(pickle.dumps(caught.value))
    assert (copy.message, copy.position) == (caught.value.message, caught.value.position)
