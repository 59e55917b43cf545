import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// Issue 9, items 7–11: multi-value headers, text bodies, numbers that do not fit, base URLs,
/// path segments.
@Suite("HTTP semantics: headers, bodies and URLs")
struct HeadersBodiesAndURLTests {
    static func bytes<T: Decodable & Sendable>(_ type: T.Type, hex: String, contentType: String?) -> Request<T> {
        var query: [URLQueryItem] = [URLQueryItem(name: "hex", value: hex)]
        if let contentType { query.append(URLQueryItem(name: "type", value: contentType)) }
        return Request<T>(method: .get, path: "/bytes", query: Query(query))
    }

    // MARK: 7. Multi-value headers

    @Test("every Set-Cookie field line is available separately, in order, Expires commas intact")
    func setCookieFieldsStaySeparate() async throws {
        let (client, _) = try TestServers.apiClient()
        let response = try await client.send(Request<HTTPResponse>.raw(.get, "/set-cookies"))
        struct Sent: Decodable { var cookies: [String] }
        let sent = try JSONDecoder().decode(Sent.self, from: response.data)
        #expect(sent.cookies.count == 4)
        #expect(response.headers.values(for: "set-cookie") == sent.cookies)
        #expect(response.headers["Set-Cookie"] == sent.cookies.first)
        #expect(response.headers["X-List"] == "one, two")  // list-based fields stay combinable
    }

    // MARK: 8. Text bodies

    @Test(
        "text honours the charset: case-insensitive, quoted, BOM dropped, UTF-8 by default",
        arguments: [
            ("636166e9", "text/plain; charset=ISO-8859-1", "café"),
            ("636166e9", #"text/plain; CHARSET="iso-8859-1""#, "café"),
            ("efbbbf636166c3a9", "text/plain", "café"),
            ("636166c3a9", nil, "café"),
            ("fffe630061006600e900", "text/plain; charset=utf-16", "café"),
            ("63616683", "text/plain; charset=windows-1252", "caf\u{0192}"),
        ] as [(String, String?, String)])
    func textHonoursCharset(_ hex: String, _ contentType: String?, _ expected: String) async throws {
        let (client, _) = try TestServers.apiClient()
        #expect(try await client.send(Self.bytes(String.self, hex: hex, contentType: contentType)) == expected)
    }

    @Test(
        "an unknown charset or bytes invalid in the charset is a typed error, never mojibake",
        arguments: [("636166e9", "text/plain; charset=x-klingon"), ("636166e9", "text/plain; charset=utf-8")])
    func unknownCharsetIsTypedError(_ hex: String, _ contentType: String) async throws {
        let (client, _) = try TestServers.apiClient()
        do {
            _ = try await client.send(Self.bytes(String.self, hex: hex, contentType: contentType))
            Issue.record("expected a decoding error")
        } catch NetworkError.decoding(let failure) {
            #expect(failure.underlying is TextDecodingError, "\(failure.underlying)")
        }
    }

    @Test("a JSON body with a UTF-8 BOM decodes; a JSON string response is still its string value")
    func jsonBOMAndJSONString() async throws {
        let (client, _) = try TestServers.apiClient()
        struct Value: Decodable, Sendable { var id: Int }
        let bom = try await client.send(
            Self.bytes(Value.self, hex: "efbbbf" + hex(#"{"id":7}"#), contentType: "application/json"))
        #expect(bom.id == 7)
        let string = try await client.send(Self.bytes(String.self, hex: hex(#""caf\u00e9""#), contentType: "application/json"))
        #expect(string == "café")
    }

    // MARK: 9. Numbers that do not fit

    @Test(
        "a number that does not fit names its key path and never claims the JSON is invalid",
        arguments: [
            (#"{"id":9223372036854775808}"#, "id"),
            (#"{"id":-9223372036854775809}"#, "id"),
            (#"{"id":12.5}"#, "id"),
            (#"{"id":1e400}"#, "id"),
            (#"{"items":[{"id":1,"price":2.5},{"id":99999999999999999999,"price":1e2}]}"#, "items[1].id"),
        ])
    func numberOutOfRange(_ json: String, _ path: String) async throws {
        struct Item: Decodable, Sendable {
            var id: Int64
            var price: Double?
        }
        struct Wrapper: Decodable, Sendable { var items: [Item] }
        let (client, _) = try TestServers.apiClient()
        do {
            if json.contains("items") {
                _ = try await client.send(Self.bytes(Wrapper.self, hex: hex(json), contentType: "application/json"))
            } else {
                _ = try await client.send(Self.bytes(Item.self, hex: hex(json), contentType: "application/json"))
            }
            Issue.record("expected a decoding error")
        } catch NetworkError.decoding(let failure) {
            #expect(failure.codingPath == path)
            #expect(failure.kind == .typeMismatch)
            #expect(!failure.description.contains("not valid JSON"), "\(failure)")
            #expect(failure.description.contains("does not fit"), "\(failure)")
        }
    }

    // MARK: 10. Base URL with a path and a query

    @Test("an empty endpoint path adds nothing; the base query is kept byte-for-byte and extended")
    func baseURLWithPathAndQuery() async throws {
        let namespace = TestServers.makeNamespace("base")
        let base = try #require(
            URL(string: try TestServers.apiURL().absoluteString + "/ns/\(namespace)/echo/dl/obj?sig=abc%2B1&x=%7E"))
        let client = APIClient(environment: APIEnvironment(name: "signed", baseURL: base), configure: TestTransport.configure)
        let plain = try await client.send(Request<Echo>.get(""))
        #expect(plain.rawPath == "/ns/\(namespace)/echo/dl/obj")
        #expect(plain.rawQuery == "sig=abc%2B1&x=%7E")
        let extended = try await client.send(Request<Echo>.get("", query: ["part": "1 2"]))
        #expect(extended.rawPath == "/ns/\(namespace)/echo/dl/obj")
        #expect(extended.rawQuery == "sig=abc%2B1&x=%7E&part=1%202")
        let child = try await client.send(Request<Echo>.get("/meta"))
        #expect(child.rawPath == "/ns/\(namespace)/echo/dl/obj/meta")
        #expect(child.rawQuery == "sig=abc%2B1&x=%7E")
    }

    // MARK: 11. Values in path segments

    @Test(
        "a path value arrives as exactly one segment that decodes to the value",
        arguments: [
            "a/b", "../admin", "100%", "a%2Fb", "?x=1#frag", "café au lait", "semi;colon+plus", "日本語", "[v6]", "@:!$&'()*,=",
        ])
    func pathValueIsOneSegment(_ value: String) async throws {
        let (client, _) = try TestServers.apiClient()
        struct Segments: Decodable, Sendable { var segments: [String] }
        let result = try await client.send(Request<Segments>.get("/segments/files/{name}/meta").pathValue("name", value))
        #expect(result.segments == ["files", value, "meta"])
    }

    @Test(
        "a path value that cannot be one segment, or a missing placeholder value, is refused before sending",
        arguments: [("", "name"), (".", "name"), ("..", "name"), ("x", "other")])
    func invalidPathValues(_ value: String, _ name: String) async throws {
        let (client, namespace) = try TestServers.apiClient()
        do {
            _ = try await client.send(Request<Echo>.get("/echo/{name}").pathValue(name, value))
            Issue.record("expected invalidRequest")
        } catch let error as NetworkError {
            #expect(error.kind == .invalidRequest, "\(error)")
        }
        #expect(ServerStats(try await TestServers.stats(namespace: namespace)).int("totalRequests") == 0)
    }
}

private func hex(_ text: String) -> String {
    text.utf8.map { String(format: "%02x", $0) }.joined()
}
