#if canImport(CCurl)
import CCurl
import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `Transport` on libcurl: what URLSession on Linux is built on, without the wrapper's cost,
/// and with what that wrapper lacks there — back-pressure on streamed bodies, certificate
/// pinning, phase timings, HTTP/2 with prior knowledge.
///
/// ```swift
/// let client = APIClient(environment: .production) { $0.transport = CurlTransport() }
/// ```
///
/// Create one per client and keep it, as with a `URLSession`: a transport owns one libcurl multi
/// handle — its connection pool (keep-alive, TLS session reuse, HTTP/2 multiplexing) — driven by
/// one thread that starts with the first request and waits for the sockets, plus a pool of
/// reusable easy handles and a cookie store of its own. The calling task starts its request
/// itself (on a kept-alive connection the request is sent before the task suspends) and then
/// waits without holding a thread; the response resumes it from the transport's thread. A caller
/// never waits for another thread's use of the engine: while the transport's thread reads
/// responses, or another call starts, its request is queued and sent by that thread. Long-lived
/// streams (`StreamingOptions.isLongLived`: Server-Sent Events feeds) run on a second multi
/// handle and thread, made on first use, with no per-host limit, so open feeds never hold the
/// connections the transport's other calls wait for.
///
/// It behaves like `URLSessionTransport` so that a client can switch in one line:
/// - every HTTP status comes back as a response; redirects are never followed by libcurl (the
///   client's redirect step follows them, keeping credentials on their origin, RFC 9110 §15.4);
///   a 401 with a challenge comes back at once;
/// - content codings are undone and header fields stay as received (`Content-Encoding`
///   included): a buffered request asks for `gzip, deflate` unless it names its own
///   `Accept-Encoding`, and Courier inflates the body (bounded by the client's body limit; also
///   when the request names only gzip, deflate or identity), so a coded stream cut before its
///   end is `NetworkError.undecodableResponse` (`corruptContent`), never a short body; a
///   buffered body in `br` or `zstd` (sent anyway, or asked for by the request) is decoded by
///   libcurl; a streamed body (`APIClient.stream`, downloads,
///   Server-Sent Events) asks for `gzip, deflate` unless the request names its own
///   `Accept-Encoding`, arrives compressed in the stream's buffer (within its `bufferLimit`) and
///   is inflated by the consumer's reads, at most 64 KiB of output per chunk, so a compression
///   bomb never outgrows the buffer; a streamed body in another coding (`br` sent anyway) ends
///   with `NetworkError.undecodableResponse` (`unsupportedCoding`), a broken one with
///   `corruptContent`;
/// - failures are the same `URLError` codes (see `URLError.curlCode` for libcurl's);
/// - cancelling the calling task aborts the transfer at once and closes its connection (an HTTP/2
///   stream is reset), surfacing as `URLError(.cancelled)`;
/// - cookies are kept per transport, never shared with another (``Configuration/httpShouldSetCookies``).
///
/// Phase timings (DNS, connect, TLS, first byte, total, byte counts, negotiated protocol) reach
/// `RequestContext.taskTimings` and the metrics and log events, which URLSession never delivers
/// on Linux. Pins in ``Configuration/pinning`` are enforced on Linux, where `PinningTransport`
/// must refuse pinned hosts.
public final class CurlTransport: Transport {
    /// How this transport sends requests.
    public let configuration: Configuration
    private let engine: Locked<CurlEngine>
    /// The pool of long-lived streams (`StreamingOptions.isLongLived`): a second engine with no
    /// per-host limit, made on first use, so open feeds never hold the connections `engine`
    /// allows per host.
    private let longLivedEngine = Locked<CurlEngine?>(nil)
    /// The cookie store new requests use, replaced by ``resetSession()``; `nil` when cookies are off.
    private let cookieShare: Locked<CurlCookieShare?>
    /// The cookie store new requests use: requests sent before a session reset keep the one they
    /// started with, so their answers cannot put cookies in the store that replaced it.
    var cookies: CurlCookieShare? { cookieShare.current }
    /// Runs after a call took the current engine and before it starts its transfer there
    /// (tests only: a session reset in that gap).
    private let beforeStart: (@Sendable () async -> Void)?
    /// Slots of buffered requests whose method is not idempotent: at most
    /// ``Configuration/httpMaximumConnectionsPerHost`` per origin at once (see ``send(_:)``).
    private let unrepeatable: PerOriginLimiter
    /// Creates a transport.
    ///
    /// - Parameter configuration: Timeouts, HTTP version, cookies, trust and pins; the defaults
    ///   match `URLSessionTransport.defaultConfiguration()`.
    public convenience init(configuration: Configuration = Configuration()) {
        self.init(configuration: configuration, beforeStart: nil)
    }

    /// Creates a transport that runs `beforeStart` between a call's choice of engine and the start
    /// of its transfer (tests only).
    package init(configuration: Configuration, beforeStart: (@Sendable () async -> Void)?) {
        self.beforeStart = beforeStart
        self.configuration = configuration
        let cookies = configuration.httpShouldSetCookies ? CurlCookieShare() : nil
        cookieShare = Locked(cookies)
        engine = Locked(CurlEngine(maximumConnectionsPerHost: configuration.httpMaximumConnectionsPerHost, cookies: cookies))
        unrepeatable = PerOriginLimiter(limit: configuration.httpMaximumConnectionsPerHost)
    }

    /// Creates a transport from the default configuration changed by `configure`.
    ///
    /// ```swift
    /// let h2c = CurlTransport { $0.httpVersion = .http2PriorKnowledge }
    /// ```
    public convenience init(_ configure: (inout Configuration) -> Void) {
        var configuration = Configuration()
        configure(&configuration)
        self.init(configuration: configuration)
    }

    deinit {
        // Like URLSession's finishTasksAndInvalidate: a body still streaming keeps the engine
        // thread until it ends; then the thread exits and the connections close.
        engine.current.retire()
        longLivedEngine.current?.retire()
    }

    /// Sends `request` and returns the complete response.
    ///
    /// - Throws: `URLError` for network failures, with the code URLSession uses for the same
    ///   event (`.cancelled` when the calling task is cancelled, `.timedOut` after the idle
    ///   timeout, `.cannotConnectToHost`, `.networkConnectionLost`…); `NetworkError.invalidRequest`
    ///   before anything is sent for a URL or header fields over 64 KiB (the limits
    ///   URLSessionTransport keeps too); `NetworkError.responseTooLarge` as soon as the decoded
    ///   body passes the call's `TransportReporter.maximumBodySize`.
    ///
    /// A request whose method is not idempotent (RFC 9110 §9.2.2: `POST`, `PATCH`…) waits in
    /// Courier for one of ``Configuration/httpMaximumConnectionsPerHost`` slots per origin rather
    /// than in libcurl's queue of transfers waiting for a connection: when calls ran out of time
    /// together, removing the ones on the wire let libcurl start queued ones before their own
    /// removal arrived, and their `POST`s reached the server after the callers had failed with
    /// `timedOut` (7 of 9 queued, measured). A call cancelled while it waits here sends nothing.
    public func send(_ request: URLRequest) async throws -> HTTPResponse {
        // The call's body limit is read here, on the sending task (a task-local).
        let delivery = CurlTransfer.Delivery.buffered(limit: TransportReporter.current?.maximumBodySize)
        guard !HTTPMethod(rawValue: request.httpMethod ?? "GET").isIdempotent else {
            return try await perform(request, delivery: delivery, idleTimeout: nil)
        }
        return try await unrepeatable.withSlot(for: request.url) {
            try await perform(request, delivery: delivery, idleTimeout: nil)
        }
    }

    /// Sends `request` and returns as soon as the response head has arrived, the body streaming
    /// through `HTTPResponse.body`.
    ///
    /// Back-pressure is real: once `options.bufferLimit` bytes wait for a slow consumer, the
    /// transfer is paused (libcurl stops reading the socket, so the server's sends stall in TCP
    /// flow control) and resumed when the consumer has drained half of it; memory stays bounded
    /// for any consumer speed. A paused transfer never counts as idle. `APIClient` enforces
    /// `options.idleTimeout` (the longest gap between received bytes) exactly with its own timer,
    /// so libcurl's low-speed limit is then off: it averages over a few seconds and took a stream
    /// kept alive by small heartbeats for idle. Called directly, the transport sets it one whole
    /// second after the idle timeout as a backstop. `options.maxDuration` (when set) also limits the whole transfer in libcurl.
    /// Cancelling the consumer's task or dropping its iterator aborts the transfer at once.
    ///
    /// - Throws: As ``send(_:)`` until the head arrived; later failures end the body with the
    ///   matching `NetworkError`.
    public func stream(_ request: URLRequest, options: StreamingOptions) async throws -> HTTPResponse {
        try await perform(
            request, delivery: .streamed(limit: options.bufferLimit(pausing: true)),
            idleTimeout: IdleTimer.backstop(for: options.idleTimeout), totalTimeout: options.maxDuration,
            limitsLowSpeed: !options.idleTimedByCaller, longLived: options.isLongLived)
    }

    /// The engine a call starts on: the long-lived streams' one (made on first use) or the
    /// transport's own.
    private func currentEngine(longLived: Bool) -> CurlEngine {
        guard longLived else { return engine.current }
        return longLivedEngine.withLock { current in
            if let current { return current }
            let made = CurlEngine(maximumConnectionsPerHost: 0, cookies: cookies)
            current = made
            return made
        }
    }

    private func perform(
        _ request: URLRequest, delivery: CurlTransfer.Delivery, idleTimeout: Duration?, totalTimeout: Duration? = nil,
        limitsLowSpeed: Bool = true, longLived: Bool = false
    ) async throws -> HTTPResponse {
        // A session reset may retire the engine this call took just before the call starts its
        // transfer; the transfer then never reached the network and goes to the engine that
        // replaced it. Each refusal comes from a different engine (one per reset), so the loop
        // ends once resets stop; an engine that refuses while still current has ended for good.
        var inflatesItself = Self.inflatesBuffered(request, delivery)
        var decodesContent = !inflatesItself
        var askedLibcurlToDecode = false
        var refusedBy: CurlEngine?  // held, so its address is not reused by a new engine
        while true {
            let current = currentEngine(longLived: longLived)
            if current === refusedBy { throw URLError(.networkConnectionLost) }
            if let beforeStart { await beforeStart() }
            do {
                let response = try await perform(
                    request, on: current, delivery: delivery, idleTimeout: idleTimeout, totalTimeout: totalTimeout,
                    limitsLowSpeed: limitsLowSpeed,
                    decodesContent: decodesContent, inflatesItself: inflatesItself)
                guard inflatesItself, case .buffered(let limit) = delivery else { return response }
                switch Self.inflation(of: response, for: request) {
                case .inflate:
                    return try await Self.inflated(response, limit: limit)
                case .asSent:
                    return response
                case .askLibcurlToDecode where !askedLibcurlToDecode:
                    askedLibcurlToDecode = true
                    inflatesItself = false
                    decodesContent = true
                case .askLibcurlToDecode:
                    return try await Self.inflated(response, limit: limit)  // unsupportedCoding
                }
            } catch is CurlEngine.Ended {
                refusedBy = current
            } catch let error as URLError where decodesContent && Self.asksAgainUndecoded(request, delivery, after: error) {
                decodesContent = false
            } catch let error as URLError where decodesContent && Self.asksAgainToInflate(request, delivery, after: error) {
                decodesContent = false
                inflatesItself = true
            }
        }
    }

    /// Whether a buffered body is received as sent and its gzip or deflate coding undone by
    /// Courier (``CurlStreamDecoding``, as a streamed body's is): a buffered request that names no
    /// `Accept-Encoding` of its own, or names only codings Courier inflates (`gzip`, `x-gzip`,
    /// `deflate`, `identity`). libcurl 7.88 hands over whatever it inflated when a gzip, deflate
    /// or br stream stops before its end (the connection closed, or a `Content-Length` framed
    /// only part of the stream) as a whole body, without an error; Courier's inflater ends such a
    /// body with ``ResponseCodingFailure/Reason/corruptContent``.
    static func inflatesBuffered(_ request: URLRequest, _ delivery: CurlTransfer.Delivery) -> Bool {
        guard case .buffered = delivery else { return false }
        guard let accepted = request.value(forHTTPHeaderField: "Accept-Encoding") else { return true }
        return accepted.split(separator: ",").allSatisfy { item in
            let coding = item.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
            let name = coding.trimmingCharacters(in: .whitespaces).lowercased()
            return name.isEmpty || name == "identity" || CurlStreamDecoding.decodedCodings.contains(name)
        }
    }

    /// What becomes of a buffered `response` received as sent (``inflatesBuffered(_:_:)``).
    enum Inflation: Equatable {
        /// Its codings are gzip and deflate (or none): Courier undoes them.
        case inflate
        /// An empty body, or a `GET` or `HEAD` in a coding nobody here decodes (`x-custom`): the
        /// bytes as sent, with their `Content-Encoding` (what ``asksAgainUndecoded(_:_:after:)`` gives).
        case asSent
        /// A `GET` or `HEAD` in a coding only libcurl decodes (`br`, `zstd`, sent although not
        /// asked for): asked once more with libcurl decoding.
        case askLibcurlToDecode
    }

    /// How a buffered `response` to `request`, received as sent, is decoded; a method other than
    /// `GET` and `HEAD` is never asked twice, and its coding Courier does not inflate ends with
    /// ``ResponseCodingFailure/Reason/unsupportedCoding``, as a streamed body's does.
    static func inflation(of response: HTTPResponse, for request: URLRequest) -> Inflation {
        // An empty body (a HEAD, a 204, a 304) has nothing to decode, whatever its fields say.
        guard !response.data.isEmpty else { return .asSent }
        let codings = CurlStreamDecoding.codings(response.headers)
        guard !codings.allSatisfy(CurlStreamDecoding.decodedCodings.contains) else { return .inflate }
        let method = (request.httpMethod ?? "GET").uppercased()
        guard method == "GET" || method == "HEAD" else { return .inflate }
        return codings.allSatisfy(CurlErrorMapping.decodedCodings.contains) ? .askLibcurlToDecode : .asSent
    }

    /// Whether a buffered `GET` or `HEAD` that failed because the response used a content coding
    /// libcurl cannot undo (`Content-Encoding: x-custom`) is asked once more without decoding.
    /// A response in an unknown coding is still an HTTP response: the caller (and the cache) then
    /// get its bytes as sent, with their `Content-Encoding`, as URLSession on Apple platforms and
    /// the curl tool without `--compressed` give them. libcurl decides whether to decode before
    /// the head arrives, so this costs a second request; only safe methods (RFC 9110 §9.2.1) may
    /// be asked twice, and a streamed call has handed its head over already: those keep the
    /// typed error (``ResponseCodingFailure/Reason/unsupportedCoding``).
    static func asksAgainUndecoded(_ request: URLRequest, _ delivery: CurlTransfer.Delivery, after error: URLError) -> Bool {
        guard case .buffered = delivery,
            error.userInfo[ResponseCodingFailure.reasonKey] as? ResponseCodingFailure.Reason == .unsupportedCoding
        else { return false }
        let method = (request.httpMethod ?? "GET").uppercased()
        return method == "GET" || method == "HEAD"
    }

    /// Whether a buffered `GET` or `HEAD` whose gzip or deflate body libcurl refused after the end
    /// of its first coded stream (a body of several gzip members, RFC 1952 §2.2, or bytes after
    /// the stream) is asked once more without decoding, to be inflated by Courier
    /// (``CurlStreamDecoding``, as a streamed body is): every member decoded, zero padding
    /// skipped, other bytes after a member ``ResponseCodingFailure/Reason/corruptContent``.
    /// libcurl 7.88 decodes one gzip member only and fails the transfer at any byte after it;
    /// it decides whether to decode before the head arrives, so this costs a second request. Other
    /// methods, and codings Courier does not inflate, keep the typed error (`corruptContent`).
    static func asksAgainToInflate(_ request: URLRequest, _ delivery: CurlTransfer.Delivery, after error: URLError) -> Bool {
        guard case .buffered = delivery, error.userInfo[CurlErrorMapping.inflatableKey] as? Bool == true else { return false }
        let method = (request.httpMethod ?? "GET").uppercased()
        return method == "GET" || method == "HEAD"
    }

    /// `response` (received without decoding) with its gzip and deflate codings undone by
    /// ``CurlStreamDecoding``, at most `limit` decoded bytes (``NetworkError/responseTooLarge(limit:)``
    /// beyond). A coding Courier does not inflate is ``ResponseCodingFailure/Reason/unsupportedCoding``.
    static func inflated(_ response: HTTPResponse, limit: Int?) async throws -> HTTPResponse {
        let codings = CurlStreamDecoding.codings(response.headers)
        guard !codings.isEmpty, let url = response.url else { return response }
        var decoded = Data()
        for try await chunk in CurlStreamDecoding.decoding(response.body, codings: codings, url: url) {
            if let limit, chunk.count > limit - decoded.count { throw NetworkError.responseTooLarge(limit: limit) }
            decoded.append(chunk)
        }
        var inflated = response
        inflated.body = MessageBody(decoded)
        return inflated
    }

    private func perform(
        _ request: URLRequest, on engine: CurlEngine, delivery: CurlTransfer.Delivery, idleTimeout: Duration?,
        totalTimeout: Duration?, limitsLowSpeed: Bool, decodesContent: Bool, inflatesItself: Bool
    ) async throws -> HTTPResponse {
        try Task.checkCancellation()
        guard let handle = engine.makeHandle(receiveBufferSize: delivery.receiveBufferSize), let url = request.url else {
            throw URLError(request.url == nil ? .badURL : .unknown)
        }
        let transfer = CurlTransfer(
            handle: handle, url: url, delivery: delivery, engine: engine, timings: TaskTimingsReporter.current,
            progress: TransferProgressReporter.current, started: RequestStartReporter.current)
        do {
            // The engine's own store: a handle is never attached to a store its engine does not
            // hold (a reset replaces both), and a call that took an engine before a reset stores
            // its cookies in that engine's store, never sent again.
            try CurlRequestOptions(configuration: configuration, cookies: engine.cookies)
                .apply(
                    request, to: transfer, idleTimeout: idleTimeout, totalTimeout: totalTimeout,
                    limitsLowSpeed: limitsLowSpeed, decodesContent: decodesContent, inflatesItself: inflatesItself)
        } catch {
            transfer.release()
            engine.recycle(handle)
            throw error
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                transfer.attach(continuation)
                engine.start(transfer)
            }
        } onCancel: {
            engine.submit(.cancel(transfer))
        }
    }
}

extension CurlTransport {
    /// How many of the current engine's transfers were started by another thread because their
    /// caller found the engine's lock busy (tests check that the queued path ran).
    package var queuedStarts: Int { engine.current.queuedStarts }

    /// Runs `body` holding the current engine's lock, then adds the starts queued meanwhile
    /// (tests only, from a thread outside the cooperative pool).
    package func holdingEngineLock(_ body: () -> Void) { engine.current.holdingLock(body) }
}

extension CurlTransport: SessionResettable {
    /// Forgets the account's transport-level state: deletes every cookie of this transport and
    /// makes later requests use new connections and a new cookie store (requests already running
    /// finish on the old ones, whose pool then closes; the cookies their answers set go to the
    /// old store, never sent again).
    public func resetSession() async {
        if let old = cookies {
            if let handle = curl_easy_init() {
                _ = ccurl_easy_setopt_pointer(handle, CURLOPT_SHARE, old.share)
                _ = ccurl_easy_setopt_string(handle, CURLOPT_COOKIELIST, "ALL")
                curl_easy_cleanup(handle)
            }
            // A new store: an answer to a request sent before this reset (a sign-in's late
            // Set-Cookie) must not bring the reset session back. Calls running on the old engine
            // keep the old store, which that engine holds until it is released.
            if let fresh = CurlCookieShare() { cookieShare.set(fresh) }
        }
        let fresh = CurlEngine(maximumConnectionsPerHost: configuration.httpMaximumConnectionsPerHost, cookies: cookies)
        let old = engine.withLock { current -> CurlEngine in
            defer { current = fresh }
            return current
        }
        old.retire()
        // The long-lived streams' engine is made anew on its next use.
        longLivedEngine.withLock { current -> CurlEngine? in
            defer { current = nil }
            return current
        }?.retire()
    }
}
#endif
