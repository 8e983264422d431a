"""PII rules: which columns never show raw values in a prompt."""

from __future__ import annotations

import re
from typing import Iterable

_PII_NAME = re.compile(
    r"(^|_)(e_?mail|email_address|phone|phone_number|mobile|msisdn|tel|telephone|full_?name|"
    r"first_?name|last_?name|surname|given_name|family_name|customer_name|user_?name|"
    r"contact_name|address|street|street_address|postcode|zip_?code|ip|ip_addr|ip_address|"
    r"ipv4|ipv6|ssn|passport|iban|card_number|dob|date_of_birth)($|_)",
    re.IGNORECASE,
)
MASK = "[masked]"


def looks_like_pii(column: str) -> bool:
    return bool(_PII_NAME.search(column))


def pii_columns(columns: Iterable[str], declared: Iterable[str] = ()) -> set[str]:
    """Columns to mask: declared ones (any case) plus those whose names look like PII."""
    decl = {d.lower().split(".")[-1] for d in declared}
    return {c for c in columns if c.lower() in decl or looks_like_pii(c)}
