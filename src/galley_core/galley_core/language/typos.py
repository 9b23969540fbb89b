"""Typos people make: one edited character, and texts given typos that stay unambiguous.

An edit is an insertion, a deletion, a substitution by a keyboard neighbour or a transposition;
:func:`edit_distance` counts them (optimal string alignment).
"""

from __future__ import annotations

import random

from galley_core.language.phrase_grammar import GRAMMAR_WORDS
from galley_core.scene import Scene

__all__ = ["add_typos", "edit_distance", "typo"]

_KEYBOARD_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


def _neighbours(letter: str) -> str:
    """Keys beside ``letter`` on a QWERTY keyboard (substitutions people actually make)."""
    for row in _KEYBOARD_ROWS:
        i = row.find(letter)
        if i >= 0:
            return row[max(0, i - 1) : i] + row[i + 1 : i + 2]
    return "e"


def edit_distance(a: str, b: str) -> int:
    """Edit distance with adjacent transpositions (optimal string alignment): each edit counts 1."""
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


def typo(word: str, rng: random.Random) -> str:
    """``word`` with one character inserted, deleted, substituted (a keyboard neighbour) or transposed."""
    for _ in range(20):
        edit = rng.choice(("insert", "delete", "substitute", "transpose"))
        i = rng.randrange(len(word))
        if edit == "insert":
            out = word[:i] + rng.choice(_neighbours(word[i]) + word[i]) + word[i:]
        elif edit == "delete" and len(word) > 3:
            out = word[:i] + word[i + 1 :]
        elif edit == "substitute":
            out = word[:i] + rng.choice(_neighbours(word[i])) + word[i + 1 :]
        elif edit == "transpose" and i + 1 < len(word):
            out = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
        else:
            continue
        if out != word and edit_distance(out, word) == 1:
            return out
    return word[:-1] + ("s" if word[-1] != "s" else "z")


def add_typos(text: str, scene: Scene, rng: random.Random, count: int) -> str:
    """``text`` with ``count`` of its words (letters only, 3+ long) given one typo each, unambiguously.

    A typo never yields a word of the grammar or a name of the scene, and a misspelt name stays
    closer to its own name than to any other (at least two edits from every other name).
    """
    names = set(scene.object_names) | set(scene.zone_names)
    tokens = text.split(" ")
    candidates = [i for i, t in enumerate(tokens) if t.isalpha() and t.islower() and len(t) >= 3]
    rng.shuffle(candidates)
    # Most typos hit the words that carry meaning; a short function word now and then.
    function_words = {"the", "and", "too", "was", "can", "you"}
    candidates.sort(key=lambda i: tokens[i] in function_words and rng.random() < 0.8)
    done = 0
    for i in candidates:
        if done == count:
            break
        word = tokens[i]
        wrong = typo(word, rng)
        if wrong in GRAMMAR_WORDS or wrong in names:
            continue
        if any(edit_distance(wrong, n) < 2 for n in names if n != word):
            continue
        tokens[i] = wrong
        done += 1
    return " ".join(tokens)
