"""The lexical half of the schema search: BM25 (``bm25s``) over the words of each table.

Dense vectors find meaning; they blur abbreviations and exact names (``ap_inv``, ``kdnr``,
``fin_gl_jrnl``), which a user types expecting that table. Each table's words are its name and
column names split at ``_`` and case changes, the glossary's readings, and its description; they
are computed only for new or changed tables and kept beside the vector (the ``lex`` payload). The
BM25 matrix over all tables is rebuilt from them in memory (tens of milliseconds at 2,000 tables:
its IDF is corpus-wide anyway).

Query words match a table's words exactly, or as an inflected or compound form of it: a query word
that starts with a table word of 4+ letters (``lieferanten`` -> ``lieferant``, ``lagerbewegungen`` ->
``lager``, ``invoices`` -> ``invoice``) or the reverse (``complaint`` -> ``complaints``), after folding
accents (``müşteri`` -> ``musteri``).
"""

from __future__ import annotations

import logging

import re
import unicodedata

import numpy as np

from ..models import TableInfo

MIN_STEM = 4  # a table word this long may match as the start of a longer query word
_SPLIT = re.compile(r"[^0-9a-z]+")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
# words that carry no table meaning in a query (English; other languages' function words are short and rare)
STOP = frozenset("a an and are as at by for from how in is it of on or our per the their to we what where which "
                 "who with us each all list table tables data one row rows".split())


def fold(text: str) -> str:
    """Lower case without accents: 'Müşteri Şikayetleri' -> 'musteri sikayetleri'."""
    text = _CAMEL.sub(" ", text).replace("ı", "i").replace("İ", "I").replace("ß", "ss")
    text = unicodedata.normalize("NFKD", text)
    return "".join(c for c in text if not unicodedata.combining(c)).lower()


def words(text: str) -> list[str]:
    return [w for w in _SPLIT.split(fold(text)) if w and w not in STOP]


def table_words(t: TableInfo, glossary: dict[str, str] | None = None, note: str = "") -> list[str]:
    """The words BM25 indexes for a table: the name counts twice (it is the strongest signal)."""
    from .glossary import expand

    name = words(t.name) + words(expand(t.name, glossary))
    cols = " ".join(c.name for c in t.columns[:80])
    out = name + name + words(cols) + words(expand(cols, glossary))
    if t.description:
        out += words(t.description)
    if note:
        out += words(note)
    return out


class Lexical:
    """BM25 over a fixed set of tables (rebuilt whenever the set changes)."""

    def __init__(self, docs: dict[str, list[str]]):
        import bm25s

        # bm25s sets its own logger to DEBUG at import: under any handler on the root logger (the eval
        # command's, a user's basicConfig) every index build printed "DEBUG:bm25s:Building index from tokens"
        logging.getLogger("bm25s").setLevel(logging.WARNING)
        self.keys = list(docs)
        corpus = [docs[k] or [""] for k in self.keys]
        self.vocab = sorted({w for d in corpus for w in d if w})
        self._long = [v for v in self.vocab if len(v) >= MIN_STEM]
        self.bm25 = bm25s.BM25()
        self.bm25.index(corpus, show_progress=False) if self.keys else None

    def query_terms(self, query: str) -> list[str]:
        vocab = set(self.vocab)
        terms: list[str] = []
        for w in dict.fromkeys(words(query)):
            if w in vocab:
                terms.append(w)
            elif len(w) > MIN_STEM:  # an inflected or compound form of a table word, or the reverse
                terms += [v for v in self._long if w.startswith(v) or v.startswith(w)]
        return list(dict.fromkeys(terms))

    def scores(self, query: str) -> dict[str, float]:
        """BM25 score per table key (tables that share no word with the query are left out)."""
        terms = self.query_terms(query) if self.keys else []
        if not terms:
            return {}
        s = np.asarray(self.bm25.get_scores(terms), dtype=float)
        return {self.keys[i]: float(s[i]) for i in np.flatnonzero(s > 0)}
