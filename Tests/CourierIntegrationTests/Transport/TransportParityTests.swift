import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
#if canImport(CourierCurl)
import CourierCurl
#endif

/// The same request fails the same way over every transport this platform has: the test makes
/// each transport itself (URLSession everywhere, libcurl on Linux), so it runs in the URLSession
/// pass of `scripts/test` only.
@Suite("one failure, one error on every transport", .enabled(if: !TestTransport.isCurl, "makes both transports itself"))
struct TransportParityTests {
    enum Kind: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case urlSession, curl
        var testDescription: String { rawValue }

        /// A fresh transport of this kind; `nil` where the platform has none.
        func make() -> (any Transport)? {
            switch self {
            case .urlSession: return URLSessionTransport()
            case .curl:
                #if canImport(CourierCurl)
                return CurlTransport()
                #else
                return nil
                #endif
            }
        }
    }

    /// A client of a fresh namespace of the reference API over `kind`, or `nil` where the
    /// platform has no such transport.
    static func client(_ kind: Kind) throws -> (APIClient, String)? {
        guard let transport = kind.make() else { return nil }
        let namespace = TestServers.makeNamespace("parity")
        let client = APIClient(environment: try TestServers.apiEnvironment(namespace: namespace)) {
            $0.transport = transport
        }
        return (client, namespace)
    }

    static func invalidRequestReason(_ error: NetworkError?) -> String? {
        guard case .invalidRequest(let reason)? = error else {
            Issue.record("expected invalidRequest, got \(String(describing: error))")
            return nil
        }
        return reason
    }

    // MARK: Request head limits

    /// A 1 MiB header value failed with "Out of memory" (libcurl's CURLE_OUT_OF_MEMORY, under
    /// URLSession on Linux too), as a `transport` error telling the user to check the network.
    @Test("a header section over 64 KiB is invalidRequest naming the largest field; nothing is sent", arguments: Kind.allCases)
    func oversizedHeaderSection(_ kind: Kind) async throws {
        guard let (client, namespace) = try Self.client(kind) else { return }
        let oneHuge: HTTPHeaders = ["X-Big": String(repeating: "a", count: 1 << 20)]
        var many = HTTPHeaders()
        for index in 0..<20 { many.add("X-Part-\(index)", String(repeating: "b", count: 4000 + index)) }
        for (headers, largest) in [(oneHuge, "X-Big"), (many, "X-Part-19")] {
            let error = await CoreLive.networkError {
                try await client.send(Request<Void>.get("/echo/big", headers: headers).policy(.standard.with(\.retry, .none)))
            }
            let reason = try #require(Self.invalidRequestReason(error))
            #expect(reason.contains("'\(largest)'"), "\(kind): \(reason)")
            #expect(reason.contains("65536"), "\(kind): \(reason)")
            #expect(!reason.contains("aaaa") && !reason.contains("bbbb"), "never the value: \(reason)")
        }
        #expect(try await TestServers.requestLog(namespace: namespace, path: "/echo/big").isEmpty)
    }

    @Test("a URL over 64 KiB is invalidRequest; nothing is sent", arguments: Kind.allCases)
    func oversizedURL(_ kind: Kind) async throws {
        guard let (client, namespace) = try Self.client(kind) else { return }
        let error = await CoreLive.networkError {
            try await client.send(Request<Void>.get("/echo/long", query: ["q": String(repeating: "a", count: 1 << 20)]))
        }
        let reason = try #require(Self.invalidRequestReason(error))
        #expect(reason.contains("URL"), "\(kind): \(reason)")
        #expect(try await TestServers.requestLog(namespace: namespace, path: "/echo/long").isEmpty)
    }

    @Test("a transport called directly refuses the same head with the same error", arguments: Kind.allCases)
    func transportRefusesDirectly(_ kind: Kind) async throws {
        guard let transport = kind.make() else { return }
        var request = URLRequest(url: try TestServers.apiURL().appendingPathComponent("echo"))
        request.setValue(String(repeating: "a", count: 70_000), forHTTPHeaderField: "X-Big")
        let error = await #expect(throws: NetworkError.self) { try await transport.send(request) }
        #expect(Self.invalidRequestReason(error)?.contains("'X-Big'") == true)
    }

    @Test("fields just under the limit are sent", arguments: Kind.allCases)
    func headerSectionUnderTheLimitIsSent(_ kind: Kind) async throws {
        guard let (client, namespace) = try Self.client(kind) else { return }
        var headers = HTTPHeaders()
        // Under every field limit of the reference server (8,190 bytes), 56 KB in all.
        for index in 0..<8 { headers.add("X-Part-\(index)", String(repeating: "c", count: 7000)) }
        _ = try await client.send(Request<Echo>.get("/echo/fits", headers: headers))
        let log = try await TestServers.requestLog(namespace: namespace, path: "/echo/fits")
        #expect(log.count == 1)
    }

    // MARK: Timeouts

    /// What a timeout says does not depend on the transport: the app shows `userMessage` and logs
    /// `description`, so the same timeout gives the same error value and the same words.
    @Test("a deadline reached before the head is timedOut(nil) with the same words on every transport")
    func deadlineBeforeTheHead() async throws {
        var seen: [String] = []
        for kind in Kind.allCases {
            guard let (client, _) = try Self.client(kind) else { continue }
            let policy = EndpointPolicy.standard.with(\.deadline, .seconds(1)).with(\.retry, .none)
            let error = await CoreLive.networkError {
                try await client.send(Request<Void>.get("/slow", query: ["seconds": "4"]).policy(policy))
            }
            guard let error, case .timedOut(nil) = error else {
                Issue.record("\(kind): expected timedOut(nil), got \(String(describing: error))")
                continue
            }
            seen.append("\(error.description) | \(error.userMessage)")
        }
        #expect(Set(seen).count == 1, "\(seen)")
    }

    @Test("a streamed body silent for its idle timeout fails with the same error and words on every transport")
    func silentStreamedBody() async throws {
        var seen: [String] = []
        for kind in Kind.allCases {
            guard let (client, _) = try Self.client(kind) else { continue }
            let streamed = try await client.stream(
                Request<Data>.get("/drip", query: ["bytes": "100", "seconds": "8", "chunks": "2"]),
                options: StreamingOptions(idleTimeout: .seconds(1)))
            do {
                for try await _ in streamed.body {}
                Issue.record("\(kind): the body ended without an error")
            } catch let error as NetworkError {
                #expect(error.kind == .timedOut, "\(kind): \(error)")
                seen.append("\(error) | \(error.userMessage)")
            }
        }
        #expect(Set(seen).count == 1, "\(seen)")
    }
}
