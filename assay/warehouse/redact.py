"""Engine error text without the data values it quotes.

Engines put the offending value into their error messages (``Could not convert string
'ann@example.com' to INT32``, ``invalid input syntax for type integer: "Ann Lee"``, ``Type INT32 with
value 19840317 can't be cast``), so an error is a way to read a value the result masks, or a row of
another tenant the statement's filter had not yet removed when the engine failed on it. ``scrub_error``
always masks what looks like an e-mail address or a phone number. ``strict`` (the statement reads a
PII column, or the project has a tenant filter) fails closed: a quoted part is kept only when it is
one name, SQL vocabulary or a name of the catalog (``known``: its tables and columns); the first quoted
part that is not ends the message. From the first quote on, a word outside quotes is kept only when it
is one of the words engines write around names (``ENGINE_WORDS``), SQL vocabulary or a catalog name, and
at most ``AFTER_QUOTE_WORDS`` of them: engines do not escape the quotes inside the value they quote, so
``'select' bob AT tb.com 'select'`` (a value that starts and ends with a quoted keyword) read as two
known names around the engine's own words (red team 15). What follows the first unquoted ``": "``
(where engines put a value: ``date field value out of range: 2020-13-07``; a value ending in its own
``": "`` hid behind the last one) is kept only when made of SQL vocabulary and catalog names, and every
number outside a name is masked. The statement's own words are no key: the model writes them, and a
literal holding every letter (``'a b c ... z'``) once let a value spelled out with spaces through.
"""

from __future__ import annotations

import re
from typing import Iterable

from ..pii import MASK

_EMAIL = re.compile(r"[\w.+%-]+@[\w-]+(?:\.[\w-]+)+")
_PHONE = re.compile(
    r"\+\d[\d\s().-]{6,}\d"                                   # international: +44 20 7946 0958
    r"|(?<![\w.])\(?\d{3}\)?[\s.-]?\d{3}[\s.-]\d{4}(?![\w.])"  # 555-123-4567, (555) 123 4567
    r"|(?<![\w.-])\d{9,15}(?![\w.-])"                          # a bare run of 9-15 digits
)
_WORD = re.compile(r"\w+")
_CLASS_PREFIX = re.compile(r"^[A-Z][A-Za-z ]{0,40} Error: ")  # DuckDB: "Conversion Error: ..."

# words error messages use around identifiers: types and keywords (never data)
VOCABULARY = frozenset("""
int int2 int4 int8 int16 int32 int64 int128 integer bigint smallint tinyint hugeint uhugeint utinyint
usmallint uinteger ubigint varint bignum numeric decimal real float float4 float8 double precision
money text varchar char character bpchar name string bool boolean date time timetz timestamp timestamptz
timestamp_s timestamp_ms timestamp_ns interval uuid json jsonb xml bytea blob bit varbit inet cidr
macaddr point array list struct map union enum null any anyelement unknown record with without zone
select from where group by order having limit offset join on as and or not in is case when then else
end distinct union all over partition window cast true false
""".split())


# words engines write around the names they quote, after the first quote of a message ("column "x" of relation "t"
# does not exist", "Could not convert string [value] to INT32"); a value spelled in them is cut by the word budget
ENGINE_WORDS = frozenset("""
an the of to for at on in into by is are be was not no does do did exist exists found relation column columns table
tables schema function functions operator argument arguments type types value values could cannot convert converted
cast casting string source target when must only one more than missing recognized unit format specifier according
near position line character expected got invalid input syntax range out field key path index element ambiguous
reference referenced candidate bindings clause appear used aggregate entry clause subquery returned row rows
""".split())
# words kept after the first quote: the longest real ones ("column "x" must appear in the GROUP BY clause or be used
# in an aggregate function") hold 15
AFTER_QUOTE_WORDS = 16
_NAME = re.compile(r"^\s*[\w$]+(?:\.[\w$]+)*\s*$")


def _redact_contacts(text: str) -> str:
    return _PHONE.sub(MASK, _EMAIL.sub(MASK, text))


def _known(fragment: str, words: set[str]) -> bool:
    tokens = [t.lower() for t in _WORD.findall(fragment)]
    return bool(tokens) and MASK not in fragment and all(t in words or t in VOCABULARY for t in tokens)


def _a_name(fragment: str, words: set[str]) -> bool:
    """One name (``orders``, ``shop.orders``, ``INT32``), SQL vocabulary or the catalog's: what engines quote."""
    return bool(_NAME.match(fragment)) and _known(fragment, words)


def _quoted(text: str, quotes: str, words: set[str]) -> str:
    """Keep quoted parts that are one known name, and after the first of them the engine's words around names
    (at most AFTER_QUOTE_WORDS); from the first other part, word or a quote left open, everything to the end is
    masked."""
    out, i, seen, budget = [], 0, False, AFTER_QUOTE_WORDS
    while i < len(text):
        ch = text[i]
        if ch not in quotes:
            w = _WORD.match(text, i) if (ch.isalnum() or ch == "_") else None
            if w is None:
                out.append(ch)
                i += 1
                continue
            word = w.group(0)
            if seen:
                budget -= 1
                low = word.lower()
                if budget < 0 or not (low in ENGINE_WORDS or low in VOCABULARY or low in words
                                      or _NUMBER.fullmatch(word)):
                    out.append(MASK)
                    return "".join(out)
            out.append(word)
            i = w.end()
            continue
        j = text.find(ch, i + 1)
        # a doubled quote is inside, and so is one a letter or digit follows: the value's own apostrophe
        # ('O'Brien Siobhan' read as 'O' left "Brien Siobhan" as the engine's words)
        while j != -1 and j + 1 < len(text) and (text[j + 1] == ch or text[j + 1].isalnum()):
            j = text.find(ch, j + 2)
        if j == -1 or not _a_name(text[i + 1:j], words):
            out.append(MASK)
            return "".join(out)
        out.append(text[i:j + 1])
        seen = True
        i = j + 1
    return "".join(out)


def _colon_tail(text: str, words: set[str]) -> str:
    """Mask what follows the first ': ' outside quotes unless it is made of known words (a value may end in a
    ': ' of its own: the last one is the value's)."""
    depth_quote, cut = None, -1
    for k, ch in enumerate(text):
        if depth_quote:
            if ch == depth_quote:
                depth_quote = None
        elif ch in "'\"":
            depth_quote = ch
        elif ch == ":" and text[k + 1:k + 2] == " ":
            cut = k + 2
            break
    if cut < 0:
        return text
    tail = text[cut:]
    if not tail.strip() or tail.strip() == MASK or _known(tail.replace('"', " ").replace("'", " "), words):
        return text
    return text[:cut] + MASK


# a number outside a name (not the 32 of INT32): 1.1000000000000002e+30 whole
# DuckDB's classes of errors raised before a row is read (binding names, the catalog, parsing): they quote the
# statement's names, never a value, and a model needs them whole to fix its query (a tenant filter masked
# 'Table "o" does not have a column named "amout"': session 24's review)
_BEFORE_DATA = frozenset({"Binder", "Catalog", "Parser"})
_NUMBER = re.compile(r"(?<![A-Za-z_\d])(?>\d+(?:[.,]\d+)*(?:[eE][+-]?\d+)?)(?![A-Za-z_\d])")


def scrub_error(message: str, *, strict: bool = False, known: Iterable[str] = ()) -> str:
    """``message`` safe to show: contacts always masked; when ``strict``, values too (only SQL vocabulary and the
    ``known`` catalog names may stay, and no number)."""
    text = _redact_contacts(str(message))
    m = _CLASS_PREFIX.match(text)
    if not strict or (m and text[:m.end()].removesuffix(" Error: ") in _BEFORE_DATA):
        return text
    words: set[str] = set()
    for k in known:
        words.update(w.lower() for w in _WORD.findall(str(k)))
    prefix, rest = (text[:m.end()], text[m.end():]) if m else ("", text)
    rest = _quoted(rest, "'\"", words)
    rest = _colon_tail(rest, words)
    return prefix + _NUMBER.sub(MASK, rest)
