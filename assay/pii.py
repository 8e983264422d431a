"""PII rules: which columns never show raw values in a prompt."""

from __future__ import annotations

import re
from typing import Iterable, Mapping

import pyarrow as pa

# the identifiers that may be stored as digits (an integer column named so may hold them); an e-mail address, a
# name or a street never is
_DIGIT_KINDS = ("phone", "phone_number", "mobile", "msisdn", "tel", "telephone", "postcode", "zip_?code", "ip",
                "ip_addr", "ip_address", "ipv4", "ssn", "passport", "card_number")
_TEXT_KINDS = ("e_?mail", "email_address", "full_?name", "first_?name", "last_?name", "surname", "given_name",
               "family_name", "customer_name", "user_?name", "contact_name", "address", "street", "street_address",
               "ipv6", "iban", "dob", "date_of_birth")


def _name_rule(kinds: tuple[str, ...]) -> re.Pattern:
    return re.compile(r"(^|_)(" + "|".join(kinds) + r")($|_)", re.IGNORECASE)


_PII_NAME = _name_rule(_DIGIT_KINDS + _TEXT_KINDS)
_DIGIT_PII = _name_rule(_DIGIT_KINDS)
MASK = "[masked]"


def looks_like_pii(column: str) -> bool:
    return bool(_PII_NAME.search(column))


def looks_like_pii_values(column: str, dtype: pa.DataType | None) -> bool:
    """A result column whose name looks like PII and whose values can be PII: no identifier is stored as a
    fraction, and only the digit kinds (phone, zip, ssn, card, ip) as integers. ``email_rev``, the revenue of
    the e-mail channel (a real model's monthly breakdown, round 18), or ``email_orders``, a count, are numbers
    about the channel, not addresses; a declared column is masked whatever its type."""
    if not looks_like_pii(column):
        return False
    if dtype is None:
        return True
    if pa.types.is_floating(dtype) or (pa.types.is_decimal(dtype) and dtype.scale > 0):
        return False
    if pa.types.is_integer(dtype) or pa.types.is_decimal(dtype):
        return bool(_DIGIT_PII.search(column))
    return True


def pii_columns(columns: Iterable[str], declared: Iterable[str] = (),
                types: Mapping[str, pa.DataType] | None = None) -> set[str]:
    """Columns to mask: declared ones (any case) plus those whose names look like PII (given the result's
    ``types``, those whose values can be PII: ``looks_like_pii_values``)."""
    decl = {d.lower().split(".")[-1] for d in declared}
    return {c for c in columns
            if c.lower() in decl or looks_like_pii_values(c, (types or {}).get(c))}
