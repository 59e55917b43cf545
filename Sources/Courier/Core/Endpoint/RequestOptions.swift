import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Per-request tuning on top of the client's configuration: change the built `URLRequest`, check
/// the response before it is decoded, or decode/encode this one call differently (a legacy
/// endpoint with snake_case keys, a custom date format).
public struct RequestOptions: Sendable {
    /// Runs last on the built `URLRequest`, before the pipeline (e.g. set `allowsCellularAccess`,
    /// `networkServiceType`, a header computed at call time).
    public var modifyRequest: (@Sendable (inout URLRequest) -> Void)?
    /// Decoder for this call instead of the client's.
    public var decoder: JSONDecoder?
    /// Encoder for this call's JSON body instead of the client's.
    public var encoder: JSONEncoder?
    /// Called once per call, when its request really leaves for the network: the transport has a
    /// connection for it (``TransportReporter``) or a response arrived — e.g. to show a spinner
    /// only for real network work.
    ///
    /// It does not run for a cache hit (nor a stale-while-revalidate hit's background
    /// revalidation), for a call that fails before anything is sent (a policy refusal, a missing
    /// interceptor, an encoding error), or for an attempt that fails before any connection — an
    /// offline device (`URLError.notConnectedToInternet`), a host that does not resolve, a refused
    /// connection. If such an attempt is retried and the retry leaves, it runs then. At most once
    /// per call: later attempts and redirect hops do not run it again.
    ///
    /// When exactly, per transport: `CurlTransport` as libcurl is about to write the request on
    /// its connection; ``URLSessionTransport`` when the first request body bytes were sent or the
    /// response head arrived (URLSession announces no earlier moment, so a bodiless request runs
    /// it with its response head); any other transport when it calls
    /// ``TransportReporter/reportStart()``, at the latest when it returns a response.
    ///
    /// Runs on the transport's thread or the pipeline's task: keep it short and hop to the main
    /// actor yourself.
    public var onStart: (@Sendable () -> Void)?
    /// Inspects this call's response — status, header fields, body — after the client's
    /// validators and before it is decoded, and throws to fail the call: e.g. a header the app
    /// requires, or an error an API reports inside a 200. Runs only for statuses the endpoint
    /// accepts, once per call (not per attempt: it does not make the call retry). A
    /// ``NetworkError`` it throws reaches the caller as it is; any other error becomes
    /// ``NetworkError/decoding(_:)`` of kind ``DecodingFailure/Kind/rejectedByValidator``.
    public var checkResponse: (@Sendable (HTTPResponse) throws -> Void)?
    /// Whether this call follows redirects: all of them (``RedirectMode/follow``, the default),
    /// none (the 3xx is the response), or as a closure decides per hop (see ``RedirectMode``).
    public var redirects: RedirectMode

    /// Creates options; everything defaults to "use the client's".
    public init(
        modifyRequest: (@Sendable (inout URLRequest) -> Void)? = nil,
        decoder: JSONDecoder? = nil,
        encoder: JSONEncoder? = nil,
        onStart: (@Sendable () -> Void)? = nil,
        checkResponse: (@Sendable (HTTPResponse) throws -> Void)? = nil,
        redirects: RedirectMode = .follow
    ) {
        self.modifyRequest = modifyRequest
        self.decoder = decoder
        self.encoder = encoder
        self.onStart = onStart
        self.checkResponse = checkResponse
        self.redirects = redirects
    }

    /// Options that change nothing.
    public static let none = RequestOptions()
}
