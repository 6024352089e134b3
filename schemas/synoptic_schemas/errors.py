"""The contract's error types: one per kind of bad input, each with a clear message."""


class ContractError(ValueError):
    """Base of every error raised by the wire contract."""


class ChannelError(ContractError):
    """A channel URI or subject that does not name a valid channel."""


class DecodeError(ContractError):
    """A payload that is truncated, malformed, or of an unknown major version."""


class VersionError(DecodeError):
    """A payload whose schema major version this code does not understand."""

    def __init__(self, found: object, supported: int) -> None:
        super().__init__(
            f"payload schema major version {found!r} is not supported "
            f"(this consumer understands version {supported})"
        )
        self.found = found
        self.supported = supported
