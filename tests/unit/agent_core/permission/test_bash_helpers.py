"""The Bash helpers: rule matching, rule subjects, read paths, and the analysis behind them."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core.permission import (
    analyze_command,
    bash_match_rule,
    bash_read_paths,
    bash_rule_subjects,
    is_read_only,
)


@pytest.mark.parametrize(
    ("rule", "command", "expected"),
    [
        # the spec's examples
        ("npm run:*", "npm run build", True),
        ("npm run:*", "npm run test", True),
        ("npm run:*", "npm install", False),
        ("git commit:*", 'git commit -m "fix"', True),
        ("git commit:*", "git push", False),
        ("rm:*", "rm file.txt", True),
        ("rm:*", "rm -rf /tmp/x", True),
        ("rm:*", "ls", False),
        # words, not characters
        ("npm run:*", "npm runaway", False),
        ("git commit:*", "git commit", True),
        ("git commit -m:*", "git commit -m 'x'", True),
        ("git commit -m:*", "git commit --amend", False),
        # plain rules are prefixes too; wildcards; match-all
        ("npm test", "npm test", True),
        ("npm test", "npm test --watch", True),
        ("npm test", "npm tester", False),
        ("python x.py", "python 'x.py'", True),
        ("npm *", "npm install x", True),
        ("npm *", "npm", True),
        ("npm *", "pnpm install", False),
        ("git * --dry-run", "git push --dry-run", True),
        ("git * --dry-run", "git push", False),
        ("*", "anything at all", True),
        (None, "anything at all", True),
        (":*", "ls", True),
        ("", "ls", True),
        # compound: every top-level command must match
        ("npm run:*", "npm run a && npm run b", True),
        ("npm run:*", "npm run a && npm test", False),
        ("npm run:*", "", False),
        # unparsable text: the rule's words anywhere
        ("rm:*", "echo 'x; rm -rf /", True),
        ("git push:*", "echo 'x; ls", False),
    ],
)
def test_bash_match_rule(rule: str | None, command: str, expected: bool) -> None:
    assert bash_match_rule(rule, command) is expected


@pytest.mark.parametrize(
    ("command", "subjects"),
    [
        ("ls -la", ["ls -la"]),
        ("npm test && npm run build", ["npm test", "npm run build"]),
        ("timeout 10 nice -n 5 make", ["make"]),
        ("env -i LANG=C make", ["make"]),
        ("env FOO=1 make", ["FOO=1 make", "make"]),
        ("PATH=/tmp make", ["PATH=/tmp make", "make"]),
        ("/usr/bin/git status", ["/usr/bin/git status", "git status"]),
        ("sudo rm x", ["sudo rm x", "rm x"]),
        ("bash -c 'rm x; ls'", ["bash -c 'rm x; ls'", "rm x", "ls"]),
        ("echo hi > out.txt", ["echo hi"]),
        ("> out.txt", ["> out.txt"]),
        ("echo 'open", ["echo 'open"]),
    ],
)
def test_bash_rule_subjects(command: str, subjects: list[str]) -> None:
    assert bash_rule_subjects(command) == subjects


def test_subjects_round_trip_through_the_matcher() -> None:
    for subject in bash_rule_subjects("FOO=1 timeout 5 git commit -m 'a b' && npm run x"):
        assert bash_match_rule(subject, subject), subject


def test_read_paths_follow_cd_redirections_and_globs(project: Path, home: Path) -> None:
    cwd = str(project)
    assert bash_read_paths("cat a.txt b/c.txt", cwd) == [f"{cwd}/a.txt", f"{cwd}/b/c.txt"]
    assert bash_read_paths("cd /etc && cat hosts", cwd) == ["/etc", "/etc/hosts"]
    assert bash_read_paths("wc -l < /etc/passwd", cwd) == ["/etc/passwd"]
    assert bash_read_paths("grep -rn TODO src/*.py", cwd) == [f"{cwd}/src"]
    assert bash_read_paths("ls", cwd) == [f"{cwd}/."]
    assert bash_read_paths("echo hi; pwd", cwd) == []
    assert bash_read_paths("cat ~/notes.md", cwd) == [f"{home}/notes.md"]
    assert bash_read_paths("cat $FILE", cwd) is None
    assert bash_read_paths("cd $DIR && cat x", cwd) is None
    assert bash_read_paths("cat $(which x)", cwd) is None


def test_where_each_command_runs() -> None:
    commands = analyze_command("cd a && cd b; rm x; (cd c; rm y); rm z || cd d").commands
    cwds = {" ".join(c.argv): c.cwd for c in commands}
    before = frozenset({(), ("a",), ("a", "b")})  # either cd may fail before `;`
    assert cwds["rm x"] == before
    assert cwds["rm y"] == before | {(*steps, "c") for steps in before}
    assert cwds["rm z"] == before  # the subshell's cd does not leak
    loop = analyze_command("for d in a b; do cd $d; rm x; done").commands
    assert all(c.cwd is None for c in loop)
    guarded = analyze_command("cd build && rm -rf out").commands
    assert guarded[1].cwd == frozenset({("build",)})


@pytest.mark.parametrize(
    ("command", "read_only"),
    [
        ("git branch -v", True),
        ("git branch --contains HEAD", True),
        ("git branch feature", False),
        ("git branch -m old new", False),
        ("git tag -n", True),
        ("git tag -a v1 -m x", False),
        ("git config user.name", True),
        ("git config --global user.name x", False),
        ("git config --unset user.name", False),
        ("git -c core.pager=evil log", False),
        ("git stash show -p", True),
        ("git remote add origin x", False),
        ("git reflog expire --all", False),
        ("sed -n '/start/,/end/p' f", True),
        ("sed '1d;$d' f", True),
        ("sed 's|a|b|w out' f", False),
        ("sed -e 's/a/b/' -e 's/c/d/' f", True),
        ("sed -f script.sed f", False),
        ("sed --in-place=.bak s/a/b/ f", False),
        ("awk 'NR > 1' f", False),
        ("awk '{ system(\"rm x\") }' f", False),
        ("awk -f prog.awk f", False),
        ("find . -exec rm {} +", False),
        ("find . -execdir cat {} \\;", True),
        ("find . -fprint out", False),
        ("xargs cat", True),
        ("xargs -0 -n1 sh -c 'ls'", False),
        ("rg --pre ./x foo", False),
        ("rg --pre=./x foo", False),
        ("sort --out=x f", False),
        ("uniq in out", False),
        ("date +%s", True),
        ("tree -o out.txt", False),
        ("docker --context prod ps", True),
        ("docker exec web ls", False),
        ("docker compose -f x.yml logs", True),
        ("gh pr view 3 --web", False),
        ("npm version patch", False),
        ("npm audit fix", False),
        ("kubectl -n x get pods", True),
        ("kubectl delete pod x", False),
        ("go env -w GOFLAGS=x", False),
        ("python -c 'print(1)'", False),
        ("node -e 'x'", False),
        ("read -r line", True),
        ("read -r PATH", False),
        ("command -v ls", True),
        ("command rm x", False),
        ("x=1", True),
        ("PATH=/tmp", False),
        ("", True),
    ],
)
def test_read_only_details(command: str, read_only: bool) -> None:
    """What the analysis proves read-only (the default list auto-allows only part of it)."""
    assert analyze_command(command).read_only is read_only
    if not read_only:
        assert not is_read_only(command, [command.split()[0]] if command else [])


@pytest.mark.parametrize(
    ("command", "dynamic"),
    [
        ("x='a[$(rm -rf ~)]'; (( x ))", True),
        ("while read n; do (( n > 5 )) && echo $n; done < data.txt", True),
        ("read x; [[ $x -eq 3 ]]", True),
        ("for i in 1 2 3; do echo $((i * 2)); done", False),
        ("for ((i = 0; i < 3; i++)); do echo $i; done", False),
        ("echo $((1 + 2))", False),
    ],
)
def test_arithmetic_on_untrusted_variables_is_dynamic(command: str, dynamic: bool) -> None:
    found = analyze_command(command).dynamic
    assert any("arithmetic" in reason for reason in found) is dynamic


def test_analysis_is_cached_and_never_raises() -> None:
    assert analyze_command("git status") is analyze_command("git status")
    broken = analyze_command("echo $(")
    assert broken.error is not None
    assert not broken.read_only
    assert analyze_command("x" * 200_000).error is not None
