"""The pages point where they say and the command-line reference is complete: every relative
link of the README and of ``docs/`` names a file that exists and, with ``#anchor``, a heading
of that page (GitHub's anchors); every flag that ``approxpath ... --help`` lists is in
``docs/cli.md``, and every flag ``docs/cli.md`` names is a flag of some command."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def github_anchor(heading):
    """The anchor GitHub gives a heading: its text (code spans and link targets dropped)
    lower-cased, every character but letters, digits, ``_``, ``-`` and spaces removed, spaces
    made hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"`([^`]*)`", r"\1", text).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page):
    """The anchors of ``page``'s headings (a repeated one gets ``-1``, ``-2``, ... as on GitHub)."""
    seen, out = {}, set()
    for line in _FENCE.sub("", page.read_text()).splitlines():
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            slug = github_anchor(m.group(1))
            k = seen.get(slug, -1) + 1
            seen[slug] = k
            out.add(slug if k == 0 else f"{slug}-{k}")
    return out


def test_github_anchor_as_github_makes_it():
    assert github_anchor("Absolute and relative ε: the target") == "absolute-and-relative-ε-the-target"
    assert github_anchor("`kernel_svm` over the bandwidth: the hinge-sum maximization") == \
        "kernel_svm-over-the-bandwidth-the-hinge-sum-maximization"
    assert github_anchor("Kernel ridge's closed-form criteria") == "kernel-ridges-closed-form-criteria"


def _links():
    out = []
    for page in PAGES:
        for target in _LINK.findall(_FENCE.sub("", page.read_text())):
            if not re.match(r"[a-z]+:", target):  # (https:, mailto:)
                out.append(pytest.param(page, target, id=f"{page.relative_to(ROOT)}:{target}"))
    return out


@pytest.mark.parametrize("page, target", _links())
def test_a_relative_link_resolves(page, target):
    path, _, anchor = target.partition("#")
    file = (page.parent / path).resolve() if path else page
    assert file.exists(), f"{page.relative_to(ROOT)} links to {target}: no such file"
    if anchor and file.suffix == ".md":
        assert anchor in anchors(file), f"{page.relative_to(ROOT)} links to {target}: no such heading"


def _help(argv, capsys):
    from approxpath.cli import main

    assert main([*argv, "--help"]) == 0
    return capsys.readouterr().out


_COMMANDS = [["path", name] for name in ("kernel_svm", "klasso", "robust_l1", "kernel_ridge")] + [
    ["verify"], ["problems"], ["demo"], ["exact"], ["crosscheck", "klasso"], ["features"],
    ["select", "kernel_ridge"], ["surface", "kernel_svm"], ["data"],
    *[["figure", name] for name in ("cond", "solves", "validation", "exact-path")]]


def test_every_flag_of_the_command_line_is_in_the_reference(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")  # (no flag broken at a line's end)
    flags = {flag for argv in _COMMANDS for flag in _FLAG.findall(_help(argv, capsys))} - {"--help"}
    documented = set(_FLAG.findall((ROOT / "docs" / "cli.md").read_text()))
    assert len(flags) > 60
    assert not flags - documented, f"flags missing from docs/cli.md: {sorted(flags - documented)}"


def test_every_flag_the_reference_names_exists(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")
    flags = {flag for argv in [[], *_COMMANDS] for flag in _FLAG.findall(_help(argv, capsys))}
    named = set(_FLAG.findall((ROOT / "docs" / "cli.md").read_text()))
    assert not named - flags, f"docs/cli.md names flags no command has: {sorted(named - flags)}"
