import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import Testing

/// A kept-alive connection that dies after the server read a whole request, before it answered:
/// libcurl (under `CurlTransport`, and under URLSession on Linux) reconnects and sends the request
/// again on its own. A request that is not idempotent (RFC 9110 §9.2.2) and carries no
/// `Idempotency-Key` must arrive at most once, and every arrival must carry the whole body.
///
/// The server (TestServer/routes_resend.py) answers `/warm`, then reads the `/drop` request on the
/// reused connection and closes it without answering; it counts arrivals and body bytes per id.
@Suite("Transport: no resend below Courier after a lost kept-alive connection")
struct ResendBelowCourierTests {
    /// One arrival as the server saw it.
    struct Arrival: Decodable {
        var method: String
        var bodyBytes: Int
        var sha256: String
        var complete: Bool
        var reused: Bool
        var contentLength: String?
        var chunked: Bool
    }

    /// The body kinds a request can have.
    enum BodyKind: String, CaseIterable, CustomTestStringConvertible {
        case none, data, file, factory, oneShot
        var testDescription: String { rawValue }
    }

    static let payload = Data((0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 31) })

    /// The base URL of the resend listener.
    static func listenerURL() async throws -> URL {
        let url = try TestServers.apiURL().appendingPathComponent("_resend")
        let (data, _) = try await URLSession.shared.data(from: url)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let port = try #require(object["port"] as? Int)
        return try #require(URL(string: "http://127.0.0.1:\(port)"))
    }

    static func arrivals(id: String) async throws -> [Arrival] {
        var components = try #require(
            URLComponents(url: TestServers.apiURL().appendingPathComponent("_resend/arrivals"), resolvingAgainstBaseURL: false))
        components.queryItems = [URLQueryItem(name: "id", value: id)]
        let (data, _) = try await URLSession.shared.data(from: try #require(components.url))
        struct Reply: Decodable { var arrivals: [Arrival] }
        return try JSONDecoder().decode(Reply.self, from: data).arrivals
    }

    /// The body of one request of `kind`; `file` is where a file body lives.
    static func body(_ kind: BodyKind, file: URL) -> RequestBody {
        switch kind {
        case .none: return .none
        case .data: return .data(payload, contentType: "application/octet-stream")
        case .file: return .stream(.file(file), contentType: "application/octet-stream")
        case .factory:
            return .stream(
                .factory(length: payload.count) { InputStream(data: payload) }, contentType: "application/octet-stream")
        case .oneShot:
            return .stream(.once(InputStream(data: payload), length: payload.count), contentType: "application/octet-stream")
        }
    }

    struct Outcome {
        var arrivals: [Arrival]
        var error: (any Error)?
    }

    /// Warms a connection with `GET /warm`, then sends `method /drop` with `kind` on it.
    static func run(_ method: HTTPMethod, _ kind: BodyKind, key: String? = nil) async throws -> Outcome {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-resend-\(UUID().uuidString)")
        try payload.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let base = try await listenerURL()
        let client = APIClient(environment: APIEnvironment(name: "resend", baseURL: base)) { configuration in
            TestTransport.configure(&configuration)
        }
        let policy = EndpointPolicy.standard.with(\.retry, .none).with(\.deadline, .seconds(60))
        _ = try await client.send(Request<Data>(method: .get, path: "/warm").policy(policy))
        let id = UUID().uuidString
        var headers = HTTPHeaders()
        if let key { headers.add("Idempotency-Key", key) }
        let request = Request<Data>(
            method: method, path: "/drop", query: ["id": id], headers: headers, body: body(kind, file: file)
        ).policy(policy)
        var failure: (any Error)?
        do {
            _ = try await client.send(request)
        } catch {
            failure = error
        }
        return Outcome(arrivals: try await arrivals(id: id), error: failure)
    }

    static func urlErrorCode(_ error: (any Error)?) -> URLError.Code? {
        switch error as? NetworkError {
        case .transport(let error)?, .offline(let error)?: return error.code
        default: return nil
        }
    }

    /// The last arrival on the reused connection was dropped unanswered: the caller must learn the
    /// connection was lost. On a connection of its own (URLSession on Linux sends such requests so)
    /// it was answered: the caller gets the answer.
    static func expectOutcome(_ outcome: Outcome, _ label: String) {
        // One line per case in the test log: the server-side figures behind the expectations.
        let figures = outcome.arrivals.map { "\($0.bodyBytes)B\($0.reused ? " reused" : " fresh")" }
        let line =
            "resend figures: \(label): \(outcome.arrivals.count) arrivals [\(figures.joined(separator: ", "))], "
            + "error \(urlErrorCode(outcome.error).map { "\($0.rawValue)" } ?? (outcome.error == nil ? "none" : "other"))\n"
        FileHandle.standardError.write(Data(line.utf8))
        guard let last = outcome.arrivals.last else { return }
        if last.reused {
            #expect(urlErrorCode(outcome.error) == .networkConnectionLost, "\(label): \(String(describing: outcome.error))")
        } else {
            #expect(outcome.error == nil, "\(label): \(String(describing: outcome.error))")
        }
    }

    static func expectedBytes(_ kind: BodyKind) -> Int { kind == .none ? 0 : payload.count }

    @Test(
        "an unsafe request without a key arrives once and whole; dropped on a reused connection, it fails as networkConnectionLost",
        arguments: [HTTPMethod.post, .patch], BodyKind.allCases)
    func unsafeUnkeyedArrivesOnce(method: HTTPMethod, kind: BodyKind) async throws {
        let outcome = try await Self.run(method, kind)
        let label = "\(TestTransport.name) \(method.rawValue) \(kind.rawValue)"
        #expect(outcome.arrivals.count == 1, "\(label): \(outcome.arrivals.count) arrivals")
        for arrival in outcome.arrivals {
            #expect(arrival.complete && arrival.bodyBytes == Self.expectedBytes(kind), "\(label): \(arrival)")
        }
        Self.expectOutcome(outcome, label)
    }

    @Test(
        "a keyed or idempotent request may be resent, always with the whole body",
        arguments: [(HTTPMethod.post, true), (.put, false), (.delete, false)], BodyKind.allCases)
    func replayableArrivesWhole(request: (HTTPMethod, Bool), kind: BodyKind) async throws {
        let (method, keyed) = request
        let outcome = try await Self.run(method, kind, key: keyed ? UUID().uuidString : nil)
        let label = "\(TestTransport.name) \(method.rawValue)\(keyed ? " keyed" : "") \(kind.rawValue)"
        #expect((1...2).contains(outcome.arrivals.count), "\(label): \(outcome.arrivals.count) arrivals")
        for arrival in outcome.arrivals {
            #expect(arrival.complete && arrival.bodyBytes == Self.expectedBytes(kind), "\(label): \(arrival)")
        }
        // Resent below Courier only on a fresh connection, after the reused one was lost.
        if outcome.arrivals.count == 2 {
            #expect(outcome.arrivals[0].reused && !outcome.arrivals[1].reused, "\(label)")
        }
        Self.expectOutcome(outcome, label)
    }
}
