import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A ``Transport`` backed by one long-lived `URLSession`.
///
/// Create one per client and keep it: a session owns the connection pool, so a session per request
/// throws away keep-alive and TLS resumption. By default the session uses an `.ephemeral`
/// configuration with `urlCache = nil` (Courier does HTTP caching itself — on Linux `URLCache`
/// stores nothing) and the configuration's own cookie storage, so no cookie of this client ever
/// reaches `HTTPCookieStorage.shared` or another client.
///
/// Cancelling the calling task cancels the underlying `URLSessionTask` (surfacing as
/// `URLError(.cancelled)`). Total deadlines are not delegated to URLSession — on Linux
/// `timeoutIntervalForResource` is ignored — the client enforces them (see ``EndpointPolicy/deadline``).
public final class URLSessionTransport: Transport {
    /// The session every request goes through.
    public let session: URLSession

    /// Creates a transport with a fresh session.
    ///
    /// - Parameter configuration: The session configuration; defaults to ``defaultConfiguration()``.
    ///
    /// The session gets Courier's delegate: URLSession follows no redirect (the client's redirect
    /// step does, RFC 9110 §15.4, keeping credentials on their origin) and answers every HTTP
    /// authentication challenge without a credential, so a 401 comes back as a response at once.
    public init(configuration: URLSessionConfiguration = URLSessionTransport.defaultConfiguration()) {
        self.session = URLSession(configuration: configuration, delegate: TransportSessionDelegate(), delegateQueue: nil)
    }

    /// Wraps an existing session (for example one whose configuration installs a `URLProtocol` stub).
    /// Its delegate is the caller's: when it lets URLSession follow redirects, the client's redirect
    /// step never sees them, so the delegate must keep credentials on their origin itself; and on
    /// Linux a delegate that does not answer authentication challenges leaves a 401 with a `Basic`
    /// challenge hanging until the deadline.
    public init(session: URLSession) {
        self.session = session
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// The configuration Courier uses unless told otherwise: `.ephemeral`, `urlCache = nil`,
    /// `requestCachePolicy = .reloadIgnoringLocalCacheData`, cookies accepted into the
    /// configuration's private storage, 60 s idle timeout per request.
    public static func defaultConfiguration() -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpCookieAcceptPolicy = .always
        configuration.httpShouldSetCookies = true
        configuration.timeoutIntervalForRequest = 60
        return configuration
    }

    /// The cookie store private to this transport's session, if the configuration has one.
    public var cookieStorage: HTTPCookieStorage? { session.configuration.httpCookieStorage }

    /// Sends `request` with `URLSession.data(for:)`.
    ///
    /// A 3xx is returned as is (the client's redirect step follows it) when the session has
    /// Courier's delegate.
    ///
    /// - Throws: `URLError` for network failures, including `.cancelled` when the calling task is
    ///   cancelled; `URLError(.badServerResponse)` when the response is not HTTP.
    public func send(_ request: URLRequest) async throws -> HTTPResponse {
        try Task.checkCancellation()
        #if canImport(Darwin)
        // Apple platforms deliver URLSessionTaskMetrics to a per-task delegate; install one only
        // when an interceptor measures this call (see TaskTimingsReporter). Linux never delivers them.
        let (data, response) = try await session.data(for: request, delegate: TaskMetricsDelegate.forCurrentCall())
        #else
        let request = Self.onLinuxWire(request)
        if let delegate = session.delegate as? TransportSessionDelegate {
            // Courier's own session: the delegate collects the response, so a 401 whose challenge
            // it refused still comes back (see TransportSessionDelegate).
            if Self.needsFreshConnection(request) {
                let (oneShot, fresh) = freshSession()
                defer { oneShot.finishTasksAndInvalidate() }
                return try await fresh.run(await TaskControl.dataTask(in: oneShot, with: request))
            }
            return try await delegate.run(await TaskControl.dataTask(in: session, with: request))
        }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch let error as URLError {
            throw Self.linuxFailure(error)
        }
        #endif
        guard let http = response as? HTTPURLResponse else {
            throw URLError(.badServerResponse)
        }
        return HTTPResponse(http, body: data)
    }

    /// Sends `request` as a data task whose body is handed over chunk by chunk as it arrives
    /// (see ``Transport/stream(_:options:)``). `options.idleTimeout` becomes the request's
    /// `timeoutInterval` (URLSession's idle timeout on every platform).
    ///
    /// On Apple platforms a consumer that falls `options.bufferLimit` bytes behind suspends the
    /// task until it catches up; on Linux, where suspending re-sends the request, it gets
    /// ``NetworkError/streamBufferOverflow(limit:)`` instead. A session created with
    /// ``init(session:)`` whose delegate is not Courier's falls back to the buffered ``send(_:)``.
    ///
    /// - Throws: As ``send(_:)``, until the head arrived.
    public func stream(_ request: URLRequest, options: StreamingOptions) async throws -> HTTPResponse {
        try await stream(request, options: options, taskDelegate: nil)
    }

    /// ``stream(_:options:)`` with a per-task delegate on Apple platforms (pinning answers the
    /// server-trust challenge there; the body still flows through the session delegate, which
    /// URLSession asks for every method the task delegate does not implement). Ignored on Linux,
    /// where per-task delegates are never called.
    package func stream(
        _ request: URLRequest, options: StreamingOptions, taskDelegate: (any URLSessionTaskDelegate)?
    ) async throws -> HTTPResponse {
        try Task.checkCancellation()
        guard let delegate = session.delegate as? TransportSessionDelegate else {
            var response = try await send(request)
            response.streamedBody = HTTPBody(response.body)
            response.body = Data()
            return response
        }
        var request = request
        // Courier's own idle timer (APIClient.stream) is exact; the session's, in whole seconds on
        // Linux, is only a later backstop for callers of the transport itself.
        request.timeoutInterval = TimeInterval(IdleTimer.backstop(for: options.idleTimeout).components.seconds)
        #if canImport(FoundationNetworking)
        request = Self.onLinuxWire(request)
        if Self.needsFreshConnection(request) {
            let (oneShot, fresh) = freshSession()
            defer { oneShot.finishTasksAndInvalidate() }  // the task runs on until its body ends
            return try await fresh.stream(
                await TaskControl.dataTask(in: oneShot, with: request), limit: options.bufferLimit)
        }
        #endif
        let task = await TaskControl.dataTask(in: session, with: request)
        #if canImport(Darwin)
        if let taskDelegate { task.delegate = taskDelegate }
        #endif
        return try await delegate.stream(task, limit: options.bufferLimit)
    }

    #if canImport(FoundationNetworking)
    /// Whether `request` must go out on a connection of its own on Linux.
    ///
    /// libcurl under FoundationNetworking repeats a request whose reused, kept-alive connection
    /// died after the request went out and before any answer, and FoundationNetworking tells
    /// libcurl the body was rewound when it was not: measured, the copy of a `Data` or stream
    /// body arrived with its headers and no body bytes (or an empty chunked body), and a bodiless
    /// `POST` arrived twice. No per-request option turns the repeat off, but libcurl repeats only
    /// on a reused connection. So a request with a body, and
    /// every request that may not be repeated (``TransportResendRule``, e.g. a bodiless `POST`),
    /// goes through a one-request session, whose connection is new: sent at most once, never
    /// empty or cut; a lost connection surfaces as `URLError(.networkConnectionLost)`. Bodiless
    /// idempotent requests (`GET`, `HEAD`, `DELETE`) keep the shared pool: repeating them is safe.
    static func needsFreshConnection(_ request: URLRequest) -> Bool {
        request.httpBody != nil || request.httpBodyStream != nil || !TransportResendRule.allowsResend(request)
    }

    /// `request` as URLSession on Linux can send it: a body stream always goes chunked there, so
    /// a `Content-Length` Courier set for a stream of known length is removed (RFC 9112 §6.3 forbids
    /// both). Servers that require a length (411) need `CurlTransport` or a `Data` body on Linux.
    static func onLinuxWire(_ request: URLRequest) -> URLRequest {
        guard request.httpBodyStream != nil, request.value(forHTTPHeaderField: "Content-Length") != nil else {
            return request
        }
        var request = request
        request.setValue(nil, forHTTPHeaderField: "Content-Length")
        return request
    }

    /// A session for one request: this transport's configuration (cookie storage included) and
    /// its own Courier delegate, so its connection pool starts empty.
    private func freshSession() -> (URLSession, TransportSessionDelegate) {
        let delegate = TransportSessionDelegate()
        return (URLSession(configuration: session.configuration, delegate: delegate, delegateQueue: nil), delegate)
    }
    #endif

    #if canImport(FoundationNetworking)
    /// URLSession on Linux reports a connection that died mid-response as `URLError(.unknown)`
    /// (-1, the code it also uses for TLS failures) carrying libcurl's message: "transfer closed
    /// with N bytes remaining to read" (CURLE_PARTIAL_FILE) or "Recv failure: Connection reset by
    /// peer" (CURLE_RECV_ERROR). FoundationNetworking exposes no libcurl code, so these two message
    /// prefixes are the only signal; both become `.networkConnectionLost`, the code Apple
    /// platforms use for the same event, so retries and the UI treat it the same everywhere.
    static func connectionLostMidResponse(_ error: URLError) -> URLError? {
        guard error.code == .unknown else { return nil }
        let message = error.localizedDescription
        guard message.hasPrefix("transfer closed with") || message.hasPrefix("Recv failure") else { return nil }
        var userInfo = error.userInfo
        userInfo[NSUnderlyingErrorKey] = error as NSError
        return URLError(.networkConnectionLost, userInfo: userInfo)
    }

    /// URLSession on Linux reports every certificate failure as `URLError.unknown` (-1) with
    /// libcurl's message (measured with FoundationNetworking on libcurl 7.88 and OpenSSL 3.0: "SSL
    /// certificate problem: certificate has expired", "… is not yet valid", "… self-signed
    /// certificate", "… unable to get local issuer certificate", "SSL: no alternative certificate
    /// subject name matches target host name '…'"). These become the `serverCertificate…` code
    /// Apple platforms report for the same certificate (see ``CertificateFailure``), the original
    /// error kept as `NSUnderlyingErrorKey`.
    package static func certificateFailure(_ error: URLError) -> URLError? {
        guard error.code == .unknown, let code = CertificateFailure.code(forLibcurlMessage: error.localizedDescription)
        else { return nil }
        var userInfo = error.userInfo
        userInfo[NSUnderlyingErrorKey] = error as NSError
        return URLError(code, userInfo: userInfo)
    }

    /// `error` with the codes Apple platforms use for the same event where URLSession on Linux
    /// reports `URLError.unknown`: a connection lost mid-response, a refused certificate.
    package static func linuxFailure(_ error: URLError) -> URLError {
        connectionLostMidResponse(error) ?? certificateFailure(error) ?? error
    }
    #endif
}
