import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// The suite-wide leak guard of the observability integration tests.
///
/// Applied as a trait (`@Suite(.secretGuard)`), it wraps every test: the test's observed clients
/// register their capture logger, HAR recorder and metrics sink with the guard, and when the test
/// body ends the guard reads every captured line, every cURL command of every recorded request
/// and the HAR file, and records an issue for each known secret value found — and another when a
/// test logged nothing through it at all (a guard that watches nothing proves nothing).
///
/// Every secret value the tests send starts with `SECRET-`; specific values are checked too.
final class SecretGuard: Sendable {
    @TaskLocal static var current: SecretGuard?

    /// Secret values used by the tests; the prefix catches any of them, even partially redacted.
    static let knownSecrets = [
        "SECRET-", "SECRET-TOKEN", "SECRET-SID", "SECRET-PW", "SECRET-QUERY", "SECRET-KEY", "SECRET-REFRESH",
    ]

    private struct Watched: Sendable {
        var loggers: [CapturingNetworkLogger] = []
        var recorders: [HARRecorder] = []
        var sinks: [CapturingMetricsSink] = []
        var texts: [String] = []
    }

    private let watched = Locked(Watched())

    /// Watches a client's logger, HAR recorder and metrics sink.
    func watch(logger: CapturingNetworkLogger, har: HARRecorder, metrics: CapturingMetricsSink) {
        watched.withLock {
            $0.loggers.append(logger)
            $0.recorders.append(har)
            $0.sinks.append(metrics)
        }
    }

    /// Watches any other output a test produced (a cURL command, an error description).
    func watch(text: String) {
        watched.withLock { $0.texts.append(text) }
    }

    /// Every output watched: log lines, cURL of every recorded request, HAR JSON, metrics events.
    func outputs() throws -> [(source: String, text: String)] {
        let watched = self.watched.current
        var outputs: [(String, String)] = []
        for logger in watched.loggers { outputs += logger.lines.map { ("log", $0) } }
        for recorder in watched.recorders {
            outputs.append(("HAR", String(decoding: try recorder.jsonData(), as: UTF8.self)))
            outputs += recorder.exchanges.map { ("cURL", CURLCommand($0.request).text) }
        }
        for sink in watched.sinks { outputs += sink.events.map { ("metrics", String(describing: $0)) } }
        outputs += watched.texts.map { ("text", $0) }
        return outputs
    }

    /// Records an issue for every known secret found in any output, or when nothing was watched.
    func verify(sourceLocation: SourceLocation) {
        let watched = self.watched.current
        guard !watched.loggers.isEmpty, watched.loggers.contains(where: { !$0.entries.isEmpty }) else {
            Issue.record("the test logged nothing through the secret guard", sourceLocation: sourceLocation)
            return
        }
        do {
            for (source, text) in try outputs() {
                for secret in Self.knownSecrets where text.contains(secret) {
                    Issue.record("secret '\(secret)' leaked into \(source): \(text.prefix(400))", sourceLocation: sourceLocation)
                }
            }
        } catch {
            Issue.record("could not read the watched outputs: \(error)", sourceLocation: sourceLocation)
        }
    }
}

/// Runs each test of a suite under a fresh ``SecretGuard`` and verifies it afterwards.
struct SecretGuardTrait: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // The suite itself is scoped too (without a test case): guard only the test cases.
        guard testCase != nil else {
            try await function()
            return
        }
        let guardian = SecretGuard()
        try await SecretGuard.$current.withValue(guardian) { try await function() }
        guardian.verify(sourceLocation: test.sourceLocation)
    }
}

extension Trait where Self == SecretGuardTrait {
    /// Checks after every test that no known secret reached a log line, cURL command, HAR file or
    /// metrics event (see ``SecretGuard``).
    static var secretGuard: Self { Self() }
}

/// A reference-API client wired the way the guard needs: a capture logger at the most verbose
/// level, logging both per call (outermost) and per attempt (innermost, seeing the headers inner
/// interceptors add), a HAR recorder and a metrics sink — all registered with the current guard.
struct ObservedClient {
    let client: APIClient
    let namespace: String
    let logger = CapturingNetworkLogger(minimumLevel: .debug)
    let har = HARRecorder()
    let metrics = CapturingMetricsSink()

    /// - Parameters:
    ///   - inner: Interceptors between the metrics and the per-attempt logging interceptor
    ///     (a retry, an auth stand-in).
    ///   - transport: The transport; a fresh `TestTransport.make()` by default.
    init(
        namespace: String = TestServers.makeNamespace("obs"), inner: [any Interceptor] = [], transport: (any Transport)? = nil
    ) throws {
        let logger = self.logger
        let har = self.har
        let metrics = self.metrics
        self.namespace = namespace
        self.client = try TestServers.apiClient(namespace: namespace) { configuration in
            configuration.transport = transport ?? TestTransport.make()
            configuration.interceptors =
                [
                    RequestIDInterceptor(),
                    LoggingInterceptor(logger: logger, recorders: [har]),  // per call
                    MetricsInterceptor(sink: metrics),
                ] + inner + [
                    LoggingInterceptor(logger: logger)  // per attempt
                ]
        }.0
        SecretGuard.current?.watch(logger: logger, har: har, metrics: metrics)
    }
}

extension Request {
    /// The same request with body previews allowed (``LoggingPolicy/debugSafe``): the most a log
    /// may ever show, so the guard sees the worst case.
    var verboseLogging: Request { policy(policy.with(\.logging, .debugSafe)) }
}

extension ObservedClient {
    /// Retries once when the first attempt answers 503 (the integration tests' stand-in for a retry
    /// interceptor, so metrics can be checked for a known retry count).
    struct RetryOnceOn503: Interceptor {
        func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
            let first = try await next(request)
            return first.statusCode == 503 ? try await next(request) : first
        }
    }

    /// Adds a header on every attempt (a stand-in for the auth interceptor).
    struct SetHeader: Interceptor {
        let name: String
        let value: String
        func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
            var request = request
            request.setValue(value, forHTTPHeaderField: name)
            return try await next(request)
        }
    }
}

/// The guard itself must be able to fail: a leak and an unwatched test are both reported.
@Suite("Secret guard self-test")
struct SecretGuardSelfTests {
    @Test func aLeakedSecretIsReported() {
        let guardian = SecretGuard()
        let logger = CapturingNetworkLogger()
        logger.log(
            NetworkLogEntry(level: .info, event: .response, requestID: RequestID(), summary: "Authorization: Bearer SECRET-TOKEN")
        )
        guardian.watch(logger: logger, har: HARRecorder(), metrics: CapturingMetricsSink())
        withKnownIssue { guardian.verify(sourceLocation: #_sourceLocation) }
    }

    @Test func aTestThatLoggedNothingIsReported() {
        withKnownIssue { SecretGuard().verify(sourceLocation: #_sourceLocation) }
    }

    @Test func cleanOutputPasses() {
        let guardian = SecretGuard()
        let logger = CapturingNetworkLogger()
        logger.log(
            NetworkLogEntry(level: .info, event: .response, requestID: RequestID(), summary: "Authorization: Bearer <redacted>"))
        guardian.watch(logger: logger, har: HARRecorder(), metrics: CapturingMetricsSink())
        guardian.verify(sourceLocation: #_sourceLocation)
    }
}
