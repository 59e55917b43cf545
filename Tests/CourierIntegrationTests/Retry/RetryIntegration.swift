import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// The retry and idempotency integration tests against the reference server.
enum RetryIntegrationTests {}

/// A client in a fresh namespace with the pipeline RequestID → Retry → Idempotency.
struct RetrySession {
    let client: APIClient
    let namespace: String

    static func start(clock: some Clock<Duration> = TestClock(), random: Double = 0.5) throws -> RetrySession {
        let (client, namespace) = try TestServers.apiClient(namespace: TestServers.makeNamespace("retry")) {
            $0.interceptors = [
                RequestIDInterceptor(), RetryInterceptor(clock: clock, random: { random }), IdempotencyInterceptor(),
            ]
        }
        return RetrySession(client: client, namespace: namespace)
    }

    /// Appends `faults` to the plan for `method path`.
    func inject(_ method: String, _ path: String, _ faults: [[String: Any]]) async throws {
        let (status, data) = try await TestServers.control(
            "POST", "_faults", namespace: namespace, json: ["method": method, "path": path, "faults": faults])
        #expect(status == 200, "\(String(decoding: data, as: UTF8.self))")
    }

    func stats() async throws -> ServerStats {
        ServerStats(try await TestServers.stats(namespace: namespace))
    }

    /// The `Idempotency-Key` header of every request the server logged for `path`, in order
    /// (`nil` where a request had none).
    func idempotencyKeysSent(path: String) async throws -> [String?] {
        var components = URLComponents(
            url: try TestServers.apiURL().appendingPathComponent("ns").appendingPathComponent(namespace)
                .appendingPathComponent("_requests"),
            resolvingAgainstBaseURL: false)
        components?.queryItems = [URLQueryItem(name: "path", value: path)]
        guard let url = components?.url else { throw URLError(.badURL) }
        let (data, _) = try await URLSession.shared.data(from: url)
        struct Entry: Decodable { var headers: [String: String] }
        struct Log: Decodable { var requests: [Entry] }
        return try JSONDecoder().decode(Log.self, from: data).requests.map { entry in
            entry.headers.first { $0.key.caseInsensitiveCompare("Idempotency-Key") == .orderedSame }?.value
        }
    }

    /// `GET /items` returning the raw response.
    static let items = Request<HTTPResponse>(method: .get, path: "/items") { response, _ in response }
}
