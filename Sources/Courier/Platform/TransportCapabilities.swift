import Foundation

/// What the URLSession underneath ``URLSessionTransport`` can do, as data.
///
/// One transport implementation runs on Apple platforms and on Linux (FoundationNetworking,
/// built on libcurl); where the two differ in what they can do, the transport asks this value
/// instead of compiling one branch per platform. The value for the running platform is chosen in
/// one place (``current``); tests inject the other platform's value to run its branch on Linux.
/// See <doc:PlatformDifferences> for the measurements behind each field.
package struct TransportCapabilities: Sendable, Hashable {
    /// How a streamed request body is handed to URLSession.
    package enum BodyStreamStyle: Sendable, Hashable {
        /// An `InputStream` subclass whose `read` pulls from the source (FoundationNetworking only
        /// calls `open`, `hasBytesAvailable`, `read` and `close`; it has no bound stream pairs).
        case pulled
        /// A bound stream pair (`Stream.getBoundStreams`) whose output end a thread of its own
        /// fills (Apple: URLSession does not read `InputStream` subclasses).
        case boundPair
    }

    /// `URLSessionTask.suspend()` pauses a data task and `resume()` continues it on the same
    /// transfer, so a slow stream consumer can hold the producer back. `false` on Linux, where
    /// resuming a suspended task sends its request again: a full buffer fails the body instead.
    package var canSuspendTasks: Bool
    /// URLSession delivers `URLSessionTaskMetrics` (`urlSession(_:task:didFinishCollecting:)`),
    /// which become the call's ``TaskTimings``. Never delivered on Linux.
    package var deliversTaskMetrics: Bool
    /// A streamed request body goes out with the request's `Content-Length`. URLSession on Linux
    /// sends every stream chunked, so the field is removed there (RFC 9112 §6.3 forbids both).
    package var sendsStreamLength: Bool
    /// URLSession raises server-trust challenges, so certificate pins can be checked before a
    /// request byte is sent. Linux raises none (no custom trust at all).
    package var raisesServerTrustChallenges: Bool
    /// The HTTP layer repeats a request whose reused connection died before any answer (libcurl
    /// under FoundationNetworking, which also loses the body of the repeat): requests with a body
    /// and requests that may not be repeated go through a connection of their own.
    package var resendsOnReusedConnections: Bool
    /// An HTTP authentication challenge (`Basic`, `Digest`) is raised once the whole 401 arrived
    /// and every disposition but a credential fails the task (Linux): the delegate hands the 401
    /// over itself. On Apple platforms default handling returns the 401 with its body.
    package var challengeEndsTask: Bool
    /// How streamed request bodies are handed to URLSession.
    package var bodyStreamStyle: BodyStreamStyle
    /// URLSession raises client-certificate challenges (`NSURLAuthenticationMethodClientCertificate`)
    /// and can answer them with an identity, so mutual TLS works. `false` on Linux: measured,
    /// FoundationNetworking raises no such challenge (nor a server-trust one), and `SecIdentity`
    /// does not exist there; a request to a host with a ``ClientIdentity`` fails with
    /// `URLError(.clientCertificateRequired)` before it is sent.
    package var presentsClientCertificates: Bool
    /// URLSession tells the delegate that a task waits for the network
    /// (`urlSession(_:taskIsWaitingForConnectivity:)`, when the session's configuration has
    /// `waitsForConnectivity`), which becomes the call's connectivity-wait events. `false` on
    /// Linux: FoundationNetworking's delegate protocols have no such callback; there the waits come
    /// from ``RetryPolicy/waitsForConnectivity`` and the connectivity monitor only.
    package var reportsWaitingForConnectivity: Bool
    /// URLSession cannot pause a task, but it hands every received chunk to the session's delegate
    /// queue from the thread that reads the socket (FoundationNetworking: an `addOperation` from
    /// libcurl's write callback, never waited for). Courier's sessions then get a
    /// ``BoundedDelegateQueue``, whose hand-over waits while the delegate is behind: the chunks
    /// queued stay bounded, and a consumer that drains continuously can hold the transfer back
    /// instead of overflowing (``StreamingOptions/drainsContinuously``). `false` on Apple platforms, which pause
    /// with ``canSuspendTasks``.
    package var boundsDelegateQueue: Bool
    /// The most idle connections URLSession always keeps open for reuse, if it has such a floor:
    /// ``URLSessionTransport/defaultConfiguration()`` caps `httpMaximumConnectionsPerHost` to it, so
    /// a client that pauses between requests finds its connections still open. `nil` on Apple
    /// platforms (URLSession's own pool, default 6 per host on macOS, 4 on iOS). 4 on Linux:
    /// FoundationNetworking never sets libcurl's `CURLMOPT_MAXCONNECTS`, so libcurl keeps at most
    /// 4 idle connections per transfer in flight; measured at 16 requests in flight over 6
    /// connections per host, a client busy between requests opened 150-250 connections per 3000
    /// requests where 4 per host opened 4.
    package var idleConnectionFloor: Int?

    /// Creates a capabilities value; every field is spelled out (see the presets).
    package init(
        canSuspendTasks: Bool, deliversTaskMetrics: Bool, sendsStreamLength: Bool, raisesServerTrustChallenges: Bool,
        resendsOnReusedConnections: Bool, challengeEndsTask: Bool, bodyStreamStyle: BodyStreamStyle,
        presentsClientCertificates: Bool, reportsWaitingForConnectivity: Bool, boundsDelegateQueue: Bool,
        idleConnectionFloor: Int?
    ) {
        self.idleConnectionFloor = idleConnectionFloor
        self.presentsClientCertificates = presentsClientCertificates
        self.reportsWaitingForConnectivity = reportsWaitingForConnectivity
        self.boundsDelegateQueue = boundsDelegateQueue
        self.canSuspendTasks = canSuspendTasks
        self.deliversTaskMetrics = deliversTaskMetrics
        self.sendsStreamLength = sendsStreamLength
        self.raisesServerTrustChallenges = raisesServerTrustChallenges
        self.resendsOnReusedConnections = resendsOnReusedConnections
        self.challengeEndsTask = challengeEndsTask
        self.bodyStreamStyle = bodyStreamStyle
    }

    /// URLSession on iOS, macOS, tvOS and watchOS.
    package static let apple = TransportCapabilities(
        canSuspendTasks: true, deliversTaskMetrics: true, sendsStreamLength: true, raisesServerTrustChallenges: true,
        resendsOnReusedConnections: false, challengeEndsTask: false, bodyStreamStyle: .boundPair,
        presentsClientCertificates: true, reportsWaitingForConnectivity: true, boundsDelegateQueue: false,
        idleConnectionFloor: nil)

    /// URLSession from FoundationNetworking (Linux), measured with Swift 6.3.1 and libcurl 7.88.
    package static let foundationNetworking = TransportCapabilities(
        canSuspendTasks: false, deliversTaskMetrics: false, sendsStreamLength: false,
        raisesServerTrustChallenges: false, resendsOnReusedConnections: true, challengeEndsTask: true,
        bodyStreamStyle: .pulled, presentsClientCertificates: false, reportsWaitingForConnectivity: false,
        boundsDelegateQueue: true, idleConnectionFloor: 4)
}
