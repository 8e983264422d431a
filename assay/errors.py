"""A small error hierarchy.

``UserError``s are the user's to fix (bad config, bad pack, missing key,
unreachable warehouse): the CLI prints one line and exits non-zero, and Prefect
does not retry them. ``TransientError``s (timeouts, rate limits, dropped
connections) are retried by Prefect tasks.
"""


class AssayError(Exception):
    """Base class of every error assay raises on purpose."""


class UserError(AssayError):
    """Something the user must fix. Printed as one line, never a traceback."""


class ConfigError(UserError):
    pass


class PackError(UserError):
    pass


class WarehouseUnreachable(UserError):
    pass


class MissingKey(UserError):
    pass


class NotFound(UserError):
    pass


class TransientError(AssayError):
    """Worth retrying: timeouts, rate limits, dropped connections."""


class LLMError(AssayError):
    pass


class LLMTimeout(LLMError, TransientError):
    """Throttled, overloaded, timed out or disconnected: retried with backoff."""

    retry_after_s: float | None = None  # the wait the service asked for, when it said


class InvalidLLMOutput(LLMError):
    """The model did not answer with the contract after the allowed retries."""


class GuardRefusal(AssayError):
    """The SQL guard refused a statement. The reason goes back to the model."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class QueryError(AssayError):
    """The warehouse rejected a statement (syntax, unknown column, ...)."""


class QueryTimeout(QueryError):
    pass


def is_transient(exc: BaseException) -> bool:
    return isinstance(exc, TransientError)
