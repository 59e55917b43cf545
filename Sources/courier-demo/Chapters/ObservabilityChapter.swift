import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier

/// Sends every entry to several loggers (inline summary lines and the full file log).
struct FanOutLogger: NetworkLogger {
    let loggers: [any NetworkLogger]
    var minimumLevel: NetworkLogLevel { loggers.map(\.minimumLevel).min() ?? .debug }
    func log(_ entry: NetworkLogEntry) {
        for logger in loggers where entry.level >= logger.minimumLevel { logger.log(entry) }
    }
}

/// The demo's observability wiring: every client logs through the redacting logger at debug level
/// into `.build/courier-demo.log` (and, with `--verbose`, one line per entry inline on the
/// screen), records a HAR file of the whole run, and counts one metrics event per call.
///
/// Wiring (in `Demo.makeClient`, after the chapter's own `configure`):
/// ```swift
/// APIClient(environment: environment) { configuration in
///     configure(&configuration)
///     DemoObservability.shared.install(into: &configuration)
/// }
/// ```
/// and at the end of `main.swift`: `try DemoObservability.shared.finish()`, which writes the HAR
/// file and prints the metrics summary.
final class DemoObservability: Sendable {
    /// The one instance of the run.
    static let shared = DemoObservability()

    /// The redacting log at debug level: the full entries (redacted URL, headers, body previews)
    /// in ``logURL``, and with `--verbose` one line per entry inline on the screen.
    let logger: any NetworkLogger

    /// Where the full debug log goes: `.build/courier-demo.log` under the current directory.
    static var logURL: URL {
        URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
            .appendingPathComponent(".build").appendingPathComponent("courier-demo.log")
    }

    private init() {
        let inline: [any NetworkLogger] = Demo.verbose ? [ScreenLogger()] : []
        let url = Self.logURL
        try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        if FileManager.default.createFile(atPath: url.path, contents: nil),
            let handle = try? FileHandle(forWritingTo: url)
        {
            logger = FanOutLogger(loggers: inline + [ConsoleNetworkLogger(stream: .file(handle), minimumLevel: .debug)])
        } else {
            logger = FanOutLogger(loggers: inline)
        }
    }
    /// Every exchange of the run, for the HAR file.
    let har = HARRecorder()
    /// One event per call.
    let metrics = DemoMetrics()

    /// Where the HAR file goes: `$COURIER_DEMO_HAR`, else `.build/courier-demo.har` under the
    /// current directory (the repository root when run through scripts/demo).
    var harURL: URL {
        if let path = ProcessInfo.processInfo.environment["COURIER_DEMO_HAR"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
            .appendingPathComponent(".build").appendingPathComponent("courier-demo.har")
    }

    /// Adds logging (per call, right after the request-ID interceptor) and metrics to a client's
    /// pipeline. Does nothing when the pipeline already has a ``LoggingInterceptor``, so calling it
    /// twice is harmless.
    func install(into configuration: inout APIClient.Configuration) {
        guard !configuration.interceptors.contains(where: { $0 is LoggingInterceptor }) else { return }
        let position = configuration.interceptors.firstIndex { $0 is RequestIDInterceptor }.map { $0 + 1 } ?? 0
        configuration.interceptors.insert(
            contentsOf: [
                LoggingInterceptor(logger: logger, recorders: [har]),
                MetricsInterceptor(sink: metrics),
            ] as [any Interceptor], at: position)
    }

    /// Writes the HAR file of the run and prints where it is and what the metrics say.
    /// - Throws: The file system's error when the file cannot be written.
    func finish() throws {
        let url = harURL
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try har.write(to: url)
        let screen = Screen.shared
        screen.line("\nNetwork log: \(har.exchanges.count) exchanges written to \(url.path) (HAR 1.2, redacted);")
        screen.line("  full debug log (redacted headers and body previews) in \(Self.logURL.path)")
        for line in metrics.summary() { screen.line("  \(line)") }
    }
}

/// Collects the demo's metrics events and summarises them per endpoint.
final class DemoMetrics: NetworkMetricsSink {
    private let events = Locked<[NetworkMetricsEvent]>([])

    func record(_ event: NetworkMetricsEvent) {
        events.withLock { $0.append(event) }
    }

    /// All events so far.
    var all: [NetworkMetricsEvent] { events.current }

    /// The run in a few lines: calls, retries and failures, and the body bytes of streamed calls
    /// (counted as they were read); with `--verbose`, one line per `METHOD /template` as well.
    func summary() -> [String] {
        let events = all
        let retries = events.reduce(0) { $0 + $1.retryCount }
        let failures = events.filter { $0.errorKind != nil }.count
        var lines = ["metrics: \(events.count) calls, \(retries) retries, \(failures) failed or cancelled"]
        let streamed = Dictionary(grouping: events.filter { $0.responseBodyDuration != nil }) {
            "\($0.method) \($0.pathTemplate)"
        }
        let bodies = streamed.keys.sorted().map { key in
            let bytes = streamed[key, default: []].reduce(Int64(0)) { $0 + Int64($1.responseBodyBytes ?? 0) }
            return "\(key) \(bytes < 1 << 20 ? "\(bytes) B" : "\(mebibytes(bytes)) MiB")"
        }
        if !bodies.isEmpty { lines.append("streamed bodies, bytes read: " + bodies.joined(separator: ", ")) }
        guard Demo.verbose else { return lines }
        let grouped = Dictionary(grouping: events) { "\($0.method) \($0.pathTemplate)" }
        return lines
            + grouped.keys.sorted().compactMap { key in
                guard let events = grouped[key] else { return nil }
                let durations = events.map(\.duration).sorted()
                let median = durations[durations.count / 2]
                let retries = events.reduce(0) { $0 + $1.retryCount }
                let failures = events.filter { $0.errorKind != nil }.count
                return "\(key): \(events.count) call\(events.count == 1 ? "" : "s"), "
                    + "\(retries) retr\(retries == 1 ? "y" : "ies"), \(failures) failed, median "
                    + median.formatted(.units(allowed: [.milliseconds], fractionalPart: .show(length: 1)))
            }
    }
}

/// The observability and security chapter: what the redacting log shows of a call full of
/// secrets, a cURL command to reproduce it, one metrics event per call across a retry, logout
/// clearing the account's cookies, and certificate pinning refusing what it cannot check.
func runObservabilityChapter(_ demo: Demo) async throws {
    demo.chapter("Observability and security: redacted logs, cURL, metrics, logout, pinning")
    let observability = DemoObservability.shared
    let client = demo.makeClient { configuration in
        configuration.interceptors = [RequestIDInterceptor(), RetryInterceptor()]
        observability.install(into: &configuration)
    }

    // 1. A sign-in call carrying every kind of secret; the log above/below shows it redacted.
    demo.say("POST /echo with a bearer token, a session cookie, an API key in the query and a password in the body:")
    struct Credentials: Encodable, Sendable {
        let user: String
        let password: String
    }
    let token = "demo-\(UUID().uuidString)"
    var login = Request<ObservabilityDemo.EchoedRequest>.post(
        "/echo", body: Credentials(user: "alice", password: "correct horse battery staple"),
        query: ["api_key": "k-\(UUID().uuidString.prefix(8))"]
    )
    .header("Authorization", "Bearer \(token)")
    .header("Cookie", "sid=\(UUID().uuidString)")
    .policy(EndpointPolicy.standard.with(\.logging, .debugSafe))
    login.pathTemplate = "/echo"
    let sent = try await client.response(for: login)
    demo.say(
        "server received the real token: \(sent.value.headers.first { $0.key.lowercased() == "authorization" }?.value == "Bearer \(token)")"
            + "; the log, the snapshot and the HAR file show only `Bearer <redacted>`")
    if let snapshot = sent.context.requestRecord {
        demo.say("reproduce it (redacted):")
        for line in CURLCommand(snapshot).text.split(separator: "\n") { demo.say("  \(line)") }
    }

    // 2. Metrics: one event per call, even when a 503 makes the retry interceptor try twice.
    try await ObservabilityDemo.queueFault(demo, path: "/items", method: "GET", status: 503)
    let response = try await client.response(for: Request<Data>.get("/items"))
    if let event = observability.metrics.all.last(where: { $0.requestID == response.context.requestID }) {
        demo.say(
            "GET /items after one 503 → metrics event: status \(event.statusCode.map(String.init) ?? "none"), "
                + "\(event.retryCount) retry, \(event.responseBodyBytes ?? 0) bytes, "
                + "phase timings \(event.taskTimings == nil ? "absent (Linux URLSession delivers none)" : "present")")
    }

    // 3. Logout: the account's cookies go with it.
    _ = try await client.send(Request<HTTPResponse>.raw(.get, "/cookies/set", query: ["sid": UUID().uuidString]))
    let before = try await client.send(Request<ObservabilityDemo.EchoedCookies>.get("/cookies"))
    try await client.resetSession()
    let after = try await client.send(Request<ObservabilityDemo.EchoedCookies>.get("/cookies"))
    demo.say("cookies sent before logout: \(before.cookies.keys.sorted()); after resetSession(): \(after.cookies.keys.sorted())")

    // 4. Pinning: a configuration without a backup pin is refused; a pinned host that cannot be
    //    checked is refused rather than reached unpinned.
    do {
        _ = try PinningPolicy(pins: ["api.example.com": ["n9wAWgmBsYfvyXPWyaIAuryh55GSNUvmk3qvvDcFFaM="]])
    } catch {
        demo.say("pinning with one pin → \(error)")
    }
    let host = demo.serverURL.host ?? "127.0.0.1"
    let policy = try PinningPolicy(pins: [
        host: [
            "n9wAWgmBsYfvyXPWyaIAuryh55GSNUvmk3qvvDcFFaM=", "mt6CLBG7Uu5u3sdtY83KB03FYUxMEaEHh0q+IJmBHbo=",
        ]
    ])
    let pinned = demo.makeClient { $0.transport = PinningTransport(policy: policy) }
    do {
        _ = try await pinned.send(Request<HTTPResponse>.raw(.get, "/items"))
        demo.say("pinned host reached?! (unexpected)")
    } catch let error as NetworkError {
        demo.say("pinned \(host) over plain HTTP → \(error.pinningFailure.map(String.init(describing:)) ?? error.description)")
    }
    demo.say("HAR so far: \(observability.har.exchanges.count) exchanges (written at the end of the run)")
}

/// Types and helpers of the observability chapter.
enum ObservabilityDemo {
    /// The parts of `/echo`'s answer the chapter reads.
    struct EchoedRequest: Decodable, Sendable {
        let headers: [String: String]
    }

    /// `/cookies`' answer.
    struct EchoedCookies: Decodable, Sendable {
        let cookies: [String: String]
    }

    /// Queues one fault answer (`status`) for the next matching request in the run's namespace.
    static func queueFault(_ demo: Demo, path: String, method: String, status: Int) async throws {
        var request = URLRequest(url: demo.environment.baseURL.appendingPathComponent("_faults"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: [
            "path": path, "method": method, "faults": [["status": status]],
        ])
        _ = try await URLSession.shared.data(for: request)
    }
}
