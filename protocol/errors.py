"""The protocol package's one exception root.

    ProtocolError                      anything wrong with bytes on the wire
    ├── FrameTooLarge                  the frame exceeds MAX_FRAME_BYTES
    ├── NotMsgpack                     the bytes are not one msgpack value
    ├── BadEnvelope                    the envelope is not the documented array
    ├── VersionMismatch                unknown protocol major version
    ├── UnknownMessageType             a type name nobody registered
    └── BadBody                        a missing or ill-typed field in the body

Every error names what was wrong, so a receiving actor can log it, count it and go on.
"""

from __future__ import annotations


class ProtocolError(Exception):
    """Root of every decoding and validation failure."""

    code = "protocol_error"


class FrameTooLarge(ProtocolError):
    code = "frame_too_large"

    def __init__(self, size: int, limit: int):
        super().__init__(f"frame of {size} bytes exceeds the limit of {limit} bytes")
        self.size, self.limit = size, limit


class NotMsgpack(ProtocolError):
    code = "not_msgpack"

    def __init__(self, detail: str):
        super().__init__(f"frame is not a single msgpack value: {detail}")


class BadEnvelope(ProtocolError):
    code = "bad_envelope"

    def __init__(self, detail: str):
        super().__init__(f"malformed envelope: {detail}")


class VersionMismatch(ProtocolError):
    code = "version_mismatch"

    def __init__(self, got: int, supported: int):
        super().__init__(
            f"protocol major version {got} is not supported (this side speaks {supported}); "
            "run every actor from the same gamerig installation"
        )
        self.got, self.supported = got, supported


class UnknownMessageType(ProtocolError):
    code = "unknown_type"

    def __init__(self, name: object):
        super().__init__(f"unknown message type {name!r}")
        self.name = name


class BadBody(ProtocolError):
    code = "bad_body"

    def __init__(self, type_name: str, field: str, problem: str):
        super().__init__(f"message {type_name!r}: field {field!r}: {problem}")
        self.type_name, self.field, self.problem = type_name, field, problem
