"""PII rules: which columns never show raw values in a prompt."""

from __future__ import annotations

import re
from typing import Iterable, Mapping

import pyarrow as pa

# the identifiers that may be stored as a number (a phone or a zip code as digits, a date of birth as yyyymmdd, an
# address as an integer); an e-mail address, a name or a street never is
_DIGIT_KINDS = ("phone", "phone_number", "mobile", "mobile_number", "msisdn", "tel", "telephone", "postcode",
                "zip", "zip_?code", "ip", "ip_addr", "ip_address", "ipv4", "ipv6", "ssn", "passport", "card_number",
                "dob", "date_of_birth")
_TEXT_KINDS = ("e_?mail", "email_address", "full_?name", "first_?name", "last_?name", "surname", "given_name",
               "family_name", "customer_name", "user_?name", "contact_name", "address", "street", "street_address",
               "iban")


def _name_rule(kinds: tuple[str, ...], last: bool = False) -> re.Pattern:
    return re.compile(r"(^|_)(" + "|".join(kinds) + r")" + ("$" if last else "($|_)"), re.IGNORECASE)


_PII_NAME = _name_rule(_DIGIT_KINDS + _TEXT_KINDS)
# a number named after a digit kind is the identifier when the kind ends the name (``phone``, ``customer_phone``,
# ``zip_code``, ``dob``); a kind followed by more words names a measure about it (``phone_orders``, the orders
# of the phone channel; ``mobile_sessions``, ``ip_count``)
_DIGIT_PII_LAST = _name_rule(_DIGIT_KINDS, last=True)
MASK = "[masked]"


def looks_like_pii(column: str) -> bool:
    return bool(_PII_NAME.search(column))


def looks_like_pii_values(column: str, dtype: pa.DataType | None) -> bool:
    """A result column whose name looks like PII and whose values can be PII. A number is an identifier only
    of a digit kind (phone, zip, ssn, card, ip, date of birth) that ends its name, whatever its numeric type (a
    phone read into a float column is still a phone): ``email_rev``, the revenue of the e-mail channel (a real
    model's monthly breakdown, round 18), ``email_orders`` or ``phone_orders``, counts, are numbers about a
    channel, not addresses. Any other type is masked by its name; a declared column whatever its type."""
    if not looks_like_pii(column):
        return False
    if dtype is None:
        return True
    if pa.types.is_floating(dtype) or pa.types.is_integer(dtype) or pa.types.is_decimal(dtype):
        return bool(_DIGIT_PII_LAST.search(column))
    return True


def pii_columns(columns: Iterable[str], declared: Iterable[str] = (),
                types: Mapping[str, pa.DataType] | None = None) -> set[str]:
    """Columns to mask: declared ones (any case) plus those whose names look like PII (given the result's
    ``types``, those whose values can be PII: ``looks_like_pii_values``)."""
    decl = {d.lower().split(".")[-1] for d in declared}
    return {c for c in columns
            if c.lower() in decl or looks_like_pii_values(c, (types or {}).get(c))}
