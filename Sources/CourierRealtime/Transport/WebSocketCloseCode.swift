/// A WebSocket close status code (RFC 6455 §7.4). Codes 1000–2999 are the protocol's (IANA
/// registry), 3000–3999 registered by libraries and frameworks, 4000–4999 private to an application.
public struct WebSocketCloseCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The numeric code, as sent in the first two bytes of a Close frame (network byte order).
    public var rawValue: UInt16

    /// Creates a close code; any value, so a received code can be reported as it is.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// 1000: the purpose of the connection has been fulfilled.
    public static let normalClosure = Self(rawValue: 1000)
    /// 1001: an endpoint is going away (server shutting down, app moving to the background).
    public static let goingAway = Self(rawValue: 1001)
    /// 1002: the peer broke the protocol (bad framing, reserved bits, bad opcode…).
    public static let protocolError = Self(rawValue: 1002)
    /// 1003: a data type the endpoint cannot accept.
    public static let unsupportedData = Self(rawValue: 1003)
    /// 1005: reported locally when a Close frame carried no code; never sent (§7.4.1).
    public static let noStatusReceived = Self(rawValue: 1005)
    /// 1006: reported locally when the connection closed without a Close frame (TCP loss, a
    /// keepalive failure); never sent (§7.4.1).
    public static let abnormalClosure = Self(rawValue: 1006)
    /// 1007: a text message (or close reason) that is not valid UTF-8 (§8.1).
    public static let invalidFramePayloadData = Self(rawValue: 1007)
    /// 1008: a message that violates the endpoint's policy.
    public static let policyViolation = Self(rawValue: 1008)
    /// 1009: a message too big to process.
    public static let messageTooBig = Self(rawValue: 1009)
    /// 1010: the client expected an extension the server did not negotiate.
    public static let mandatoryExtension = Self(rawValue: 1010)
    /// 1011: the server hit an unexpected condition.
    public static let internalServerError = Self(rawValue: 1011)
    /// 1012: the service is restarting (IANA registry).
    public static let serviceRestart = Self(rawValue: 1012)
    /// 1013: try again later (IANA registry).
    public static let tryAgainLater = Self(rawValue: 1013)

    /// Whether this code may appear in a Close frame on the wire (RFC 6455 §7.4.1–7.4.2 and the IANA
    /// registry): 1000–1003, 1007–1014 and 3000–4999. 1004–1006, 1015 and everything else are not.
    public var isValidOnTheWire: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    public var description: String { String(rawValue) }
}
