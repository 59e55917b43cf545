import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// A gzip body of several members (RFC 1952 §2.2), zero-padded, or with bytes after its member
/// (`GET /hostile/gzip?shape=`, TestServer/routes_hostile.py), buffered and streamed.
///
/// CurlTransport decodes every member and skips zero padding on both paths (Courier inflates a
/// buffered body as it does a streamed one, each asked once); other bytes after a member are
/// `corruptContent`. URLSession on Linux decodes through libcurl, which takes one member
/// and refuses any byte after it: every shape is `corruptContent` there (never an unexplained -1).
@Suite("Gzip bodies of several members")
struct GzipMembersTests {
    static let members = Data("first member\nsecond member\nthird member\n".utf8)
    static let first = Data("first member\n".utf8)

    enum Delivery: String, CaseIterable, CustomTestStringConvertible {
        case buffered, streamed
        var testDescription: String { rawValue }
    }

    private static func gzips(_ namespace: String) async throws -> Int {
        let bucket = try await TestServers.stats(namespace: namespace)["hostile"] as? [String: Any] ?? [:]
        return bucket["gzips"] as? Int ?? 0
    }

    /// The body of `shape` as the caller gets it, and the bytes it got before an error.
    private static func fetch(_ shape: String, _ delivery: Delivery) async throws -> (Result<Data, NetworkError>, String) {
        let (client, namespace) = try TestServers.apiClient()
        let request = Request<Data>.get("/hostile/gzip", query: ["shape": shape])
        switch delivery {
        case .buffered:
            do {
                return (.success(try await client.send(request)), namespace)
            } catch let error as NetworkError {
                return (.failure(error), namespace)
            }
        case .streamed:
            let streamed = try await client.stream(request)
            var received = Data()
            do {
                for try await chunk in streamed.body { received.append(chunk) }
                return (.success(received), namespace)
            } catch let error as NetworkError {
                #expect(received == first.prefix(received.count), "bytes before the error: \(received)")
                return (.failure(error), namespace)
            }
        }
    }

    private static func expectCorrupt(_ result: Result<Data, NetworkError>) {
        switch result {
        case .success(let data):
            Issue.record("expected corruptContent, got \(String(decoding: data, as: UTF8.self).debugDescription)")
        case .failure(let error):
            guard case .undecodableResponse(let failure) = error else {
                Issue.record("expected undecodableResponse, got \(error)")
                return
            }
            #expect(failure.reason == .corruptContent, "\(failure)")
        }
    }

    /// Measured before: over CurlTransport a buffered body of three members failed with
    /// `URLError.unknown` (-1, libcurl's "Failed writing received data") and a streamed one
    /// arrived as its first member only, the others dropped without an error.
    @Test("every member arrives, in order", arguments: Delivery.allCases)
    func everyMemberArrives(_ delivery: Delivery) async throws {
        let (result, namespace) = try await Self.fetch("members", delivery)
        if TestTransport.isCurl {
            #expect(try result.get() == Self.members)
            // Before Courier inflated a buffered body itself, libcurl refused the second member and
            // the GET was asked once more undecoded (2 requests).
            #expect(try await Self.gzips(namespace) == 1)
        } else {
            #if canImport(FoundationNetworking)
            Self.expectCorrupt(result)
            #expect(try await Self.gzips(namespace) == 1)
            #else
            #expect(try result.get() == Self.members)
            #endif
        }
    }

    @Test("zero padding after the member is skipped", arguments: Delivery.allCases)
    func zeroPaddingIsSkipped(_ delivery: Delivery) async throws {
        let (result, namespace) = try await Self.fetch("padded", delivery)
        if TestTransport.isCurl {
            #expect(try result.get() == Self.first)
            #expect(try await Self.gzips(namespace) == 1)
        } else {
            #if canImport(FoundationNetworking)
            Self.expectCorrupt(result)
            #endif
        }
    }

    /// A buffered `POST` is never asked twice. Over CurlTransport Courier inflates its members
    /// (before: libcurl's refusal of the second member was its answer, `corruptContent`); URLSession
    /// on Linux still refuses them.
    @Test("a buffered POST's members arrive over CurlTransport, sent once")
    func bufferedPostIsNotAskedTwice() async throws {
        let (client, namespace) = try TestServers.apiClient()
        let result: Result<Data, NetworkError>
        do {
            result = .success(try await client.send(Request<Data>.post("/hostile/gzip", query: ["shape": "members"])))
        } catch let error as NetworkError {
            result = .failure(error)
        }
        if TestTransport.isCurl {
            #expect(try result.get() == Self.members)
        } else {
            #if canImport(FoundationNetworking)
            Self.expectCorrupt(result)
            #endif
        }
        #expect(try await Self.gzips(namespace) == 1)
    }

    /// Measured before: streamed over CurlTransport, "garbage!" after the member was ignored.
    @Test("bytes after the member that begin no member are corruptContent", arguments: Delivery.allCases)
    func garbageIsCorrupt(_ delivery: Delivery) async throws {
        let (result, namespace) = try await Self.fetch("garbage", delivery)
        Self.expectCorrupt(result)
        // Not retried by the call: the server would send the same bytes.
        #expect(try await Self.gzips(namespace) == 1)
    }
}
