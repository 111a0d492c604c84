"""One row of the table of problem codes (``shared/problems/codes.py``; docs/architecture.md section 10)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ProblemCode"]


@dataclass(frozen=True, slots=True)
class ProblemCode:
    code: str
    #: the default severity: "error" (content not published as the source has it), "warning", "info"
    severity: str
    #: what the code means, in a few words
    title: str
    #: how to fix it (the default hint of every problem with this code)
    hint: str
