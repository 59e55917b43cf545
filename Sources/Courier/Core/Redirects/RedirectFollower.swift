import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Courier's redirect step: the last step of the pipeline, between the innermost interceptor and
/// the transport. URLSession follows no redirect for Courier (see `TransportSessionDelegate`),
/// so the same rules apply on every platform and with every transport (RFC 9110 §15.4):
///
/// - **307 and 308** repeat the same method with the identical body bytes. A one-shot body
///   stream cannot be repeated: the call fails with ``NetworkError/invalidRequest(_:)`` instead
///   of sending anything else.
/// - **301 and 302** change `POST` (only `POST`) to `GET`; **303** changes every method except
///   `HEAD` to `GET`. A request changed to `GET` drops its body and every `Content-*` field.
///   `HEAD` stays `HEAD`.
/// - Other 3xx (300, 304, 305, 306), a 3xx without a usable `Location`, or one pointing to a
///   scheme other than http(s), are returned as they are.
/// - Credentials stay on their origin, and `https` → `http` is refused (``RedirectPolicy``).
/// - At most ``maxRedirects`` hops; one more fails with ``NetworkError/transport(_:)`` carrying
///   `URLError(.httpTooManyRedirects)` — the code URLSession and libcurl report for the same
///   event — whose description names the limit and the last hop (``tooManyRedirects(_:from:to:context:)``).
/// - The call's ``RedirectMode`` decides whether a hop that passed these rules is followed; a
///   redirect it does not follow is the call's response (``RequestContext/stoppedRedirect``).
///
/// Each hop is recorded in the call's context (``RequestContext/redirects``).
struct RedirectFollower: Sendable {
    /// The most redirects followed for one send (browsers and URLSession use 20).
    static let maxRedirects = 20

    let transport: any Transport
    /// What a cross-origin hop keeps (``RedirectPolicy`` and the client's secret header names).
    var rules: RedirectRules = .default
    /// The most body bytes a buffered response may hold, passed to the transport in its
    /// ``TransportReporter`` (streamed calls have their ``StreamingOptions`` instead).
    var maximumBodySize: Int?

    /// Sends `request`, attaching the context's body stream, and follows redirects.
    func send(_ request: URLRequest, context: RequestContext) async throws -> HTTPResponse {
        var request = request
        var stream = context.bodyStream
        var hops = 0
        while true {
            var wire = request
            let body = try stream?.makeStream()
            if let body { wire.httpBodyStream = body }  // (assigning nil would drop an in-memory httpBody)
            let response: HTTPResponse
            // URLSession on Linux reads a body stream on the one queue all its sessions share, and
            // queues the task's cancellation behind that read: a cancelled call (or a passed
            // deadline) ends a read waiting for the body's producer directly.
            let exchange = { [wire, transport] () async throws -> HTTPResponse in
                let response: HTTPResponse
                if let options = context.streaming {
                    response = try await transport.stream(wire, options: options)
                } else {
                    response = try await transport.send(wire)
                }
                // Dropped (a streamed body's transfer is cancelled) when its framing is invalid.
                try ResponseFraming.check(response, to: wire)
                return response
            }
            let limit = context.streaming == nil ? maximumBodySize : nil
            do {
                if let interruption = body?.bodyInterruption {
                    response = try await withTaskCancellationHandler {
                        try await Self.reporting(to: context, sending: wire, maximumBodySize: limit, exchange)
                    } onCancel: {
                        interruption.interrupt()
                    }
                } else {
                    // No body stream to interrupt: no cancellation handler (and no task hop for it).
                    response = try await Self.reporting(to: context, sending: wire, maximumBodySize: limit, exchange)
                }
            } catch {
                // The transport stopped because the body could not be read to its end (a file
                // that shrank, a failing producer): that is the call's error, not the transport's.
                // Only Courier's own streams are asked: `streamError` of an `InputStream` subclass
                // that does not override it traps in swift-corelibs-foundation.
                if let failure = (body as? PullInputStream)?.sourceFailure {
                    // Interrupted because the call was cancelled (or its deadline passed).
                    if failure is CancellationError { throw CancellationError() }
                    throw Self.bodyFailure(failure, of: request)
                }
                throw error
            }
            // A call that follows no redirect gets any 3xx as its response, also one whose
            // `Location` could not be followed (an https → http hop, an unusable URL): the
            // OAuth loopback callback (`http://127.0.0.1:…`, RFC 8252 §7.3) is read this way.
            if case .doNotFollow = context.redirectMode { return response }
            // A redirect's body is never read: dropping a streamed one cancels its transfer.
            guard let next = try Self.nextRequest(after: response, to: request, rules: rules) else { return response }
            // A pinned host is reached only through a transport that enforces its pins.
            try context.unenforcedPins?.refuseUnenforced(next.url)
            hops += 1
            guard try await Self.mayFollow(response, from: request, to: next, hop: hops, context: context) else {
                return response
            }
            guard hops <= Self.maxRedirects else {
                throw Self.tooManyRedirects(response, from: request, to: next, context: context)
            }
            if next.httpMethod != request.httpMethod {
                stream = nil
            } else if let current = stream, current.iterationBehavior == .single {
                throw NetworkError.invalidRequest(
                    "\(request.httpMethod ?? "GET") \(request.url?.path ?? "") was redirected with \(response.statusCode), "
                        + "which repeats the request body, but the body is a one-shot stream that cannot be sent again")
            }
            context.recordRedirect(RedirectRecord(statusCode: response.statusCode, from: request.url, to: next.url))
            context.emit(.redirected(statusCode: response.statusCode, location: next.url.map(context.redactedForEvents) ?? ""))
            request = next
        }
    }

    /// Whether the call's ``RedirectMode`` follows this hop.
    ///
    /// - Throws: ``NetworkError/redirectRefused(_:)`` when the app's closure fails the call.
    private static func mayFollow(
        _ response: HTTPResponse, from request: URLRequest, to next: URLRequest, hop: Int, context: RequestContext
    ) async throws -> Bool {
        switch context.redirectMode {
        case .follow: return true
        case .doNotFollow: return false
        case .decide(let decide):
            guard let from = response.url ?? request.url, let to = next.url else { return false }
            let hop = RedirectHop(
                from: from, to: to, statusCode: response.statusCode, number: hop, method: next.httpMethod ?? "GET",
                isCrossOrigin: !RedirectSafety.isSameOrigin(from, to), response: response)
            switch await decide(hop) {
            case .follow: return true
            case .stop: return false
            case .fail(let reason): throw NetworkError.redirectRefused(RedirectRefusal(hop: hop, reason: reason))
            }
        }
    }

    /// Runs `send` with the call's ``TransportReporter`` bound: its progress reporter (an
    /// upload's, and the deadline's: see ``progressReporter(for:context:)``) and a timings reporter
    /// into the context, so only this call's own sends report into them — not a token refresh made
    /// on the side.
    private static func reporting(
        to context: RequestContext, sending request: URLRequest, maximumBodySize: Int?,
        _ send: () async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
        let reporting = TransportReporter(
            progress: progressReporter(for: request, context: context), timings: TaskTimingsReporter(context: context),
            start: context.awaitsStart ? RequestStartReporter(context: context) : nil,
            connectivity: ConnectivityWaitReporter(context: context), maximumBodySize: maximumBodySize)
        return try await TransportReporter.$bound.withValue(reporting) { try await send() }
    }

    /// The smallest in-memory body whose progress postpones the call's deadline (64 KiB). A smaller
    /// one fits in the socket's buffers and leaves at once, so its progress could not move the
    /// deadline noticeably, and such calls (most JSON requests) get no per-call reporter.
    static let progressTrackedBodySize = 64 << 10

    /// Where the transport reports this send's bytes: the call's own reporter (an upload's
    /// progress), wrapped — for a request whose body is a stream (file, multipart, `BodyStream`) or
    /// at least ``progressTrackedBodySize`` bytes in memory — so that every report of body bytes
    /// sent also postpones the call's deadline (``RequestContext/noteBodyProgress()``). The one
    /// place both transports' upload progress reaches the deadline: they report it here through
    /// ``TransportReporter/didSend(_:of:)``, which they do whenever a progress reporter is bound.
    static func progressReporter(for request: URLRequest, context: RequestContext) -> TransferProgressReporter? {
        let upstream = context.transferProgress
        let hasLargeBody =
            request.httpBodyStream != nil || (request.httpBody?.count ?? 0) >= progressTrackedBodySize
        guard hasLargeBody else { return upstream }
        return TransferProgressReporter(
            sent: { [weak context] sent, expected in
                context?.noteBodyProgress()
                upstream?.didSend(sent, of: expected)
            },
            received: { received, expected in upstream?.didReceive(received, of: expected) })
    }

    /// The error of a call redirected once more after ``maxRedirects`` hops: `transport` with
    /// `URLError(.httpTooManyRedirects)`, the URL that sent the last redirect as its failing URL,
    /// and a description naming the limit, the status and both ends of that hop (redacted as the
    /// call's events are: the description reaches logs).
    static func tooManyRedirects(
        _ response: HTTPResponse, from request: URLRequest, to next: URLRequest, context: RequestContext
    ) -> NetworkError {
        let from = response.url ?? request.url
        let describe = { (url: URL?) in url.map(context.redactedForEvents) ?? "(no URL)" }
        var userInfo: [String: Any] = [
            NSLocalizedDescriptionKey:
                "too many redirects: stopped after \(maxRedirects), the most Courier follows for one call; "
                + "the last, \(response.statusCode) from \(describe(from)), pointed to \(describe(next.url))"
        ]
        if let from { userInfo[NSURLErrorFailingURLErrorKey] = from }
        return .transport(URLError(.httpTooManyRedirects, userInfo: userInfo))
    }

    /// The error of a call whose request body failed while it was being sent.
    static func bodyFailure(_ failure: any Error, of request: URLRequest) -> NetworkError {
        .invalidRequest(
            "the body of \(request.httpMethod ?? "GET") \(request.url?.path ?? "") could not be read to its end, "
                + "so the request was not completed: \(failure)")
    }

    /// The request a redirect response asks for, or `nil` when `response` is not one to follow.
    ///
    /// - Throws: `URLError(.appTransportSecurityRequiresSecureConnection)` for an `https` → `http`
    ///   redirect `rules` refuse.
    static func nextRequest(
        after response: HTTPResponse, to request: URLRequest, rules: RedirectRules = .default
    ) throws -> URLRequest? {
        guard [301, 302, 303, 307, 308].contains(response.statusCode),
            let location = response.headers["Location"]?.trimmingCharacters(in: .whitespaces), !location.isEmpty,
            let base = response.url ?? request.url,
            let target = URL(string: location, relativeTo: base)?.absoluteURL,
            let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else { return nil }

        var next = request
        next.url = target
        let method = (request.httpMethod ?? "GET").uppercased()
        let becomesGET: Bool
        switch response.statusCode {
        case 303: becomesGET = method != "HEAD" && method != "GET"
        case 301, 302: becomesGET = method == "POST"
        default: becomesGET = false
        }
        if becomesGET {
            next.httpMethod = "GET"
            next.httpBody = nil
            next.httpBodyStream = nil
            for name in (request.allHTTPHeaderFields ?? [:]).keys where name.lowercased().hasPrefix("content-") {
                next.setValue(nil, forHTTPHeaderField: name)
            }
        }
        return try RedirectSafety.sanitize(next, from: request.url, rules: rules)
    }
}

/// One redirect the call followed.
public struct RedirectRecord: Sendable, Hashable {
    /// The redirect's status code (301, 302, 303, 307 or 308).
    public let statusCode: Int
    /// The URL that answered with the redirect.
    public let from: URL?
    /// The URL requested next.
    public let to: URL?
}

extension RequestContext {
    /// The redirects this call followed, in order (empty when none); each attempt's hops are
    /// appended.
    public var redirects: [RedirectRecord] { self[RedirectsKey.self] ?? [] }

    func recordRedirect(_ record: RedirectRecord) {
        update(RedirectsKey.self, default: []) { $0.append(record) }
    }
}

private enum RedirectsKey: RequestContextKey {
    typealias Value = [RedirectRecord]
}
