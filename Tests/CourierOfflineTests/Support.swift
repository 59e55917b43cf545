import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
#if canImport(CourierCurl)
import CourierCurl
#endif
import Courier
import CourierOffline

/// The reference server (started by scripts/test) and helpers for the offline tests.
enum OfflineServer {
    struct Missing: Error, CustomStringConvertible {
        var description: String { "COURIER_API_URL is not set: run the suite through scripts/test, which starts the servers" }
    }

    static func apiURL() throws -> URL {
        guard let text = ProcessInfo.processInfo.environment["COURIER_API_URL"], let url = URL(string: text) else {
            throw Missing()
        }
        return url
    }

    static func makeNamespace(_ prefix: String) -> String { "\(prefix)-\(UUID().uuidString.prefix(8).lowercased())" }

    static func baseURL(namespace: String) throws -> URL {
        try apiURL().appendingPathComponent("ns").appendingPathComponent(namespace)
    }

    /// An address where nothing listens (connection refused at once): port 1 on loopback.
    static let unreachable = APIEnvironment(name: "unreachable", baseURL: URL(string: "http://127.0.0.1:1")!)

    static func environment(namespace: String) throws -> APIEnvironment {
        APIEnvironment(name: "test-\(namespace)", baseURL: try baseURL(namespace: namespace))
    }

    /// A JSON request to the reference server in `namespace`; returns the status and the decoded body.
    @discardableResult
    static func control(
        _ method: String, _ path: String, namespace: String, json: Any? = nil
    ) async throws -> (Int, [String: Any]) {
        var url = try baseURL(namespace: namespace)
        for part in path.split(separator: "/") { url.appendPathComponent(String(part)) }
        var request = URLRequest(url: url)
        request.httpMethod = method
        if let json {
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, object)
    }

    /// What `GET /mutations` reports.
    struct Log: Decodable {
        struct Applied: Decodable {
            var seq: Int
            var key: String?
            var payload: [String: JSONValue]
            var entity: String?
            /// The request's query exactly as sent (percent-encoded), empty without one.
            var query: String?
        }
        var applied: [Applied]
        var deliveries: Int
        var replays: Int
        var mismatches: Int
        var byKey: [String: Int]
        var refusedWhileDown: Int
    }

    static func log(namespace: String) async throws -> Log {
        let (data, _) = try await URLSession.shared.data(
            from: try baseURL(namespace: namespace).appendingPathComponent("mutations"))
        return try JSONDecoder().decode(Log.self, from: data)
    }

    /// `GET /entities/{id}` → (version, value).
    static func entity(_ id: String, namespace: String) async throws -> (version: Int, value: JSONValue?) {
        let (status, body) = try await control("GET", "/entities/\(id)", namespace: namespace)
        #expect(status == 200)
        let data = try JSONSerialization.data(withJSONObject: body)
        struct Entity: Decodable {
            var version: Int
            var value: JSONValue?
        }
        let entity = try JSONDecoder().decode(Entity.self, from: data)
        return (entity.version, entity.value)
    }
}

/// A small JSON value for comparing payloads.
enum JSONValue: Decodable, Hashable {
    case number(Double)
    case string(String)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    var int: Int? { if case .number(let n) = self { return Int(n) } else { return nil } }
    var string: String? { if case .string(let s) = self { return s } else { return nil } }
}

/// Counts the attempts that reach the transport (innermost interceptor) whose path contains
/// `pathFragment`.
final class AttemptCounter: Interceptor {
    private let value = Locked(0)
    private let pathFragment: String
    init(pathFragment: String = "/mutations") { self.pathFragment = pathFragment }
    var capabilities: PipelineCapabilities { [] }
    var count: Int { value.current }

    func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
        if request.url?.path.contains(pathFragment) == true { value.withLock { $0 += 1 } }
        return try await next(request)
    }
}

/// A temporary directory for queue databases, removed by `cleanup()`.
struct TemporaryDirectory {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-offline-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    func cleanup() { try? FileManager.default.removeItem(at: url) }
}

/// Collects a queue's events in the background.
final class EventRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [MutationEvent] = []
    private var waiters:
        [(id: UUID, predicate: @Sendable ([MutationEvent]) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []
    private var task: Task<Void, Never>?

    init(_ queue: MutationQueue) async {
        let stream = await queue.events()
        task = Task { [weak self] in
            for await event in stream { self?.append(event) }
        }
    }

    private func append(_ event: MutationEvent) {
        lock.lock()
        storage.append(event)
        let events = storage
        var ready: [CheckedContinuation<Void, Never>] = []
        waiters.removeAll { waiter in
            guard waiter.predicate(events) else { return false }
            ready.append(waiter.continuation)
            return true
        }
        lock.unlock()
        for continuation in ready { continuation.resume() }
    }

    /// Resumes the waiter `id` if it still waits (its wait timed out).
    private func release(_ id: UUID) {
        lock.lock()
        let released = waiters.filter { $0.id == id }.map(\.continuation)
        waiters.removeAll { $0.id == id }
        lock.unlock()
        for continuation in released { continuation.resume() }
    }

    var events: [MutationEvent] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }

    /// Waits until `predicate` holds for the events seen so far (events are published before the
    /// call that caused them returns, so this only waits for the stream's hand-over). Gives up
    /// after 10 s (a safety net, not a synchronisation) and returns whether it held.
    func wait(until predicate: @escaping @Sendable ([MutationEvent]) -> Bool) async -> Bool {
        let id = UUID()
        let signal = Task {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                lock.lock()
                if predicate(storage) {
                    lock.unlock()
                    continuation.resume()
                } else {
                    waiters.append((id, predicate, continuation))
                    lock.unlock()
                }
            }
        }
        let timeout = Task {
            try? await Task.sleep(for: .seconds(10))
            return ()
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await signal.value }
            group.addTask { await timeout.value }
            await group.next()
            timeout.cancel()
            // After a timeout the signal still waits: release it, or the group never ends.
            release(id)
        }
        return predicate(events)
    }

    deinit { task?.cancel() }
}

func makeClient(
    _ environment: APIEnvironment, extra: [any Interceptor] = [], transport: OfflineTransport = .urlSession
)
    -> APIClient
{
    // The queue's own backoff is under test, on a test clock: the fleet-safety rules (budget and
    // breaker, which run on the retry interceptor's real clock) are off here and tested on their own.
    APIClient(environment: environment) {
        $0.interceptors = .standard(retry: RetryInterceptor(budget: nil, circuitBreaker: nil)) + extra
        #if canImport(CourierCurl)
        if transport == .curl { $0.transport = CurlTransport() }
        #endif
    }
}

/// The transport a fault test sends through: URLSession, and libcurl where CourierCurl builds
/// (a lost answer on a reused connection is each transport's own code path).
enum OfflineTransport: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case urlSession
    case curl

    static var allCases: [OfflineTransport] {
        #if canImport(CourierCurl)
        [.urlSession, .curl]
        #else
        [.urlSession]
        #endif
    }

    var testDescription: String { rawValue }
}
