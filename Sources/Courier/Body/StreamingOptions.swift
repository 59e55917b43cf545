import Foundation

/// How a streamed call (``APIClient/stream(_:options:)``) holds and times its body.
///
/// A streamed call's time limits are split: the endpoint's ``EndpointPolicy/deadline`` covers
/// everything up to the response head (auth, retries, redirects included); after that
/// ``idleTimeout`` bounds each gap between chunks, and an endless feed has no total limit unless
/// ``maxDuration`` sets one.
public struct StreamingOptions: Sendable, Hashable {
    /// The most body bytes held between the network and a consumer that falls behind, in bytes;
    /// 1 MiB by default. Where the transport can pause the transfer (URLSession on Apple
    /// platforms, CourierCurl) it pauses at this bound; where it cannot (URLSession on Linux) a
    /// consumer that falls this far behind gets ``NetworkError/streamBufferOverflow(limit:)``.
    public var bufferLimit: Int
    /// The longest wait for the next chunk; 60 s by default. Exceeding it ends the body with
    /// ``NetworkError/timedOut(_:)``. URLSession applies it as the request's `timeoutInterval`
    /// (an idle timeout on every platform).
    public var idleTimeout: Duration
    /// The longest the whole call may take, head and body together; `nil` (the default) for no
    /// limit. Exceeding it ends the body with ``NetworkError/timedOut(_:)``.
    public var maxDuration: Duration?

    /// Creates options.
    ///
    /// - Parameters:
    ///   - bufferLimit: Bytes held for a slow consumer (at least 1; default 1 MiB).
    ///   - idleTimeout: The longest gap between chunks (default 60 s).
    ///   - maxDuration: The total limit, `nil` for none.
    public init(bufferLimit: Int = 1 << 20, idleTimeout: Duration = .seconds(60), maxDuration: Duration? = nil) {
        self.bufferLimit = max(1, bufferLimit)
        self.idleTimeout = idleTimeout
        self.maxDuration = maxDuration
    }
}
