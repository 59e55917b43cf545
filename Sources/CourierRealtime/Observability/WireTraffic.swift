import Courier

/// The payload bytes a connection with permessage-deflate (RFC 7692) put on the wire and read
/// from it, for its complete data messages: the frames' payloads as sent (compressed when the
/// message's first frame has RSV1 set), without frame headers. Updated by the connection, read by
/// the client when it reports.
package final class WireTraffic: Sendable {
    private let counts = Locked((sent: 0, received: 0))

    package init() {}

    /// Payload bytes of the data frames written.
    package var sent: Int { counts.current.sent }
    /// Payload bytes of the data frames of every message received.
    package var received: Int { counts.current.received }

    func addSent(_ bytes: Int) { counts.withLock { $0.sent += bytes } }
    func addReceived(_ bytes: Int) { counts.withLock { $0.received += bytes } }
}
