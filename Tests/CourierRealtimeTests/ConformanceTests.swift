import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import CourierRealtime

/// Courier's RFC 6455 client over libcurl against TestServer/ws_conformance.py, which acts out the
/// Autobahn client sections 1–7 and 9, and 12–13 for permessage-deflate (RFC 7692), and judges each
/// case server-side (echoes — inflated with the window the client was given —, pongs, close code,
/// masking and shortest length encoding of every client frame, RSV1 only on compressed messages).
@Suite("RFC 6455 conformance (real server, libcurl)")
struct ConformanceTests {
    struct CaseInfo: Decodable {
        var id: String
        var section: Int
        var title: String
    }
    struct Result: Decodable {
        var passed: Bool
        var problems: [String]
        var section: Int
        var title: String
    }

    /// The echo client: sends every message back until the connection closes.
    private func echo(_ url: URL) async {
        var request = WebSocketRequest(url: url, maximumMessageSize: 8 << 20)
        request.connectTimeout = .seconds(30)
        request.compression = PerMessageDeflate()  // as WebSocketClient offers by default
        guard let connection = try? await RFC6455Transport.curl().connect(request) else { return }
        for await event in connection.events {
            if case .message(let message) = event { try? await connection.send(message) }
        }
    }

    @Test func autobahnClientSections() async throws {
        let base = try RealtimeServers.url("COURIER_WS_CONFORMANCE_URL")
        let http = URL(string: base.absoluteString.replacingOccurrences(of: "ws://", with: "http://"))!
        let (listing, _) = try await URLSession.shared.data(from: http.appendingPathComponent("_cases"))
        let cases = try JSONDecoder().decode([CaseInfo].self, from: listing)
        #expect(cases.count >= 100)
        #expect(cases.filter { $0.section == 12 }.count >= 30 && cases.filter { $0.section == 13 }.count >= 15)
        let namespace = RealtimeServers.namespace("conf")
        // Cases run 4 at a time; each ends with a close or the server's per-case timeout.
        await withTaskGroup(of: Void.self) { group in
            var index = 0
            for item in cases {
                if index >= 4 { await group.next() }
                index += 1
                group.addTask { await echo(base.appendingPathComponent("ns/\(namespace)/case/\(item.id)")) }
            }
        }
        let (data, _) = try await URLSession.shared.data(from: http.appendingPathComponent("ns/\(namespace)/_report"))
        let results = try JSONDecoder().decode([String: Result].self, from: data)
        var summary: [Int: (passed: Int, total: Int)] = [:]
        for item in cases {
            let result = results[item.id]
            summary[item.section, default: (0, 0)].total += 1
            if result?.passed == true { summary[item.section, default: (0, 0)].passed += 1 }
            #expect(result?.passed == true, "case \(item.id) \(item.title): \(result?.problems ?? ["no result"])")
        }
        let line = summary.keys.sorted().map { "§\($0) \(summary[$0]!.passed)/\(summary[$0]!.total)" }.joined(separator: ", ")
        print("RFC 6455 conformance (Autobahn client sections): \(line)")
    }
}
