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
    /// The longest silence between received bytes after the head, in seconds with any fraction
    /// (0.5 s, 1.5 s); 60 s by default. Exceeding it ends the body with
    /// ``NetworkError/timedOut(_:)`` (a `URLError(.timedOut)` saying how long it waited).
    /// ``APIClient/stream(_:options:)`` enforces it with its own timer on the client's clock, the
    /// same on every transport: bytes of any kind (an SSE keep-alive comment too) restart it, and
    /// time the transfer spends paused because the consumer is behind never counts. The transport's
    /// own idle limit is set to the next whole second plus one, as a backstop: FoundationNetworking
    /// counts whole seconds and libcurl averages over a window, so neither can be exact.
    public var idleTimeout: Duration
    /// The longest the whole call may take, head and body together; `nil` (the default) for no
    /// limit. Exceeding it ends the body with ``NetworkError/timedOut(_:)``.
    public var maxDuration: Duration?
    /// The stream stays open for as long as its consumer reads (an event feed, a long poll, an
    /// endless NDJSON stream), so it goes out outside the connection pool of the transport's
    /// other calls; `false` by default, `true` for `ServerSentEvents` feeds (CourierTransfers).
    ///
    /// Over HTTP/1.1 each open stream holds a connection for its whole life, and a pool allows a
    /// few per host (`httpMaximumConnectionsPerHost`: 4 to 6). In one pool, that many open feeds
    /// made every other call to their host wait for a connection until its deadline (measured:
    /// a plain `GET` beside 6 open feeds timed out). `URLSessionTransport` sends each connection
    /// of a long-lived stream through a session of its own (on the same configuration) and
    /// `CurlTransport` through a second pool, made on first use, with no per-host limit: the
    /// other calls keep the whole first pool. A transport of your own should do the same, or
    /// document that it does not.
    public var isLongLived = false
    /// The consumer reads the body continuously, as fast as it can and never waiting for anything
    /// else, on a thread of its own that no URLSession call can hold (a download, until its sink
    /// takes the chunks on the delegate queue, reads on `DedicatedThreadExecutor.downloadReaders`):
    /// where the transport cannot pause the
    /// transfer but can hold the hand-over of received chunks (URLSession on Linux,
    /// ``TransportCapabilities/boundsDelegateQueue``), a full buffer holds the transfer until the
    /// consumer took a chunk instead of failing with ``NetworkError/streamBufferOverflow(limit:)``.
    /// The bound a transport holds at is ``pausingBufferLimit`` when set; a hold that lasts over
    /// 100 ms (a disk that stalls, a machine starved of CPU) is given up until the consumer drained
    /// the buffer to half, the buffer growing meanwhile up to ``bufferLimit``, past which the body
    /// fails with the overflow. Holding stops
    /// every URLSession of the process there, so a consumer the app controls (which may stop
    /// reading) never sets it, and neither does one read on the cooperative pool: while every pool
    /// thread waits in a URLSession call for the held queue, such a consumer cannot run and each
    /// hold stalls all sessions for its 100 ms (measured: parallel tests timed out). `false` by
    /// default.
    package var drainsContinuously = false
    /// The bound a transport that can pause the transfer pauses at instead of ``bufferLimit``, in
    /// bytes; `nil` (the default) for ``bufferLimit`` itself. A consumer that keeps up (a download
    /// writing its file) needs a large buffer only where the transport cannot pause, to absorb a
    /// slow write without an overflow; where it can pause, a small one holds the same transfer at
    /// a fraction of the memory (measured: a 16 MiB buffer over CourierCurl filled in the first
    /// 100 ms of a 1 GiB download and made most of its peak RSS).
    package var pausingBufferLimit: Int?
    /// Where the transport cannot pause the transfer (URLSession on Linux), an overflow still
    /// hands the consumer the bytes received up to the bound before it fails with
    /// ``NetworkError/streamBufferOverflow(limit:)``, instead of dropping them. For a consumer
    /// that resumes from what it read (an event stream reconnecting with `Last-Event-ID`): without
    /// it, one that reads slower than the network lost every buffer and never progressed.
    /// `false` by default.
    package var deliversBufferedBeforeOverflow = false
    /// The caller measures ``idleTimeout`` itself (`APIClient` does, exactly, with its own timer):
    /// a transport whose own idle limit cannot measure gaps between bytes leaves it off instead
    /// of keeping it as a backstop. libcurl's low-speed limit averages over a few seconds, so a
    /// stream kept alive by small heartbeats (`:` and a line end every 4 s, idle timeout 5 s)
    /// read as below 1 byte per second and was failed as idle although bytes kept coming.
    /// `false` by default.
    package var idleTimedByCaller = false

    /// The bound to use for a transport that can (`pauses`) or cannot pause the transfer.
    package func bufferLimit(pausing pauses: Bool) -> Int {
        guard pauses, let pausingBufferLimit else { return bufferLimit }
        return max(1, min(bufferLimit, pausingBufferLimit))
    }

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
