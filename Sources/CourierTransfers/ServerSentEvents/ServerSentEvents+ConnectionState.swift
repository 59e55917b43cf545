import Courier

extension ServerSentEvents {
    /// Where a feed's connection stands (the `readyState` of an `EventSource`, plus the wait
    /// before the next attempt), as published by ``ServerSentEvents/states()``.
    public enum ConnectionState: Sendable, Hashable, CustomStringConvertible {
        /// Sending the request and waiting for the response head (also the state before the
        /// first iteration starts the feed).
        case connecting
        /// A `text/event-stream` response is streaming.
        case open
        /// The connection failed or ended; attempt `attempt` (1-based, failures in a row) starts
        /// after `delay`.
        case reconnecting(attempt: Int, delay: Duration)
        /// The feed ended and does not come back: the server answered 204, a status or media
        /// type that fails the connection, the attempts ran out, or the consumer stopped (its task
        /// was cancelled or it stopped iterating).
        case closed

        public var description: String {
            switch self {
            case .connecting: "connecting"
            case .open: "open"
            case .reconnecting(let attempt, let delay): "reconnecting in \(Self.seconds(delay)) (attempt \(attempt))"
            case .closed: "closed"
            }
        }

        /// `delay` in seconds with two decimals, e.g. `0.55 s`.
        private static func seconds(_ delay: Duration) -> String {
            let (seconds, attoseconds) = delay.components
            let hundredths = seconds * 100 + Int64((Double(attoseconds) / 1e16).rounded())
            let fraction = hundredths % 100
            return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction) s"
        }
    }
}
